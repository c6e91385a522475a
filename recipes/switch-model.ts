/**
 * switch-model: create a session on one model, switch it mid-session with session/setModel
 * (the switch takes effect from the next turn; the result names the new and previous model),
 * and see an unknown model rejected with unknown_model while the session keeps working.
 */
import assert from "node:assert/strict";
import { MspError } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "switch-model",
  summary: "session/setModel mid-session takes effect from the next turn; an unknown model is rejected",
  transcript: "switch-model.jsonl",
  liveModel: "scripted-small.json",
  liveModels: { "scripted-small": "scripted-small.json", "scripted-large": "scripted-large.json" },
  async run(env) {
    const msp = await env.connect();

    // #region create
    const session = await msp.command("session/create", { model: "scripted-small" });
    const { sessionId } = session;
    // #endregion create
    assert.equal(session.model, "scripted-small");

    const first = msp.startTurn({ sessionId, input: [{ type: "text", text: "Summarise README.md" }] });
    assert.equal((await first.waitForTerminal({ timeoutMs: 30_000 })).terminal, "completed");

    // #region switch
    // Between turns: the new model is used from the next turn on.
    const switched = await msp.command("session/setModel", { sessionId, model: "scripted-large" });
    // switched.model is "scripted-large", switched.previousModel "scripted-small"
    const next = msp.startTurn({ sessionId, input: [{ type: "text", text: "Now in more detail" }] });
    const ended = await next.waitForTerminal({ timeoutMs: 30_000 });
    // #endregion switch

    assert.equal(switched.model, "scripted-large");
    assert.equal(switched.previousModel, "scripted-small");
    assert.equal(ended.terminal, "completed");
    const reply = msp.items.itemsOf(ended.turnId).find((item) => item.kind === "message");
    env.log(`model ${switched.previousModel} -> ${switched.model}; next turn "${ended.terminal}" (${reply?.kind === "message" ? reply.text.length : 0} chars)`);

    // #region unknown
    try {
      await msp.command("session/setModel", { sessionId, model: "gpt-imaginary" });
      assert.fail("an unknown model must be rejected");
    } catch (error) {
      if (!(error instanceof MspError && error.kind === "commandRejected" && error.data["reason"] === "unknown_model")) throw error;
      // error.data.available lists the models the host offers (host/info lists them too).
      env.log(`unknown model rejected; available: ${JSON.stringify(error.data["available"])}`);
    }
    // #endregion unknown
    await msp.close();
  },
};
