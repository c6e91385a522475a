/**
 * A real page for the browser test: a Stop button built on StopController, talking to an
 * in-page MSP host over a linked pair. The host acks turn/cancel at once but takes 300 ms to
 * reach the terminal, so the page must show "stopping" in between.
 */
import { connect } from "../../src/index.js";
import { StopController } from "../../src/ui/index.js";
import { createLinkedPair } from "../../src/testing/linkedPair.js";

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const [clientSide, hostSide] = createLinkedPair();
const enc = new TextEncoder();
const dec = new TextDecoder();
let cursor = 0;
const send = (m: unknown) => hostSide.write(enc.encode(`${JSON.stringify(m)}\n`));
const note = (method: string, params: Record<string, unknown>) =>
  send({ jsonrpc: "2.0", method, params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, ...params } });
let buffer = "";
hostSide.onData((chunk) => {
  buffer += dec.decode(chunk, { stream: true });
  let at = buffer.indexOf("\n");
  while (at >= 0) {
    const msg = JSON.parse(buffer.slice(0, at)) as { id: number; method: string; params: Record<string, string> };
    buffer = buffer.slice(at + 1);
    at = buffer.indexOf("\n");
    const commandId = msg.params["commandId"];
    if (msg.method === "turn/start") {
      send({ jsonrpc: "2.0", id: msg.id, result: { commandId, status: "accepted", turnId: commandId, startedNewTurn: true, disposition: "started" } });
      note("item/started", {
        item: {
          itemId: "i1",
          kind: "toolCall",
          turnId: commandId,
          revision: 1,
          status: "inProgress",
          recordedAt: new Date().toISOString(),
          tool: "shell",
          callId: "c1",
          args: "{}",
          visibleOutput: "Compiling…\n",
          truncated: false,
        },
      });
    } else if (msg.method === "turn/cancel") {
      const turnId = msg.params["turnId"];
      send({ jsonrpc: "2.0", id: msg.id, result: { commandId, status: "accepted", turnId } });
      setTimeout(() => {
        note("item/completed", {
          item: {
            itemId: "i1",
            kind: "toolCall",
            turnId,
            revision: 2,
            status: "cancelled",
            recordedAt: new Date().toISOString(),
            tool: "shell",
            callId: "c1",
            args: "{}",
            visibleOutput: "Compiling…\n",
            truncated: false,
            failureReason: "turn cancelled",
          },
        });
        note("turn/completed", { turnId, terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "user" }, durationMs: 300 });
      }, 300);
    }
  }
});

const client = connect(clientSide);
const button = document.querySelector<HTMLButtonElement>("#stop")!;
const status = document.querySelector<HTMLElement>("#status")!;
const history: string[] = [];
const turn = client.startTurn({ sessionId: SESSION, input: [{ type: "text", text: "Run the flaky integration suite" }] });
const stop = new StopController(turn);
const render = () => {
  const s = stop.getSnapshot();
  button.disabled = !s.canStop;
  button.textContent = s.state === "stopping" ? "Stopping…" : "Stop";
  status.textContent = s.state === "ended" ? `ended: ${s.turnCompleted?.terminal} (${s.turnCompleted?.reason})` : s.state;
  history.push(s.state);
  document.body.dataset["history"] = history.join(",");
};
stop.subscribe(render);
render();
button.addEventListener("click", () => void stop.stop());
