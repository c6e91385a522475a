/**
 * The race: Stop arrives just after the turn finished on its own. The host refuses the cancel with
 * `already_terminal`, which means "already done", and the turn's terminal is already recorded.
 * Every other rejection is a real error.
 */
import { MspError } from "@muse-code/sdk";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

await using msp = spawnReferenceHost({ script: exampleModelPath("hello") });
const { sessionId } = await msp.command("session/create", {});

// The turn finishes on its own…
const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
const { turnId } = await turn.waitForTerminal({ timeoutMs: 30_000 });

// …and then the user's Stop arrives.
// #region narrow
try {
  await msp.command("turn/cancel", { sessionId, turnId });
} catch (error) {
  if (error instanceof MspError && error.kind === "commandRejected" && error.data.reason === "already_terminal") {
    // The turn reached its own terminal first. Nothing is running, and the client
    // already holds its turn/completed.
  } else {
    // Any other rejection is a real error: no turn/completed is coming for it.
    throw error;
  }
}
const ended = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });
// #endregion narrow
console.log(`turn/cancel was refused as already_terminal; the turn ${ended.terminal}`);

// #region cancel-turn
// cancelTurn() does all of that for you: already_terminal resolves, with the turn's real terminal.
const outcome = await msp.cancelTurn({ sessionId, turnId }, { timeoutMs: 10_000 });
console.log(`cancelTurn: ${outcome.ack}; the turn ${outcome.turnCompleted.terminal}`);
// #endregion cancel-turn
