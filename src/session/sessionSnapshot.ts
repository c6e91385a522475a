/**
 * The shapes an {@link MspSession} shows: its snapshot, the connection state, each turn with its
 * items, phase, terminal and open approvals. Every snapshot is immutable (frozen), and a part
 * that did not change is the same object in the next snapshot, so a UI re-renders only what moved.
 */
import type { ApprovalDecision, Item, TurnCompletedParams, TurnInput } from "@muse-code/protocol";
import type { ApprovalGrantRule, ApprovalOffer } from "@muse-code/protocol";
import type { TreeProgress, TreeTurn } from "../ui/turnTree.js";

/**
 * Where the session's connection is: `connecting` (the first one), `open`, `reconnecting` (lost,
 * retrying with backoff) or `closed` (the app closed the session, or it gave up: see
 * {@link SessionConnection.reason}).
 *
 * @example
 * ```ts
 * const label: Record<SessionConnectionState, string> = { connecting: "Connecting…", open: "Online", reconnecting: "Reconnecting…", closed: "Offline" };
 * ```
 */
export type SessionConnectionState = "connecting" | "open" | "reconnecting" | "closed";

/**
 * Why a connection ended or the session stopped trying:
 * - `lost`: the connection dropped (WebSocket 1006, a host that went away); retried.
 * - `hostClosed`: the host closed it with a close code; retried.
 * - `closedHere`: this side closed it (a page's own `close()`, WebSocket 1005 without a host
 *   close code); never described as the host's.
 * - `tokenRefused`: the host refused the token (seen where the transport shows it, e.g. HTTP 401
 *   in Node); retries stop.
 * - `unreachable`: the attempts were spent (`reconnect.maxAttempts` failures in a row): the host
 *   refused or is unreachable; retries stop.
 * - `unknownSession`: the host no longer knows the session (a host restarted without its data).
 * - `closed`: the app closed the session.
 *
 * @example
 * ```ts
 * if (session.getSnapshot().connection.reason?.kind === "tokenRefused") status.textContent = "The host refused the token: open the address it printed again";
 * ```
 */
export type SessionCloseKind = "lost" | "hostClosed" | "closedHere" | "tokenRefused" | "unreachable" | "unknownSession" | "closed";

/**
 * Why, in words and kind, with the WebSocket close code when there was one.
 *
 * @example
 * ```ts
 * const why: SessionCloseReason = { kind: "lost", message: "the connection was lost (WebSocket close code 1006)", closeCode: 1006 };
 * ```
 */
export interface SessionCloseReason {
  readonly kind: SessionCloseKind;
  /** Plain words, for a status line. */
  readonly message: string;
  /** The WebSocket close code, when the connection had one. */
  readonly closeCode?: number;
}

/**
 * The connection as the session sees it.
 *
 * @example
 * ```ts
 * const { state, attempt, retryInMs, reason } = session.getSnapshot().connection;
 * if (state === "reconnecting") status.textContent = `Reconnecting (attempt ${attempt}, in ${retryInMs} ms): ${reason?.message}`;
 * ```
 */
export interface SessionConnection {
  readonly state: SessionConnectionState;
  /** Failed attempts in a row since the last open connection (0 while open). */
  readonly attempt: number;
  /** When `reconnecting`: the delay before the next attempt, as drawn. @unit milliseconds */
  readonly retryInMs?: number;
  /** Why the last connection ended, or why the session stopped trying. */
  readonly reason?: SessionCloseReason;
}

/**
 * Where a turn is, as a UI should show it. Only `ended` is a terminal, and only the host's own
 * `turn/completed` (live or replayed) makes it:
 * - `starting`: `turn/start` sent (or, with no connection yet, to be sent on the next one), no
 *   answer yet; `queued`: waiting in the host's inbox;
 *   `running`: under way.
 * - `stopping`: Stop was pressed; the turn goes on until its own terminal arrives.
 * - `reconnecting`: the connection is down and the turn had not ended: it may still be running.
 * - `ended`: its `turn/completed` arrived (`terminal` holds it).
 * - `unknown`: the session gave up, or the host no longer knows the session, before the turn's
 *   terminal came: what happened is not known (`unknownReason` says why). Never `failed`.
 *
 * @example
 * ```ts
 * const busy = (turn: SessionTurn) => turn.phase !== "ended" && turn.phase !== "unknown";
 * ```
 */
export type SessionTurnPhase = "starting" | "queued" | "running" | "stopping" | "reconnecting" | "ended" | "unknown";

/**
 * Where a pressed Stop is:
 * - `kept`: not sent yet (the connection is down, or the turn's `turn/start` has no answer
 *   yet): it goes once the session is back ("will be sent when back online");
 * - `sent`: the turn's one `turn/cancel` is on the wire, not answered yet;
 * - `accepted`: the host accepted it (or answered `already_terminal`): the turn's terminal is on
 *   its way.
 *
 * @example
 * ```ts
 * const words: Record<SessionStopState, string> = { kept: "Stop will be sent when back online", sent: "Stopping…", accepted: "Stopping…" };
 * ```
 */
export type SessionStopState = "kept" | "sent" | "accepted";

