/**
 * stop-button: a UI's Stop button on StopController. The button shows "stopping" from the
 * click until the turn's OWN terminal arrives — the cancel's ack alone never ends it — and a
 * double click sends one cancel.
 */
import assert from "node:assert/strict";
import { StopController, type StopState } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "stop-button",
  summary: "StopController: 'stopping' from the click until the turn's own terminal; one cancel per turn",
  // Recorded from the reference host: `npm run recipes -- --live --only stop-button --record DIR`.
  transcript: "stop-button.jsonl",
  liveModel: "cancel-mid-turn.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region wire
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the flaky integration suite" }] });
    const stop = new StopController(turn, { stopTimeoutMs: 10_000 });
    const shown: StopState[] = [stop.getSnapshot().state];
    stop.subscribe((snapshot) => {
      // Your render: disable the button unless snapshot.canStop, show snapshot.state.
      shown.push(snapshot.state);
    });
    // #endregion wire

    const { turnId } = await turn.accepted;
    await env.midWork(msp, turnId);

    // #region click
    const first = stop.stop(); // the user clicks Stop…
    const second = stop.stop(); // …and clicks again: the same press, one turn/cancel on the wire
    const final = await first;
    // final.state is "ended"; final.turnCompleted is the turn's own turn/completed
    // #endregion click

    assert.equal(await second, final);
    env.log(`button went ${shown.join(" → ")}: ${final.turnCompleted?.terminal} (${final.ack})`);
    assert.deepEqual(shown, ["starting", "running", "stopping", "ended"]);
    assert.equal(final.turnCompleted?.terminal, "cancelled");
    assert.equal(final.ack, "accepted");
    assert.equal(final.canStop, false);
    await msp.close();
  },
};
