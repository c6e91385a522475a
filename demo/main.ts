/**
 * The Stop-button app: a page served by `muse-host serve --ws PORT --ui` on the same origin as
 * the host's WebSocket. It connects with the token from its URL fragment and opens (or, after a
 * reload, resumes) a session with `openSession` from `@muse-code/sdk/session`, which keeps the
 * turns across drops, reloads and host restarts and reconnects by itself. The page renders
 * every view from the session's snapshots: the turns and their streamed items, the queue, the
 * Stop button (the turn's phase: "Stopping…" until its own terminal, across a drop too), the
 * host's `tool/approve` questions in an Approve/Deny dialog, and the connection. Only the host
 * ends a turn: after a drop a running turn reads "reconnecting…", then what the host says.
 * Subagents (issue 23): the session follows the tree below each turn (`SessionTurn.subagents` and
 * `subagentProgress`, kept across a reload, the host replaying each child session from its own
 * cursor); the page shows the child turns nested under their delegating tool calls, with their
 * items as the connection streams them ({@link SubagentItems}: the snapshot holds the session's
 * own items only); a Stop counts them down ("stopping 3 of 5 subagents…") until the turn's own
 * terminal, and a subagent's question (in the turn's `approvals`, with `subagent`) opens the same
 * dialog, saying which subagent asks.
 * Plain TypeScript on `@muse-code/sdk`, `@muse-code/sdk/session` and `@muse-code/sdk/websocket`;
 * bundled for the browser by scripts/build-demo.ts.
 */
import type { ApprovalDecision } from "@muse-code/sdk";
import { describeEnding } from "@muse-code/sdk/ui";
import { openSession, type MspSession, type SessionSnapshot, type SessionTurn } from "@muse-code/sdk/session";
import { connectWebSocket } from "@muse-code/sdk/websocket";
import { Announcer } from "./announcer.js";
import { ApprovalDialog, commandOf } from "./approvalDialog.js";
import { ConnectionIndicator } from "./connectionIndicator.js";
import { QueueList } from "./queueList.js";
import { SteerBox } from "./steerBox.js";
import { StopButton } from "./stopButton.js";
import { tokenForThisTab } from "./token.js";
import { SubagentItems, SubagentTree } from "./subagents.js";
import { outcomeOf, promptOf, TurnList } from "./turnList.js";

/** Bound on the WebSocket's opening handshake. @unit milliseconds */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Where the session (its id, cursor, turns and pending Stops) is kept in the tab's storage. */
const SESSION_KEY = "muse-demo:session";
/** What the status line says of an answer. */
const ANSWERED: Record<ApprovalDecision, string> = {
  approve: "Approved",
  approveForSession: "Approved for this session",
  deny: "Denied",
  denyAndStop: "Denied and stopped",
  cancelled: "Withdrawn",
};

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}

const form = element<HTMLFormElement>("prompt-form");
const prompt = element<HTMLTextAreaElement>("prompt");
const startButton = element<HTMLButtonElement>("start");
const retryButton = element<HTMLButtonElement>("reconnect");
const announcer = new Announcer(element("status"));
const indicator = new ConnectionIndicator(element("connection"), element("connection-text"), retryButton);

/** The session, once open. */
let session: MspSession | undefined;
/** The child turns' items (not in the snapshot), heard on each of the session's connections. */
const subagentItems = new SubagentItems(() => session?.getSnapshot().sessionId);
const turnList = new TurnList(element("turns"));
const queueList = new QueueList({ list: element("queue"), empty: element("queue-empty"), count: element("queue-count") }, (turnId) => session?.stop(turnId));
const stopButton = new StopButton(element("stop"), (turnId) => session?.stop(turnId));
const steerBox = new SteerBox(
  { form: element("steer-form"), input: element("steer-input"), button: element("steer") },
  (turnId, text) => (session === undefined ? Promise.reject(new Error("no session")) : session.steer(turnId, text)),
  (text, tone) => announcer.say(text, tone),
);
const approvalDialog = new ApprovalDialog(
  {
    dialog: element("approval"),
    tool: element("approval-tool"),
    command: element("approval-command"),
    turn: element("approval-turn"),
    asker: element("approval-asker"),
    approve: element("approval-approve"),
    deny: element("approval-deny"),
    offline: element("approval-offline"),
    always: element("approval-always"),
    stop: element("approval-stop"),
    grant: element("approval-grant"),
  },
  (question, decision, reason) => {
    // A subagent's question is the session's too (it shows on the turn it runs below).
    // After a Stop of its turn the answer that stands is `cancelled`: say that, not what was clicked.
    const stands = session?.answerApproval(question.itemId, decision, reason) ?? decision;
    announcer.say(`${ANSWERED[stands]}: ${question.tool}: ${firstLine(question.args)}`);
  },
);

