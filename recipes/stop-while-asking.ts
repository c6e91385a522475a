/**
 * stop-while-asking: the host asks, the app shows a dialog, and the user clicks Stop instead of
 * answering. StopController answers the open question `cancelled` itself, then sends the one
 * `turn/cancel`, and stays `stopping` until the turn's own terminal: the dialog closes, the call
 * is closed as never dispatched, and the turn ends `cancelled`. Nothing runs.
 */
import assert from "node:assert/strict";
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "stop-while-asking",
  summary: "Stop with the approval dialog open: the question is answered cancelled, nothing runs, one terminal",
  // Recorded from the reference host: `npm run recipes -- --live --only stop-while-asking --record DIR`.
  transcript: "stop-while-asking.jsonl",
  liveModel: "approve-tool.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region dialog
    // The dialog answers through the controller, so the handler leaves every question open.
    msp.onApproval(() => new Promise(() => {}));
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish the package" }] });
    const stop = new StopController(turn, { stopTimeoutMs: 10_000 });
    let dialogShown = (_: StopSnapshot) => {};
    const dialog = new Promise<StopSnapshot>((resolve) => (dialogShown = resolve));
    const shown: string[] = [];
    stop.subscribe((snapshot) => {
      // Your render: show the dialog while `snapshot.approval` is set, the button while `canStop`.
      shown.push(snapshot.approval === undefined ? snapshot.state : `${snapshot.state}+dialog`);
      if (snapshot.approval !== undefined) dialogShown(snapshot);
    });
    // #endregion dialog

    const asking = await dialog;
    assert.equal(asking.approval?.request.tool, "shell");

    // #region click
    const final = await stop.stop(); // the user clicks Stop with the dialog open
    // final.state is "ended", final.turnCompleted.terminal is "cancelled", and final.approval is gone
    // #endregion click

    const { turnId } = await turn.accepted;
    const call = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    env.log(`screen went ${shown.join(" → ")}: ${final.turnCompleted?.terminal} (${final.turnCompleted?.reason}; Stop ${final.ack})`);
    env.log(`the call: ${call?.status}, approval ${call?.kind === "toolCall" ? call.approval : "?"}: ${call?.kind === "toolCall" ? call.failureReason : "?"}`);
    assert.equal(final.state, "ended");
    assert.equal(final.turnCompleted?.terminal, "cancelled");
    assert.equal(final.turnCompleted?.reason, "cancelled while awaiting approval");
    assert.equal(final.approval, undefined, "the dialog is closed");
    assert.equal(final.ack, "accepted", "the cancelled answer ends nothing: the turn/cancel does");
    assert.ok(call?.kind === "toolCall");
    assert.equal(call.status, "cancelled");
    assert.equal(call.approval, "cancelled");
    assert.equal(call.failureReason, "tool call aborted before dispatch");
    assert.equal(call.visibleOutput, "", "the tool never ran");
    assert.equal(msp.approvals.size, 0);
    await msp.close();
  },
};
