/**
 * The Stop-button app: a page served by `muse-host serve --ws PORT --ui` on the same origin as
 * the host's WebSocket. It connects with the token from its URL fragment, opens (or resumes) a
 * session, starts turns from the prompt box, streams their items, drives the Stop button with
 * StopController, and shows the host's `tool/approve` questions in an Approve/Deny dialog. Plain TypeScript on `@muse-code/sdk`, `@muse-code/sdk/ui` and `@muse-code/sdk/websocket`; bundled
 * for the browser by scripts/build-demo.ts.
 */
import type { ApprovalQuestion, MspClient, TurnHandle } from "@muse-code/sdk";
import { StopController, type StopSnapshot } from "@muse-code/sdk/ui";
import { connectWebSocket } from "@muse-code/sdk/websocket";
import { Announcer } from "./announcer.js";
import { ApprovalDialog, commandOf } from "./approvalDialog.js";
import { ConnectionIndicator } from "./connectionIndicator.js";
import { describeError } from "./describeError.js";
import { QueueList } from "./queueList.js";
import { openSession, reattachTurn } from "./session.js";
import { REMEMBERED_TURNS, SessionMemory } from "./sessionMemory.js";
import { StopButton } from "./stopButton.js";
import { takeTokenFromAddress } from "./token.js";
import { TurnBook, type TurnEntry } from "./turnBook.js";
import { TurnList } from "./turnList.js";

/** How long a Stop may take, from the click to the turn's terminal (a tool drains within the host's kill grace). @unit milliseconds */
const STOP_TIMEOUT_MS = 30_000;
/** Bound on the WebSocket's opening handshake. @unit milliseconds */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** How often, at most, the page writes what it remembers while output streams. @unit milliseconds */
const REMEMBER_EVERY_MS = 250;

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

const form = element<HTMLFormElement>("prompt-form");
const prompt = element<HTMLTextAreaElement>("prompt");
const startButton = element<HTMLButtonElement>("start");
const reconnectButton = element<HTMLButtonElement>("reconnect");
const announcer = new Announcer(element("status"));
const indicator = new ConnectionIndicator(element("connection"), element("connection-text"));

const memory = new SessionMemory(sessionStorageOrNothing());
const addressToken = takeTokenFromAddress();
if (addressToken !== undefined) memory.rememberToken(addressToken);

// The turns this tab showed before a reload, as they were at the remembered cursor.
const book = new TurnBook();
for (const turn of memory.value.turns) {
  const entry = book.ensure(turn.turnId, turn.prompt);
  entry.phase = turn.phase;
  entry.stopRequested = turn.stopRequested;
  entry.terminal = turn.terminal;
  for (const item of turn.items) book.restoreItem(entry, item, turn.cut.includes(item.itemId));
}
new TurnList(element("turns"), book);
new QueueList({ list: element("queue"), empty: element("queue-empty"), count: element("queue-count") }, book);
new StopButton(element("stop"), book);
const approvalDialog = new ApprovalDialog(
  {
    dialog: element("approval"),
    tool: element("approval-tool"),
    command: element("approval-command"),
    turn: element("approval-turn"),
    approve: element("approval-approve"),
    deny: element("approval-deny"),
  },
  ({ request }, decision) => announcer.say(`${decision === "approve" ? "Approved" : "Denied"}: ${request.tool}: ${firstLine(request.args)}`),
);

/** One connection to the host, and the session the page has open on it. */
interface Link {
  readonly client: MspClient;
  sessionId: string | undefined;
  /** The turns that have a StopController on this connection. */
  readonly attached: WeakSet<TurnEntry>;
}
/** The current connection (kept after it closes: its last cursor is still what the page remembers). */
let link: Link | undefined;

// What the page remembers follows the book, written at most every REMEMBER_EVERY_MS and when the page goes away.
let rememberTimer: ReturnType<typeof setTimeout> | undefined;
function remember(): void {
  clearTimeout(rememberTimer);
  rememberTimer = undefined;
  const sessionId = link?.sessionId ?? memory.value.sessionId;
  if (sessionId === undefined) return;
  book.trim(REMEMBERED_TURNS);
  memory.rememberSession(sessionId, link?.client.lastViewCursor(sessionId) ?? memory.value.cursor, book);
}
book.subscribe(() => (rememberTimer ??= setTimeout(remember, REMEMBER_EVERY_MS)));
addEventListener("pagehide", remember);

/** Give a turn its StopController on this connection; its every change re-renders the turn and is announced. */
function attach(current: Link, entry: TurnEntry, turn: TurnHandle): void {
  if (current.attached.has(entry)) return;
  current.attached.add(entry);
  const stop = new StopController(turn, { stopTimeoutMs: STOP_TIMEOUT_MS });
  entry.stop = stop;
  stop.subscribe((snapshot) => {
    book.changed(entry);
    announce(snapshot);
  });
  void turn.accepted.then(
    (ack) => {
      if (ack.disposition !== "queued") return book.advance(entry.turnId, "running");
      book.advance(entry.turnId, "queued");
      if (entry.phase === "queued") announcer.say(`Queued: ${entry.prompt ?? entry.turnId}`);
    },
    () => {}, // the controller reports it (state "failed")
  );
  book.changed(entry);
}

/**
 * Show the open question of the oldest unfinished turn, from the SDK's own list of open
 * questions (`client.approvals`), or close the dialog when there is none. Called on every
 * approval event and every change of the book, so it also closes when a question is answered
 * elsewhere (another tab), withdrawn by the host, cancelled by Stop, or its connection closes.
 */
