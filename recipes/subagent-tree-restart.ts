/**
 * subagent-tree-restart: the host is killed (SIGKILL) while a parent, its subagent and a
 * grandchild all run a shell tool, and started again on the same data directory. The restarted
 * host closes the whole tree `failed: host restarted`, the deepest session first. The app
 * resumes every session of the tree from the last viewCursor it saw of each, the deepest first,
 * so each subagent's terminal reaches it before the terminal of the turn above it (invariant 7),
 * and the tree it shows ends leaves first. (Today's reference host replays only the session a
 * `session/resume` names; MSP's planned `childCursors` will replay the tree in one resume.)
 */
import assert from "node:assert/strict";
import { MspError, TurnReasons, type MspClient, type TurnCompletedParams } from "@muse-code/sdk";
import { TurnTree, describeTerminal } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";
import { until } from "./until.js";

/**
 * The parent turn's commandId, chosen before sending (it is the turnId): the app persists it
 * first, so after the restart it knows which turn to look for.
 */
const TURN_COMMAND_ID = "0198f0b9-6072-7a01-8c01-000000000023";

export const recipe: Recipe = {
  name: "subagent-tree-restart",
  summary: "Host killed mid-tree, restarted: resume each session of the tree, deepest first; it ended failed: host restarted, leaves first",
  // Recorded from the reference host, a real SIGKILL and restart:
  // `npm run recipes -- --live --only subagent-tree-restart --record DIR` (two files, one per host).
  transcript: "subagent-tree-restart.jsonl",
  cannedCrash: true,
  liveModel: "subagent-tree-restart.json",
  timeoutMs: 60_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region cursors
    // One cursor per session of the tree: the last viewCursor seen of each. And the tree itself.
    const cursors = new Map<string, string>();
    const tree = new TurnTree();
    const ended: TurnCompletedParams[] = [];
    const track = (client: MspClient) =>
      client.events.on("notification", (n) => {
        const { sessionId: id, viewCursor } = n.params ?? {};
        if (typeof id === "string" && typeof viewCursor === "string") cursors.set(id, viewCursor);
        tree.observe(n);
        if (n.method === "turn/completed") ended.push(n.params as unknown as TurnCompletedParams);
      });
    track(msp);
    // #endregion cursors

    // The shell tools of the tree that have printed (read from the stream: a crash clears the
    // connection's own item ledger).
    const printing = new Set<string>();
    msp.events.on("notification", ({ method, params }) => {
      if (method === "item/delta" && params?.["field"] === "visibleOutput") printing.add(String(params["itemId"]));
    });
    const turn = msp.startTurn({ sessionId, commandId: TURN_COMMAND_ID, input: [{ type: "text", text: "Migrate the database" }] });
    turn.completed.catch(() => {}); // settles as connectionClosed below
    const { turnId } = await turn.accepted;
    await until(msp, () => printing.size === 3, "three running shell tools: the parent's, its subagent's, the grandchild's", 30_000);

    await env.crashHost(msp);
    const lost = await turn.completed.then(
      () => "ended",
      (error: unknown) => (MspError.is(error) && error.kind === "connectionClosed" ? "connectionClosed" : String(error)),
    );
    assert.equal(lost, "connectionClosed");
    const subagents = tree.descendantsOf(turnId);
    env.log(
      `host killed with ${subagents.length} subagents running (${[...cursors.values()].map((c) => c.slice(c.lastIndexOf(":") + 1)).join(", ")} notifications seen per session)`,
    );
    assert.deepEqual(
      subagents.map((t) => t.depth),
      [1, 2],
    );

    const again = await env.restartHost();
    track(again);
    // #region resume
    // After the restart: resume every session of the tree, the deepest first, each after its own
    // last cursor (`again` is the client connected to the restarted host). The host replays what
    // each missed: its turn closed "failed: host restarted".
    const deepestFirst = [...tree.descendantsOf(turnId)].sort((a, b) => b.depth - a.depth);
    for (const sub of [...deepestFirst, { sessionId, turnId }]) {
      await again.command("session/resume", { sessionId: sub.sessionId, afterCursor: cursors.get(sub.sessionId as string) });
      await again.turns.terminalOf(sub.turnId, { timeoutMs: 30_000 });
    }
    // #endregion resume

    const order = ended.map((t) => t.turnId);
    assert.deepEqual(order, [...deepestFirst.map((t) => t.turnId), turnId], "leaves first");
    for (const t of [...deepestFirst, { turnId, depth: 0 }]) {
      const end = ended.find((e) => e.turnId === t.turnId);
      env.log(`${"  ".repeat(t.depth)}depth ${t.depth}: ${end?.terminal} "${end?.reason}" (${end === undefined ? "?" : describeTerminal(end)})`);
      assert.equal(end?.terminal, "failed");
      assert.equal(end.reason, TurnReasons.hostRestarted);
    }
    // Every tool call of the tree, delegating calls included, was closed by the restarted host.
    const calls = [turnId, ...deepestFirst.map((t) => t.turnId)].flatMap((id) => again.items.itemsOf(id)).filter((i) => i.kind === "toolCall");
    for (const call of calls) {
      assert.ok(call.kind === "toolCall");
      env.log(`${call.tool}${call.subagent === undefined ? "" : " (delegating)"}: ${call.status}, "${call.failureReason}"`);
      assert.equal(call.status, "failed");
    }
    assert.equal(calls.length, 5, "three shells and two delegating calls");
    await again.close();
  },
};