/**
 * The model a session runs, as the host said it: what `openSession({ model })` and
 * `setModel(name)` asked for, and what the host answered.
 *
 * @example
 * ```ts
 * const { current, requested, refused } = session.getSnapshot().model;
 * status.textContent = requested === undefined ? (current ?? "the host's default") : `switching to ${requested}…`;
 * if (refused !== undefined) alert(`${refused.model}: ${refused.message}`);
 * ```
 */
export interface SessionModel {
  /** The model the host says the session uses (from `session/create` or `session/setModel`); undefined until it said. */
  readonly current: string | undefined;
  /** A `setModel` not accepted yet: sent now, or after the reconnect. */
  readonly requested: string | undefined;
  /** The host refused the last model asked for (`unknown_model`, or another refusal). */
  readonly refused?: { readonly model: string; readonly message: string };
}

/**
 * One open `tool/approve` question of a turn, shown once however many times the host asks it
 * (it asks again after a reconnect).
 *
 * @example
 * ```ts
 * for (const question of session.getSnapshot().turns.flatMap((t) => t.approvals)) {
 *   session.answerApproval(question.itemId, confirm(`Run ${question.tool} ${question.args}?`) ? "approve" : "deny");
 * }
 * ```
 */
export interface SessionApproval {
  readonly turnId: string;
  readonly itemId: string;
  readonly callId: string;
  readonly tool: string;
  /** The tool's arguments, as the host sent them (JSON text). */
  readonly args: string;
  /**
   * The decisions the question offers, for the buttons to show: its `decisions` (MSP 2.1), or
   * `approve` and `deny` from a 2.0 host. `cancelled` is always allowed besides.
   */
  readonly decisions: readonly ApprovalOffer[];
  /** The grant an `approveForSession` answer would create (MSP 2.1): show it before the user picks it. */
  readonly grant?: ApprovalGrantRule;
  /** True while the question is open on the live connection; false while the session waits for the host to ask again. */
  readonly live: boolean;
  /** An answer given while the question was not live: sent when the host asks again. */
  readonly answered?: ApprovalDecision;
  /**
   * Set once Stop was pressed for the turn: the question is being withdrawn. It is (or, when the
   * host asks again, will be) answered `cancelled`, whatever is answered after the Stop; show no
   * live buttons for it.
   */
  readonly withdrawing?: true;
  /**
   * Set when a subagent below the turn asks: the child session asking and how deep it
   * is (`depth` in levels below the session's turn: 1 for a child of the turn, 2 for a grandchild,
   * …); `turnId` is then the subagent's turn. Answer it like any other question, with
   * `answerApproval(itemId, …)`.
   */
  readonly subagent?: { readonly sessionId: string; readonly depth: number };
}

/**
 * One turn of the session.
 *
 * @example
 * ```ts
 * const [first] = session.getSnapshot().turns;
 * const text = first?.items.map((item) => (item.kind === "message" ? item.text : "")).join("");
 * ```
 */
export interface SessionTurn {
  readonly turnId: string;
  /** What the turn was started with, when this session (or one it restored) started it. */
  readonly input?: readonly TurnInput[];
  readonly phase: SessionTurnPhase;
  /** Its items in the order they started, each at its latest revision. */
  readonly items: readonly Item[];
  /** Earlier items no longer kept (over `limits.itemsPerTurn`). */
  readonly droppedItems: number;
  /** The turn's own `turn/completed` params, once it arrived. */
  readonly terminal?: TurnCompletedParams;
  /** Its open questions. */
  readonly approvals: readonly SessionApproval[];
  /** Stop was pressed (kept across drops and reloads until the terminal). */
  readonly stopRequested: boolean;
  /** Where the Stop is, once pressed: see {@link SessionStopState}. Only the turn's own terminal ends it. */
  readonly stopState?: SessionStopState;
  /**
   * The subagent turns below this turn: children, grandchildren, …, depth-first (each
   * before its own children, `depth` 1 for a child), each with its state and, once it came, its
   * own terminal. Empty when the turn delegated nothing. By invariant 7 the turn's own terminal
   * comes after every one of theirs: once `phase` is `ended`, each has its terminal here.
   */
  readonly subagents: readonly TreeTurn[];
  /** How many of {@link SessionTurn.subagents} started and ended, ready for `describeTreeProgress` (`@muse-code/sdk/ui`). */
  readonly subagentProgress: TreeProgress;
  /** Why the phase is `unknown`. */
  readonly unknownReason?: string;
}

/**
 * Everything the session shows, immutable: what `getSnapshot()` returns.
 *
 * @example
 * ```ts
 * const { sessionId, connection, turns } = session.getSnapshot();
 * console.log(sessionId, connection.state, turns.length);
 * ```
 */
export interface SessionSnapshot {
  /** The host's session, once created or resumed (a remembered one before that). */
  readonly sessionId: string | undefined;
  readonly connection: SessionConnection;
  /** The turns, oldest first (at most `limits.turns`; ended ones are dropped first). */
  readonly turns: readonly SessionTurn[];
  /** `memory` when the storage given failed (a full quota): nothing more outlives a reload. */
  readonly storage: "persistent" | "memory";
  /** The session's model: what was asked for and what the host said. */
  readonly model: SessionModel;
}
