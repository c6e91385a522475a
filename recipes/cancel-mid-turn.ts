/**
 * cancel-mid-turn: the user clicks Stop while a shell tool is running. The cancel's ack only
 * says the host will try; the turn is over when its own turn/completed says "cancelled".
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "cancel-mid-turn",
  summary: "Stop a running turn and wait for its own terminal, not the cancel's ack",
  transcript: "cancel-mid-turn.jsonl",
  liveModel: "cancel-mid-turn.json",
  async run(env) {
    // #region connect
    // connect() installs ONE notification handler before any turn can start: the turn
    // recorder sees every turn/completed, so a terminal can never slip past you.
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    // #endregion connect

    // #region start
    const input = [{ type: "text" as const, text: "Run the flaky integration suite" }];
    const ack = await msp.command("turn/start", { sessionId, input });
    const turnId = String(ack["turnId"]);
    // #endregion start

    await env.midWork(msp, turnId);

    // #region stop
    // The user clicked Stop. The ack says "accepted": the host will TRY.
    const cancelAck = await msp.command("turn/cancel", { sessionId, turnId });
    assert.equal(cancelAck.status, "accepted");

    // The OUTCOME is the turn's own terminal. terminalOf() checks the record first, then
    // waits, bounded.
    const params = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    // #endregion stop

    env.log(`turn ${turnId.slice(0, 8)}… ended "${params.terminal}": ${params.reason}`);
    assert.equal(params.terminal, "cancelled");
    assert.equal(params.reason, "cancelled during tool execution");

    // The running tool call was closed too: the history stays balanced.
    const tool = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    assert.equal(tool?.status, "cancelled");
    assert.ok(tool.visibleOutput.length > 0, "the output seen so far is kept");
    await msp.close();
  },
};
