/**
 * stop-a-subagent-tree: one Stop stops the whole tree. A parent turn delegates to two subagents,
 * one of which delegates again (a grandchild); all four turns run a shell tool. One `turn/cancel`
 * of the parent: the host stops the tree from the leaves up, each subagent turn ends `cancelled`
 * with cause `parent`, each delegating call keeps what its subagent wrote (`visibleOutput`), and
 * the parent's own terminal comes last (invariant 7). The app waits for that terminal only, and
 * shows "stopping N of M subagents…" from the stream alone with `TurnTree`.
 */
import assert from "node:assert/strict";
import type { LedgerItem, TurnCompletedParams } from "@muse-code/sdk";
import { TurnTree, describeTreeProgress, describeTerminal } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";
import { until } from "./until.js";

export const recipe: Recipe = {
  name: "stop-a-subagent-tree",
  summary: "One turn/cancel of a parent stops its subagents first (cause parent), their output kept; then the parent ends",
  // Recorded from the reference host: `npm run recipes -- --live --only stop-a-subagent-tree --record DIR`.
  transcript: "stop-a-subagent-tree.jsonl",
  liveModel: "stop-a-subagent-tree.json",
  timeoutMs: 40_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region tree
    // Fold every notification into the tree: which turns run below which, and which have ended.
    const tree = new TurnTree();
    const ended: TurnCompletedParams[] = []; // every turn/completed, in wire order
    let stopping: string | undefined = undefined; // the turn the user stopped, once they click Stop
    const shown: string[] = [];
    msp.events.on("notification", (n) => {
      if (n.method === "turn/completed") ended.push(n.params as unknown as TurnCompletedParams);
      if (!tree.observe(n) || stopping === undefined) return;
      const line = describeTreeProgress(tree.progressOf(stopping), { stopping: true });
      if (shown.at(-1) !== line) shown.push(line); // your status bar
    });
    // #endregion tree

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Check the release" }] });
    const { turnId } = await turn.accepted;
    const treeTurns = () => [turnId, ...tree.descendantsOf(turnId).map((t) => t.turnId)];
    const items = (): LedgerItem[] => treeTurns().flatMap((id) => msp.items.itemsOf(id));
    const runningShells = () => items().filter((i) => i.kind === "toolCall" && i.tool === "shell" && i.status === "inProgress" && i.visibleOutput !== "");
    // Every turn of the tree is mid-work: four shell tools printing.
    await until(msp, () => runningShells().length === 4, "four running shell tools, one per turn of the tree", 30_000);
    env.log(`running: ${describeTreeProgress(tree.progressOf(turnId))}`);

    // #region stop
    // The user clicks Stop: one turn/cancel, of the parent only. Then wait for the parent's own
    // terminal: by invariant 7 every subagent below it has ended before it.
    stopping = turnId;
    shown.push(describeTreeProgress(tree.progressOf(turnId), { stopping: true })); // "stopping 3 of 3 subagents…"
    const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 30_000 });
    const progress = tree.progressOf(turnId); // { started: 3, ended: 3, running: 0 }
    // #endregion stop

    if (shown.at(-1) !== describeTreeProgress(progress)) shown.push(describeTreeProgress(progress));
    env.log(`status bar: ${shown.join(" → ")}`);
    env.log(`parent: ${turnCompleted.terminal} (${describeTerminal(turnCompleted)}; Stop ${ack})`);
    assert.equal(ack, "accepted");
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.deepEqual(turnCompleted.cause, { kind: "user" }, "the turn the Stop named: cause user");
    assert.deepEqual(progress, { started: 3, ended: 3, running: 0 });
    assert.equal(shown[0], "stopping 3 of 3 subagents…");
    assert.equal(shown.at(-1), "all 3 subagents ended");

    // Leaves first: every subagent's turn/completed came before the parent's, the grandchild's
    // before its own parent's; each with cause parent.
    const order = ended.map((t) => t.turnId);
    assert.equal(order.at(-1), turnId, "the parent's terminal is the last");
    for (const sub of tree.descendantsOf(turnId)) {
      const end = ended.find((t) => t.turnId === sub.turnId);
      env.log(`${"  ".repeat(sub.depth)}depth ${sub.depth}: ${end?.terminal}, cause ${end?.cause?.kind} (${end === undefined ? "?" : describeTerminal(end)})`);
      assert.equal(end?.terminal, "cancelled");
      assert.deepEqual(end.cause, { kind: "parent" });
      const above = sub.parent?.turnId as string;
      assert.ok(order.indexOf(sub.turnId) < order.indexOf(above), `depth ${sub.depth} ended before the turn above it`);
    }
    assert.equal(tree.descendantsOf(turnId).filter((t) => t.depth === 2).length, 1, "one grandchild");

    // #region salvage
    // Each delegating call is cancelled ("subagent cancelled by its parent") and keeps what its
    // subagent wrote before the Stop: its last message so far.
    const everyItem = [turnId, ...tree.descendantsOf(turnId).map((t) => t.turnId)].flatMap((id) => msp.items.itemsOf(id));
    const delegating = everyItem.filter((i) => i.kind === "toolCall" && i.subagent !== undefined);
    const kept = delegating.map((call) => (call.kind === "toolCall" ? call.visibleOutput : ""));
    // kept: "Reading CHANGELOG.md.", "Building; a helper scans the lockfile.", "Scanning package-lock.json."
    // #endregion salvage
    assert.equal(delegating.length, 3);
    for (const call of delegating) {
      assert.ok(call.kind === "toolCall");
      env.log(`delegating call: ${call.status}, "${call.failureReason}", kept ${JSON.stringify(call.visibleOutput)}`);
      assert.equal(call.status, "cancelled");
      assert.equal(call.failureReason, "subagent cancelled by its parent");
    }
    assert.deepEqual([...kept].sort(), ["Building; a helper scans the lockfile.", "Reading CHANGELOG.md.", "Scanning package-lock.json."]);
    // Every shell tool of the tree was stopped mid-run, its output so far kept.
    const shells = items().filter((i) => i.kind === "toolCall" && i.tool === "shell");
    assert.equal(shells.length, 4);
    for (const shell of shells) assert.ok(shell.kind === "toolCall" && shell.status === "cancelled" && shell.visibleOutput !== "");
    await msp.close();
  },
};