/** The snapshot rendered last. */
let shown: SessionSnapshot | undefined;
/** The child turns' items moved since the last render. */
let subagentsMoved = false;
/** What the status line last said of each subagent, by turn: said again only when it changes. */
const subagentSaid = new Map<string, string>();

/** Bring every view up to date with the session's snapshot (and the child turns' items), and announce what changed. */
function render(): void {
  if (session === undefined) return;
  const snapshot = session.getSnapshot();
  if (snapshot === shown && !subagentsMoved) return;
  const moved = subagentsMoved;
  subagentsMoved = false;
  const previous = shown;
  shown = snapshot;
  const tree = new SubagentTree(snapshot.turns, subagentItems);
  if (snapshot === previous) {
    // Only a child turn's items moved: the subagent lists.
    turnList.render(snapshot.turns, tree);
    return;
  }
  if (snapshot.turns !== previous?.turns) subagentItems.prune(tree.ids());
  if (snapshot.connection !== previous?.connection) {
    indicator.render(snapshot.connection);
    startButton.disabled = snapshot.connection.state !== "open";
  }
  if (snapshot.turns !== previous?.turns || moved) {
    turnList.render(snapshot.turns, tree);
    queueList.render(snapshot.turns);
    stopButton.render(snapshot.turns);
  }
  if (snapshot.turns !== previous?.turns || snapshot.connection !== previous?.connection) steerBox.render(snapshot.turns, snapshot.connection.state === "open");
  showApproval(snapshot.turns, tree);
  announce(previous, snapshot);
  announceSubagents(snapshot.turns, tree);
}

/**
 * Show the first unanswered question of the oldest unfinished turn (its own, or one a subagent
 * below it asks, saying which subagent), or close the dialog when there is none.
 */
function showApproval(turns: readonly SessionTurn[], tree: SubagentTree): void {
  const before = approvalDialog.question?.itemId;
  for (const turn of turns) {
    const question = turn.approvals.find((approval) => approval.answered === undefined);
    if (question === undefined) continue;
    if (question.subagent === undefined) {
      approvalDialog.show(question, promptOf(turn));
      if (before !== question.itemId) announcer.say(`Approval needed: ${question.tool}: ${firstLine(question.args)}`);
      return;
    }
    const task = tree.taskOf(question.turnId);
    const asker = `subagent “${task?.agent ?? "subagent"}”${task === undefined || task.prompt === "" ? "" : ` (asked to “${task.prompt}”)`}`;
    approvalDialog.show(question, promptOf(turn), asker);
    if (before !== question.itemId) announcer.say(`Approval needed by the ${asker}: ${question.tool}: ${firstLine(question.args)}`);
    return;
  }
  approvalDialog.show(undefined, undefined);
}

/** Say on the status line what moved below the running turns: a subagent started or ended, and, while a turn stops, how many still run. */
function announceSubagents(turns: readonly SessionTurn[], tree: SubagentTree): void {
  for (const turn of turns) {
    if (turn.phase === "stopping") {
      const { text } = outcomeOf(turn);
      if (subagentSaid.get(turn.turnId) !== text) announcer.say(text);
      subagentSaid.set(turn.turnId, text);
      continue;
    }
    if (turn.phase !== "running") continue;
    for (const child of turn.subagents) {
      const agent = tree.taskOf(child.turnId)?.agent ?? "subagent";
      const text = child.terminal === undefined ? `Subagent ${agent} started` : `Subagent ${agent}: ${describeEnding(child.terminal)}`;
      if (child.state === "linked" || subagentSaid.get(child.turnId) === text) continue;
      subagentSaid.set(child.turnId, text);
      announcer.say(text);
    }
  }
}

