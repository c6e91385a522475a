/**
 * keep-inbox: a running turn and a queued one. Cancelling with keepInbox: true stops only
 * the running turn; the queued turn survives and later completes. Without keepInbox, the
 * cancel discards the queue, and each discarded turn gets its own cancelled terminal.
 */
import assert from "node:assert/strict";
import { TurnReasons } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

const say = (text: string) => [{ type: "text" as const, text }];

export const recipe: Recipe = {
  name: "keep-inbox",
  summary: "keepInbox: true keeps queued turns; without it, each discarded turn gets its own terminal",
  // Recorded from the reference host: `npm run recipes -- --live --only keep-inbox --record DIR`.
  transcript: "keep-inbox.jsonl",
  liveModel: "keep-inbox.json",
  async run(env) {
    // Part 1: keepInbox: true.
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const running = msp.startTurn({ sessionId, input: say("Plan the migration") });
    const { turnId, disposition } = await running.accepted;
    assert.equal(disposition, "started");
    const queued = msp.startTurn({ sessionId, input: say("Then summarise the changelog") });
    assert.equal((await queued.accepted).disposition, "queued");
    await env.midWork(msp, turnId); // its tool is running

    // #region keep
    // Stop only what is running; the queued turn stays in the inbox.
    const stopped = await running.cancel({ keepInbox: true, timeoutMs: 10_000 });
    const next = await queued.waitForTerminal({ timeoutMs: 30_000 });
    // #endregion keep

    env.log(`keepInbox: running turn "${stopped.turnCompleted.terminal}", queued turn then "${next.terminal}"`);
    assert.equal(stopped.turnCompleted.terminal, "cancelled");
    assert.equal(next.terminal, "completed", "the queued turn survived the cancel and ran");
    await msp.close();

    // Part 2: the default discards the queue.
    const msp2 = await env.connect();
    const sessionId2 = await env.session(msp2);
    const current = msp2.startTurn({ sessionId: sessionId2, input: say("Run the full test suite") });
    const currentId = (await current.accepted).turnId;
    const later = [
      msp2.startTurn({ sessionId: sessionId2, input: say("Then fix the first failure") }),
      msp2.startTurn({ sessionId: sessionId2, input: say("Then open a pull request") }),
    ];
    for (const turn of later) assert.equal((await turn.accepted).disposition, "queued");
    await env.midWork(msp2, currentId);

    // #region discard
    // A plain cancel discards queued work too. Every accepted turn still gets exactly one
    // turn/completed, so each queued turn's waiter settles with its own cancelled terminal.
    const { turnCompleted } = await current.cancel({ timeoutMs: 10_000 });
    const discarded = await Promise.all(later.map((turn) => turn.waitForTerminal({ timeoutMs: 10_000 })));
    // #endregion discard

    env.log(`default: running turn "${turnCompleted.terminal}", ${discarded.length} queued turns each "${discarded.map((t) => t.terminal).join('", "')}"`);
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.deepEqual(
      discarded.map((t) => t.turnId),
      later.map((turn) => turn.turnId),
      "each queued turn got its own terminal",
    );
    for (const t of discarded) {
      assert.equal(t.terminal, "cancelled");
      assert.equal(t.reason, TurnReasons.discardedFromInbox);
    }
    await msp2.close();
  },
};
