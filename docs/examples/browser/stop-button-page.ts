/**
 * Connecting from a browser: the script of a page that the host serves. It opens a WebSocket to
 * the host with the token from the page's URL fragment (`#token=…`), starts a turn, shows its
 * message text as it streams, and drives a Stop button with StopController. Load it as a module
 * from a page that has #prompt, #start, #stop, #output and #status elements.
 */
import { MspError, type Item, type ItemDeltaEvent, type MspClient } from "@muse-code/sdk";
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { connectWebSocket } from "@muse-code/sdk/websocket";

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}
const prompt = element<HTMLTextAreaElement>("prompt");
const startButton = element<HTMLButtonElement>("start");
const stopButton = element<HTMLButtonElement>("stop");
const output = element<HTMLElement>("output");
const status = element<HTMLElement>("status");

function describe(error: unknown): string {
  return MspError.is(error) ? `${error.kind}: ${error.message}` : String(error);
}

// #region connect
// The host prints http://127.0.0.1:PORT/#token=…: a fragment is never sent to a server, so the
// token reaches no log. Take it, then drop it from the address bar and the history.
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
history.replaceState(null, "", location.pathname + location.search);

let client: MspClient;
try {
  // Same origin as the page: ws:// beside http://, wss:// beside https://.
  client = await connectWebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/msp`, { token, handshakeTimeoutMs: 10_000 });
} catch (error) {
  // A refused token, a host that is down, a timeout: a typed MspError, never a bare Event.
  status.textContent = `not connected (${describe(error)})`;
  throw error;
}
status.textContent = "connected";
void client.closed.then(({ reason }) => (status.textContent = `disconnected: ${reason}`));
// #endregion connect

const { sessionId } = await client.command("session/create", {});
startButton.disabled = false;

// #region turn
startButton.addEventListener("click", () => {
  const turn = client.startTurn({ sessionId, input: [{ type: "text", text: prompt.value }] });
  const stop = new StopController(turn);
  // The turn's latest message as it streams, in one Text node: item/started and item/completed
  // give the whole message; each item/delta (MSP 2.0) gives only what was appended, added to the
  // end of the node. (A browser lays a paragraph out whole on every change: a page that shows
  // very long texts splits them into blocks, as the Stop-button app's demo/segmentedText.ts does.)
  const text = document.createTextNode("");
  output.replaceChildren(text);
  let shown: string | undefined; // the itemId of the message the node shows
  const showWhole = ({ item }: { item: Item }) => {
    if (item.turnId !== turn.commandId || item.kind !== "message") return;
    shown = item.itemId;
    if (text.data !== item.text) text.data = item.text;
  };
  const appendText = ({ item, field, append }: ItemDeltaEvent) => {
    if (item.itemId === shown && field === "text") text.appendData(append);
  };
  client.events.on("item/started", showWhole).on("item/delta", appendText).on("item/completed", showWhole);

  const render = ({ state, canStop, turnCompleted, error }: StopSnapshot): void => {
    stopButton.disabled = !canStop;
    stopButton.textContent = state === "stopping" ? "Stopping…" : "Stop";
    stopButton.setAttribute("aria-busy", String(state === "stopping"));
    startButton.disabled = state !== "ended" && state !== "failed";
    if (state === "ended") status.textContent = `${turnCompleted?.terminal ?? ""}: ${turnCompleted?.reason ?? ""}`;
    else if (state === "failed") status.textContent = describe(error);
    else status.textContent = state;
    if (state === "ended" || (state === "failed" && !canStop)) {
      client.events.off("item/started", showWhole).off("item/delta", appendText).off("item/completed", showWhole);
    }
  };
  render(stop.getSnapshot());
  stop.subscribe(render);
  stopButton.onclick = () => void stop.stop(); // a double click is one press: one turn/cancel
});
// #endregion turn
