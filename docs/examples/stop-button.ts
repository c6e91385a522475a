/**
 * A Stop button that knows when the turn stopped. StopController shows "stopping" from the click
 * until the turn's own terminal arrives; here the console stands in for the button.
 */
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

await using msp = spawnReferenceHost({ script: exampleModelPath("run-tests") });
const { sessionId } = await msp.command("session/create", {});

// #region wire
const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
const stop = new StopController(turn, { stopTimeoutMs: 10_000 });

// Your render: enable the button while `canStop`, show `state`.
function render({ state, canStop, turnCompleted }: StopSnapshot): void {
  console.log(`[${canStop ? "Stop" : "    "}] ${state}${turnCompleted === undefined ? "" : `: ${turnCompleted.terminal}`}`);
}
render(stop.getSnapshot());
stop.subscribe(render);
// #endregion wire

await turn.accepted; // the host has the turn (state "running")

// #region click
const first = stop.stop(); // the user clicks Stop…
const second = stop.stop(); // …and again: the same press, one turn/cancel on the wire
const final = await first;
// #endregion click
console.log(`one press: ${first === second}; the host answered ${final.ack}`);
