/**
 * cancel-race: Stop is clicked just as the turn finishes on its own. The host refuses the
 * cancel with `already_terminal`, which means "already done": the recorder holds the terminal.
 */
import assert from "node:assert/strict";
import { MspError } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "cancel-race",
  summary: "A cancel that lost the race (already_terminal) reads as done, with the turn's own terminal",
  transcript: "cancel-race.jsonl",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const input = [{ type: "text" as const, text: "Run the flaky integration suite" }];
    const ack = await msp.command("turn/start", { sessionId, input });
    const turnId = String(ack["turnId"]);

    // #region narrow
    try {
      await msp.command("turn/cancel", { sessionId, turnId });
    } catch (error) {
      if (error instanceof MspError && error.kind === "commandRejected" && error.data["reason"] === "already_terminal") {
        // The turn reached its own terminal first. Nothing is running, and the recorder
        // already holds its turn/completed.
      } else {
        // Any other rejection is a real error: no turn/completed is coming for it.
        throw error;
      }
    }
    const params = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    // #endregion narrow

    env.log(`cancel lost the race; the turn ended "${params.terminal}" on its own`);
    assert.equal(params.terminal, "completed");
    await msp.close();
  },
};