function showApproval(): void {
  let open: { question: ApprovalQuestion; prompt: string | undefined } | undefined;
  if (link?.sessionId !== undefined) {
    for (const entry of book.entries()) {
      if (entry.phase === "ended") continue;
      const [question] = link.client.approvals.openOf(entry.turnId);
      if (question !== undefined) {
        open = { question, prompt: entry.prompt };
        break;
      }
    }
  }
  const shown = approvalDialog.question;
  approvalDialog.show(open?.question, open?.prompt);
  if (open !== undefined && open.question !== shown) announcer.say(`Approval needed: ${open.question.request.tool}: ${firstLine(open.question.request.args)}`);
}
book.subscribe(() => showApproval());

/** Every item the page shows that the client holds (at the same revision or later) is taken from the client, whole. */
function takeWholeItems(client: MspClient): void {
  for (const entry of book.entries()) {
    for (const { itemId } of [...entry.items.values()]) {
      const whole = client.items.get(entry.turnId, itemId);
      if (whole !== undefined) book.putItem(whole);
    }
  }
}

function firstLine(args: string): string {
  const line = commandOf(args).split("\n", 1)[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function announce({ state, turnCompleted, error }: StopSnapshot): void {
  if (state === "stopping") announcer.say("Stopping…");
  else if (state === "ended" && turnCompleted !== undefined) announcer.say(`${turnCompleted.terminal}: ${turnCompleted.reason}`);
  else if (state === "failed") announcer.say(`failed: ${describeError(error)}`, "error");
}

/** Connect, install the handlers, open the session, and re-attach the turns that have not ended. */
async function open(): Promise<void> {
  const token = memory.value.token;
  reconnectButton.hidden = true;
  startButton.disabled = true;
  if (token === undefined) {
    indicator.show("disconnected", "no token");
    announcer.say("No token: open the URL that muse-host printed (…/#token=…).", "error");
    return;
  }
  indicator.show("connecting");
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/msp`;
  let client: MspClient;
  try {
    client = await connectWebSocket(url, { token, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS });
  } catch (error) {
    indicator.show("disconnected", describeError(error));
    announcer.say(`Not connected: ${describeError(error)}`, "error");
    reconnectButton.hidden = false;
    return;
  }
  const current: Link = { client, sessionId: undefined, attached: new WeakSet() };
  link = current;
  // The dialog answers the host's questions: the handler leaves each one open for it (the SDK's
  // UI idiom), instead of the SDK's default deny ("no approval handler").
  client.onApproval(() => new Promise(() => {}));
  client.events.on("approvalAsked", showApproval).on("approvalAnswered", showApproval);
  void client.closed.then(({ reason }) => {
    remember();
    if (link !== current) return;
    current.sessionId = undefined;
    showApproval();
    startButton.disabled = true;
    reconnectButton.hidden = false;
    indicator.show("disconnected", reason);
    announcer.say(`Disconnected: ${reason}`, "error");
  });
  // Installed before the session opens: a resume's replay follows its result on the wire.
  client.events.on("turn/started", ({ turnId }) => {
    book.advance(turnId, "running");
    const entry = book.get(turnId);
    if (entry === undefined) return;
    announcer.say(`Running: ${entry.prompt ?? turnId}`);
    // A turn this page has no controller for on this connection (another tab started it) gets one too.
    if (current.sessionId !== undefined && !current.attached.has(entry)) attach(current, entry, reattachTurn(client, current.sessionId, turnId, entry.prompt));
  });
  // MSP 2.0: text arrives as item/delta appends, which the list adds to what it shows; the
  // other item events (started, a patch of status, approval or truncation, completed) give the
  // whole item, which it renders whole (a completion may bring a truncated tool output).
  client.events.on("item/started", ({ item }) => book.putItem(item));
  client.events.on("item/delta", (delta) => book.appendToItem(delta));
  client.events.on("item/updated", ({ item }) => book.putItem(item));
  client.events.on("item/completed", ({ item }) => book.putItem(item));
  client.events.on("turn/completed", (terminal) => book.end(terminal));
  try {
    const session = await openSession(client, memory.value);
    if (!session.how.resumed && session.how.forgot !== undefined) book.clear();
    current.sessionId = session.sessionId;
    // The items in progress at the cursor came whole in the resume's answer, and the SDK holds
    // them in client.items: they replace what the page remembered of them (a long text is
    // remembered cut, and the replay's deltas append to the whole text).
    if (session.how.resumed) takeWholeItems(client);
    indicator.show("connected");
    if (session.how.resumed) announcer.say(`Resumed the session (${session.how.replayed} missed notifications replayed)`);
    else announcer.say(session.how.forgot === undefined ? "Connected" : "Connected; the host no longer knew the last session, so this is a new one");
    for (const entry of book.entries()) {
      if (entry.phase === "ended" || current.attached.has(entry)) continue;
      attach(current, entry, reattachTurn(client, session.sessionId, entry.turnId, entry.prompt));
      // Stop was pressed before the reload: press it again (the host keeps the first cancel's cause).
      if (entry.stopRequested) void entry.stop?.stop();
    }
    remember();
    startButton.disabled = false;
    showApproval(); // a question the host asked again while the session opened
  } catch (error) {
    announcer.say(`Could not open a session: ${describeError(error)}`, "error");
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  if (link?.sessionId === undefined) return;
  const text = prompt.value.trim() === "" ? prompt.placeholder : prompt.value.trim();
  const turn = link.client.startTurn({ sessionId: link.sessionId, input: [{ type: "text", text }] });
  attach(link, book.ensure(turn.commandId, text), turn);
});
prompt.addEventListener("keydown", (event) => {
  // Ctrl+Enter (⌘+Enter) starts the turn; Enter alone is a new line.
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !startButton.disabled) form.requestSubmit(startButton);
});
reconnectButton.addEventListener("click", () => void open());

function sessionStorageOrNothing(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined; // storage disabled: the page works, a reload starts afresh
  }
}

void open();
