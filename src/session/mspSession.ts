/**
 * MspSession: one MSP session that outlives its connections (the public face of what
 * `openSession` makes), and the handle of a turn started on it.
 */
import type { WaitOptions } from "../types/waitOptions.js";
import type { ApprovalDecision, CommandResult, TurnInput } from "@muse-code/protocol";
import type { SessionSnapshot, SessionTurn } from "./sessionSnapshot.js";

/**
 * What `MspSession.startTurn` returns: the turn's id, its Stop, and a bounded wait for its end.
 *
 * @example
 * ```ts
 * const started = session.startTurn("Run the tests");
 * button.onclick = () => started.stop();
 * const { phase, terminal } = await started.settled({ timeoutMs: 120_000 });
 * ```
 */
export interface SessionTurnHandle {
  /** The turn's id (the commandId of its `turn/start`). */
  readonly turnId: string;
  /** Press Stop: one `turn/cancel`, however often it is called, sent now or after the reconnect. */
  stop(): void;
  /**
   * Steer the running turn (MSP 2.1 `turn/steer`): see {@link MspSession.steer}.
   *
   * @example
   * ```ts
   * const started = session.startTurn("Run the tests");
   * const { steerId } = await started.steer("use pnpm, not npm", { timeoutMs: 10_000 });
   * ```
   */
  steer(input: string | readonly TurnInput[], options?: WaitOptions): Promise<CommandResult<"turn/steer">>;
  /**
   * The turn once it is over: `ended` (its terminal arrived) or `unknown` (the session gave up, or
   * the host refused its `turn/start`). Bounded by
   * `timeoutMs` (default: no limit) and `signal`; rejects with `MspError` `aborted` when the
   * session closes first.
   */
  settled(options?: WaitOptions): Promise<SessionTurn>;
}

/**
 * One MSP session over as many connections as it takes: made by `openSession`. Read it with
 * `getSnapshot()`/`subscribe()` (ready for React's `useSyncExternalStore`; both are bound, so
 * they can be passed around as they are), act with `startTurn()`, `stop()` and
 * `answerApproval()`, end it with `close()`. It keeps the turns across drops, reloads and host
 * restarts, reconnects with backoff, resumes from the last cursor, re-attaches unfinished turns by
 * retrying their `turn/start` commandId, and sends a Stop pressed while disconnected once it is
 * back. Only the host ends a turn.
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 *
 * const chat: MspSession = await openSession({ connect: () => connectWebSocket(url, { token }), storage: sessionStorage });
 * chat.subscribe(() => render(chat.getSnapshot()));
 * const started = chat.startTurn("Summarize the failing tests");
 * button.onclick = () => started.stop();
 * ```
 */
export interface MspSession {
  /** The current snapshot: immutable, the same object until something changes. */
  readonly getSnapshot: () => SessionSnapshot;
  /** Call `listener` after every change; returns the unsubscribe function. */
  readonly subscribe: (listener: () => void) => () => void;
  /** True once `close()` was called. */
  readonly isClosed: boolean;
  /**
   * Start a turn: a text prompt or MSP input. It shows as `starting` at once; `turn/start` is sent
   * now, or after the reconnect when the connection is down (with the same commandId, so the host
   * runs it once). Throws a TypeError for an empty input, MspError `aborted` after `close()`.
   */
  startTurn(input: string | readonly TurnInput[]): SessionTurnHandle;
  /** The handle of a turn the session shows (after a reload, a turn it restored), or undefined. */
  turn(turnId: string): SessionTurnHandle | undefined;
  /**
   * Press Stop for `turnId`. One `turn/cancel` is sent however often it is pressed, now or once the
   * session is back (right after the resume's answer, before any question is answered); the turn
   * shows `stopping` until its own terminal, and `stopState` says where the Stop is. A Stop is
   * final: every question of the turn is answered `cancelled` (now, or when the host asks again),
   * and shows `withdrawing` until the host closes it. Nothing happens for a turn that is over or
   * not shown.
   */
  stop(turnId: string): void;
  /**
   * Answer the open question about `itemId`, and return the decision that stands. Sent at once
   * when it is open on the live connection; otherwise kept, and sent when the host asks again
   * after the reconnect. Any decision the question offers (`SessionApproval.decisions`):
   * `approve`, `approveForSession`, `deny`, `denyAndStop`; `cancelled` is always allowed. Once
   * Stop was pressed for its turn, any answer is `cancelled` (the Stop came first) and that is
   * what it returns. Throws a TypeError for a decision it did not offer (a 2.0 host offers only
   * `approve` and `deny`).
   *
   * @example
   * ```ts
   * const [question] = session.getSnapshot().turns.flatMap((t) => t.approvals);
   * if (question !== undefined && session.answerApproval(question.itemId, "approve") === "cancelled") status.textContent = "You stopped this turn: nothing runs.";
   * ```
   */
  answerApproval(itemId: string, decision: ApprovalDecision, reason?: string): ApprovalDecision;
  /**
   * Run `model` from the next turn on (`session/setModel`): sent now when the connection is open,
   * else after the reconnect, with the same commandId, so the host switches once. The snapshot's
   * `model` shows it `requested` until the host accepts it (then `current`), or `refused` with the
   * host's message (`unknown_model`). Throws a TypeError for a name that is not a non-empty string,
   * MspError `aborted` after `close()`.
   *
   * @example
   * ```ts
   * const picker = document.querySelector("select") as HTMLSelectElement;
   * picker.onchange = () => session.setModel(picker.value);
   * ```
   */
  setModel(model: string): void;
  /**
   * Steer the running turn `turnId` (MSP 2.1 `turn/steer`): a text or MSP input, seen by the model
   * at its next step boundary; resolves with `{turnId, steerId}`. Sent only on a live connection:
   * while the session is disconnected it rejects at once with `MspError` `connectionClosed`, and is
   * not kept for the reconnect (steering is meant for the step running now; after a drop the turn
   * may have moved on or ended, so the user decides again). Rejects with `commandRejected` when the
   * host refuses it (`already_terminal` with `data.terminal`, `turn_not_running`, `inbox_full`),
   * `timeout` past `timeoutMs` (default: the connection's `defaultTimeoutMs`), `aborted` on
   * `signal` or after `close()`, and throws a TypeError for an empty input (no parts, or only
   * empty text).
   *
   * @example
   * ```ts
   * await session.steer(turnId, "only the unit tests", { timeoutMs: 10_000 });
   * ```
   */
  steer(turnId: string, input: string | readonly TurnInput[], options?: WaitOptions): Promise<CommandResult<"turn/steer">>;
  /** Retry now, when waiting to reconnect or after giving up (the attempt count starts again); resolves when that attempt is over. */
  retryNow(): Promise<void>;
  /**
   * Close the session: the connection closes, retries stop, what is shown is written to storage
   * (so a reload resumes it), and waits for turns reject. The host goes on running its turns.
   */
  close(): Promise<void>;
  /** `await using session = await openSession(…)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}
