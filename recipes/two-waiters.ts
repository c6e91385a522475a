/**
 * two-waiters: a Stop handler (turn.cancel()) and a status indicator
 * (msp.turns.terminalOf(turnId)) wait on the same turn. Each waiter joins that turn's waiter
 * LIST, so neither evicts the other: both resolve with the same terminal. The Stop lands while
 * the reply streams: the message keeps the text it had, marked interrupted.
 */
import assert from "node:assert/strict";
import { TurnReasons } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";
import { until } from "./until.js";

export const recipe: Recipe = {
  name: "two-waiters",
  summary: "A Stop handler and a status indicator on one turn both get the same terminal",
  // Recorded from the reference host: `npm run recipes -- --live --only two-waiters --record DIR`.
  transcript: "two-waiters.jsonl",
  liveModel: "two-waiters.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Explain the phase machine" }] });
    const { turnId } = await turn.accepted;
    // Let the reply stream a few words first (its item/delta appends).
    const streaming = () => msp.items.itemsOf(turnId).some((item) => item.kind === "message" && item.status === "inProgress" && item.text.length >= 24);
    await until(msp, streaming, "the reply streaming", 15_000);

    // #region waiters
    // The status indicator: shows how the turn ended, whoever ended it.
    const statusIndicator = msp.turns.terminalOf(turnId, { timeoutMs: 30_000 });

    // The Stop handler, on another part of the page, waits on the same turn.
    const stopHandler = turn.cancel({ timeoutMs: 30_000 });

    const [shown, stopped] = await Promise.all([statusIndicator, stopHandler]);
    // #endregion waiters

    env.log(`status indicator and Stop handler both saw "${shown.terminal}": ${shown.reason}`);
    assert.equal(stopped.turnCompleted, shown, "both waiters resolve with the same turn/completed");
    assert.equal(shown.terminal, "cancelled");
    assert.equal(shown.reason, TurnReasons.cancelledDuringModelStream);
    assert.equal(msp.turns.waiterCount, 0, "every waiter was removed when it settled");
    // Whatever was running when Stop landed is closed: no item is left open.
    const items = msp.items.itemsOf(turnId);
    assert.ok(items.length > 0 && items.every((item) => item.status !== "inProgress"), "every item of the turn is closed");
    // The reply was stopped mid-stream: the salvaged prefix is kept, marked interrupted.
    const message = items.find((item) => item.kind === "message");
    assert.ok(message?.kind === "message");
    env.log(`the message kept ${message.text.length} characters: ${JSON.stringify(message.text)}`);
    assert.equal(message.status, "cancelled");
    assert.equal(message.interrupted, true, "the salvaged prefix is marked interrupted");
    assert.notEqual(message.text, "", "the text streamed before the Stop is kept");
    await msp.close();
  },
};
