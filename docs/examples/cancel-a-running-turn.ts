/**
 * Cancel a running turn: wait until its tool is really running, press Stop, wait for the turn's
 * own terminal (not the cancel's ack), then read the cancelled tool call.
 */
import type { MspClient } from "@muse-code/sdk";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

// #region wait
/**
 * Resolve once a tool call of `turnId` is running and has printed something. Looks at what the
 * client already knows first, then listens; rejects if the turn ends first or after `timeoutMs`,
 * and always removes its listeners and timer.
 */
function toolIsRunning(msp: MspClient, turnId: string, timeoutMs: number): Promise<void> {
  const running = () => msp.items.itemsOf(turnId).some((item) => item.kind === "toolCall" && item.status === "inProgress" && item.visibleOutput !== "");
  if (running()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    // A tool's output arrives as item/delta appends to its visibleOutput.
    const onOutput = () => {
      if (running()) settle();
    };
    const onTerminal = ({ turnId: ended }: { turnId: string }) => {
      if (ended === turnId) settle(new Error(`turn ${turnId} ended before a tool ran`));
    };
    const timer = setTimeout(() => settle(new Error(`no tool of turn ${turnId} was running after ${timeoutMs} ms`)), timeoutMs);
    function settle(error?: Error) {
      clearTimeout(timer);
      msp.events.off("item/delta", onOutput);
      msp.events.off("turn/completed", onTerminal);
      if (error === undefined) resolve();
      else reject(error);
    }
    msp.events.on("item/delta", onOutput);
    msp.events.on("turn/completed", onTerminal);
  });
}
// #endregion wait

// The shipped "run-tests" model runs a shell tool that prints a line every ~100 ms for ~10 s.
await using msp = spawnReferenceHost({ script: exampleModelPath("run-tests") });
const { sessionId } = await msp.command("session/create", {});

// #region start
const input = [{ type: "text" as const, text: "Run the tests" }];
const ack = await msp.command("turn/start", { sessionId, input });
const turnId = ack.turnId; // the turnId is the commandId of this turn/start
// #endregion start

await toolIsRunning(msp, turnId, 10_000);
console.log("the tests are running: the user clicks Stop");

// #region stop
// The ack says "accepted": the host will TRY to stop the turn.
const cancelAck = await msp.command("turn/cancel", { sessionId, turnId });
console.log(`cancel: ${cancelAck.status}`);

// The OUTCOME is the turn's own terminal. terminalOf() checks the record first, then waits, bounded.
const ended = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });
console.log(`turn ${ended.terminal}: ${ended.reason}`);
// #endregion stop

// #region read-item
// The running tool call was closed too, with the output it printed before Stop.
const tool = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
if (tool?.kind !== "toolCall") throw new Error(`turn ${turnId} has no tool call`);
console.log(`tool call ${tool.tool}: ${tool.status} (${tool.failureReason ?? "no reason given"})`);
console.log(`its first line of output: ${tool.visibleOutput.split("\n")[0]}`);
// #endregion read-item
