/**
 * cancel-race: Stop is clicked just as the turn finishes on its own. The host refuses the
 * cancel with `already_terminal`, which means "already done": the recorder holds the terminal.
 */
import assert from "node:assert/strict";
import { MspError } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";
import { until } from "./until.js";

export const recipe: Recipe = {
  name: "cancel-race",
  summary: "A cancel that lost the race (already_terminal) reads as done, with the turn's own terminal",
  // Recorded from the reference host: `npm run recipes -- --live --only cancel-race --record DIR`.
  transcript: "cancel-race.jsonl",
  liveModel: "cancel-race.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const input = [{ type: "text" as const, text: "Run the unit tests" }];
    const ack = await msp.command("turn/start", { sessionId, input });
    const turnId = ack.turnId;
    // The user clicks Stop once the reply's last words appear (its item/completed): the host has
    // ended the turn on its own by then, so the cancel arrives too late.
    const replied = () => msp.items.itemsOf(turnId).some((item) => item.kind === "message" && item.status === "completed");
    await until(msp, replied, "the whole reply", 10_000);

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
