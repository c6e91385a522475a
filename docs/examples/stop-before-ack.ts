/**
 * Stop before the ack: `turn.cancel()` on a TurnHandle is safe even before the host has answered
 * `turn/start`. It holds the `turn/cancel` until the ack names the turn, then sends it and
 * resolves with the turn's own terminal.
 */
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

await using msp = spawnReferenceHost({ script: exampleModelPath("run-tests") });
const { sessionId } = await msp.command("session/create", {});

// startTurn() returns at once; the host has not answered yet, so there is no turnId.
const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
console.log(`turnId before the ack: ${turn.turnId}`);

// The user clicks Stop right away.
const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 10_000 });
console.log(`cancel: ${ack}; turn ${turnCompleted.terminal}`);
