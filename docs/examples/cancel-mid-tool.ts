/**
 * Cancel mid-tool: a real shell tool is running when the user presses Stop. StopController shows
 * "stopping" from the click while the tool drains, and "ended" only when the turn's own terminal
 * arrives; the tool call keeps the output it printed, its cleanup included.
 */
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

// The reference host is @muse-code/host, beside the SDK; its "run-tests" model runs a shell tool for ~10 s.
await using msp = spawnReferenceHost({ script: exampleModelPath("run-tests") });
const { sessionId } = await msp.command("session/create", {});
const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });

// Your Stop button: enabled while `canStop`, labelled with `state`.
const stop = new StopController(turn, { stopTimeoutMs: 10_000 });
const render = ({ state, canStop }: StopSnapshot) => console.log(`[${canStop ? "Stop" : "    "}] ${state}`);
render(stop.getSnapshot());
stop.subscribe(render);

// Wait until the tool has printed its third test: it is really running.
await new Promise<void>((resolve) => {
  const onDelta = ({ item }: { item: { kind: string; visibleOutput?: string } }) => {
    if (item.kind === "toolCall" && item.visibleOutput?.includes("test 3 ... ok")) resolve(void msp.events.off("item/delta", onDelta));
  };
  msp.events.on("item/delta", onDelta);
});
console.log("the tests are running; the user clicks Stop");

await stop.stop(); // settles once the turn's own terminal arrived, not at the cancel's ack
const ended = await turn.completed;
console.log(`turn ${ended.terminal}: ${ended.reason}`);
const tool = msp.items.itemsOf(ended.turnId).find((item) => item.kind === "toolCall");
if (tool?.kind === "toolCall")
  console.log(`the tool call: ${tool.status}; its cleanup said "${tool.visibleOutput.split("\n").find((l) => l.startsWith("SIGTERM"))}"`);