/** Say on the status line what moved between two snapshots: the connection, a turn's phase. */
function announce(previous: SessionSnapshot | undefined, snapshot: SessionSnapshot): void {
  const { state, reason } = snapshot.connection;
  if (state !== previous?.connection.state) {
    if (state === "open" && previous === undefined)
      announcer.say(snapshot.turns.length === 0 ? "Connected" : `Resumed the session (${snapshot.turns.length} turns kept in this tab)`);
    else if (state === "open") announcer.say("Reconnected");
    else if (state === "reconnecting") announcer.say(`Reconnecting: ${reason?.message ?? "the connection was lost"}`, "error");
    else if (state === "closed") announcer.say(`Disconnected: ${reason?.message ?? "the session was closed"}`, "error");
  }
  if (previous === undefined) return; // the turns kept in the tab are on show; what moves from here on is said
  const before = new Map(previous.turns.map((turn) => [turn.turnId, turn]));
  for (const turn of snapshot.turns) {
    const was = before.get(turn.turnId);
    if (was === turn || was?.phase === turn.phase) continue;
    if (turn.phase === "queued") announcer.say(`Queued: ${promptOf(turn) ?? turn.turnId}`);
    else if (turn.phase === "running" && was?.phase !== "reconnecting") announcer.say(`Running: ${promptOf(turn) ?? turn.turnId}`);
    else if (turn.phase === "ended" || turn.phase === "unknown" || turn.phase === "stopping") announcer.say(outcomeOf(turn).text);
  }
}

function firstLine(args: string): string {
  const line = commandOf(args).split("\n", 1)[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Open (or resume) the session: it connects, reconnects with backoff, and keeps its turns in the tab's storage. */
async function start(): Promise<void> {
  const storage = sessionStorageOrNothing();
  const token = tokenForThisTab(storage);
  if (token === undefined) {
    indicator.show("disconnected", "no token");
    retryButton.hidden = true;
    announcer.say("No token: open the URL that muse-host printed (…/#token=…).", "error");
    return;
  }
  indicator.show("connecting");
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/msp`;
  // A subagent link the session could not read (or a tree past its bound) is said on the status line.
  const onWarning = (message: string) =>
    /subagent/.test(message) ? announcer.say(`Could not follow a subagent: ${message}`, "error") : console.warn(`@muse-code/sdk/session: ${message}`);
  // #region open
  session = await openSession({
    // Each connection is also heard for the child turns' items (the snapshot holds the session's own).
    connect: async () => subagentItems.attach(await connectWebSocket(url, { token, handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS })),
    ...(storage === undefined ? {} : { storage }),
    storageKey: SESSION_KEY,
    onWarning,
    reconnect: { initialDelayMs: 250, maxDelayMs: 5_000, maxAttempts: 30 },
  });
  session.subscribe(render);
  render();
  // #endregion open
  subagentItems.subscribe(() => {
    subagentsMoved = true;
    render();
  });
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  if (session === undefined || startButton.disabled) return;
  const text = prompt.value.trim() === "" ? prompt.placeholder : prompt.value.trim();
  session.startTurn(text);
});
prompt.addEventListener("keydown", (event) => {
  // Ctrl+Enter (⌘+Enter) starts the turn; Enter alone is a new line.
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !startButton.disabled) form.requestSubmit(startButton);
});
retryButton.addEventListener("click", () => void session?.retryNow());

function sessionStorageOrNothing(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined; // storage disabled: the page works, a reload starts afresh
  }
}

start().catch((error: unknown) => {
  // openSession throws only for bad options; a connection problem is in the snapshot.
  indicator.show("disconnected", error instanceof Error ? error.message : String(error));
  retryButton.hidden = true; // nothing to retry: there is no session
  announcer.say(`Could not open a session: ${error instanceof Error ? error.message : String(error)}`, "error");
});
