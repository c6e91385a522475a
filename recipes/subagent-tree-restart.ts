/**
 * subagent-tree-restart: the host is killed (SIGKILL) while a parent, its subagent and a
 * grandchild all run a shell tool, and started again on the same data directory. The restarted
 * host closes the whole tree `failed: host restarted`, the deepest session first; each delegating
 * call it closes keeps its subagent's last message as `visibleOutput`. The app resumes the parent
 * session once, with `afterCursor` and a `childCursors` entry per subagent session (the last
 * viewCursor the first connection saw of each): the host replays the whole tree, leaves first,
 * so each subagent's terminal reaches the app before the terminal of the turn above it
 * (invariant 7).
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
  summary: "Host killed mid-tree, restarted: one resume of the parent with childCursors replays the tree failed: host restarted, leaves first",
  // Recorded from the reference host, a real SIGKILL and restart:
  // `npm run recipes -- --live --only subagent-tree-restart --record DIR` (two files, one per host).
  transcript: "subagent-tree-restart.jsonl",
  cannedCrash: true,
  liveModel: "subagent-tree-restart.json",
  timeoutMs: 60_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region track
    // The tree (every session's notifications reach the root client), the terminals in the order
    // they arrive, and what each turn last said (a subagent's message items).
    const tree = new TurnTree();
    const ended: TurnCompletedParams[] = [];
    const said = new Map<string, string>();
    const track = (client: MspClient) =>
      client.events.on("notification", (n) => {
        tree.observe(n);
        if (n.method === "turn/completed") ended.push(n.params as unknown as TurnCompletedParams);
        const item = n.params?.["item"] as { kind?: string; turnId?: string; text?: string } | undefined;
        if (n.method === "item/completed" && item?.kind === "message" && typeof item.text === "string") said.set(String(item.turnId), item.text);
      });
    track(msp);
    // #endregion track

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
    assert.deepEqual(
      subagents.map((t) => t.depth),
      [1, 2],
    );
    env.log(
      `host killed with ${subagents.length} subagents running; last viewCursor seen: ${[sessionId, ...subagents.map((s) => s.sessionId as string)]
        .map((id) => msp.lastViewCursor(id)?.replace(/^v:.*:/, "#"))
        .join(", ")} (parent, child, grandchild)`,
    );

    const again = await env.restartHost();
    track(again);
    // #region resume
    // After the restart: ONE resume, of the parent session, after the last cursor the first
    // connection saw of it, with the last cursor it saw of each subagent session (`msp` is that
    // first, now closed, client; `again` is connected to the restarted host). The host replays
    // what was missed of the whole tree, in the order it logged it: leaves first.
    const childCursors = Object.fromEntries(subagents.map((s) => [s.sessionId as string, msp.lastViewCursor(s.sessionId as string) as string]));
    const resumed = await again.command("session/resume", { sessionId, afterCursor: msp.lastViewCursor(sessionId), childCursors });
    await again.turns.terminalOf(turnId, { timeoutMs: 30_000 });
    // #endregion resume
    env.log(`one session/resume of the parent with ${Object.keys(childCursors).length} childCursors: replayed ${resumed.replayed}`);

    const deepestFirst = [...subagents].sort((a, b) => b.depth - a.depth);
    assert.deepEqual(
      ended.map((t) => t.turnId),
      [...deepestFirst.map((t) => t.turnId), turnId],
      "leaves first: grandchild, child, parent",
    );
    for (const t of [...deepestFirst, { turnId, depth: 0 }]) {
      const end = ended.find((e) => e.turnId === t.turnId);
      env.log(`${"  ".repeat(t.depth)}depth ${t.depth}: ${end?.terminal} "${end?.reason}" (${end === undefined ? "?" : describeTerminal(end)})`);
      assert.equal(end?.terminal, "failed");
      assert.equal(end.reason, TurnReasons.hostRestarted);
    }
    // Every tool call of the tree was closed by the restarted host; a delegating call keeps its
    // subagent's last message as its output.
    const calls = [turnId, ...deepestFirst.map((t) => t.turnId)].flatMap((id) => again.items.itemsOf(id)).filter((i) => i.kind === "toolCall");
    for (const call of calls) {
      assert.ok(call.kind === "toolCall");
      env.log(
        `${call.tool}${call.subagent === undefined ? "" : " (delegating)"}: ${call.status}, "${call.failureReason}", output ${JSON.stringify(call.visibleOutput)}`,
      );
      assert.equal(call.status, "failed");
      assert.equal(call.failureReason, TurnReasons.hostRestarted);
      if (call.subagent !== undefined) {
        const text = said.get(call.subagent.turnId);
        assert.ok(text !== undefined && text !== "", `the subagent of ${call.itemId} said something`);
        assert.equal(call.visibleOutput, text, "a delegating call keeps its subagent's last message");
      }
    }
    assert.equal(calls.length, 5, "three shells and two delegating calls");
    assert.equal(calls.filter((c) => c.kind === "toolCall" && c.subagent !== undefined).length, 2);
    await again.close();
  },
};
