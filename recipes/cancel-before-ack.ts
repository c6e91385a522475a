/**
 * cancel-before-ack: the user clicks Stop while turn/start is still in flight, so there is
 * no turnId yet. TurnHandle.cancel() holds the cancel until the ack names the turn, then sends
 * turn/cancel and resolves with the turn's own terminal. On the wire: turn/start, its ack,
 * then turn/cancel.
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "cancel-before-ack",
  summary: "Stop pressed while turn/start is in flight: the cancel waits for the ack, then lands",
  // Recorded from the reference host: `npm run recipes -- --live --only cancel-before-ack --record DIR`.
  transcript: "cancel-before-ack.jsonl",
  liveModel: "cancel-before-ack.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const input = [{ type: "text" as const, text: "Refactor the session log" }];

    // #region early-stop
    // startTurn() returns at once; the host has not answered yet.
    const turn = msp.startTurn({ sessionId, input });
    assert.equal(turn.turnId, undefined, "no ack yet, so no turnId");

    // The user clicks Stop right away. cancel() holds the turn/cancel until the ack arrives,
    // then sends it with the acked turnId and waits for the turn's own terminal.
    const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 10_000 });
    // #endregion early-stop

    env.log(`cancel sent after the ack; turn ended "${turnCompleted.terminal}": ${turnCompleted.reason}`);
    assert.equal(ack, "accepted");
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.equal(turnCompleted.cause?.kind, "user");
    assert.equal(turnCompleted.turnId, turn.turnId, "the terminal is this turn's");
    assert.equal(turn.turnId, turn.commandId, "the turnId is the commandId of turn/start");
    await msp.close();
  },
};
