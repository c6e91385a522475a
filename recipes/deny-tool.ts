/**
 * deny-tool: the app says no. The host does not run the call: it completes `failed`,
 * `failureReason: "denied by the user"`, its item's `approval` is `denied`, and the turn goes on
 * to its next step.
 */
import assert from "node:assert/strict";
import { TOOL_DENIED_REASON } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "deny-tool",
  summary: "client.onApproval answers deny: the call fails 'denied by the user' and the turn goes on",
  // Recorded from the reference host: `npm run recipes -- --live --only deny-tool --record DIR`.
  transcript: "deny-tool.jsonl",
  liveModel: "approve-tool.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region handler
    msp.onApproval((request) => {
      if (request.tool === "shell" && request.args.includes("publishing")) return { decision: "deny", reason: "releases need a release manager" };
      return { decision: "approve" };
    });
    // #endregion handler

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish the package" }] });
    const { turnId } = await turn.accepted;
    const ended = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });

    // #region outcome
    const items = msp.items.itemsOf(turnId);
    const call = items.find((item) => item.kind === "toolCall");
    // call.status === "failed", call.failureReason === "denied by the user", call.approval === "denied"
    // #endregion outcome
    const said = items.filter((item) => item.kind === "message").map((item) => item.text);
    env.log(
      `answered deny: the call ${call?.status} ("${call?.kind === "toolCall" ? call.failureReason : "?"}"), then the model said ${JSON.stringify(said.at(-1))}`,
    );
    assert.equal(ended.terminal, "completed");
    assert.ok(call?.kind === "toolCall");
    assert.equal(call.status, "failed");
    assert.equal(call.failureReason, TOOL_DENIED_REASON);
    assert.equal(call.approval, "denied");
    assert.equal(call.visibleOutput, "", "the tool never ran");
    assert.deepEqual(said, ["Publishing the package.", "Done."], "the turn went on after the denied call");
    await msp.close();
  },
};
