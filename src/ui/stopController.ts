/**
 * StopController: the state machine behind a Stop button. It shows "stopping" from the click
 * until the turn's OWN terminal arrives, treats a lost race (already_terminal) as done, and
 * reports every other failure. It also carries the turn's open `tool/approve` question, so the
 * same snapshot renders the dialog, and a Stop with the dialog open answers it `cancelled` first. Framework-neutral; `subscribe`/`getSnapshot` suit React's
 * useSyncExternalStore. Subscribers are isolated: one that throws is reported and cannot break
 * the others or `stop()`.
 */
import { MspError, type AnyMspError } from "../errors.js";
import { SafeEmitter } from "../internal/safeEmitter.js";
import type { ApprovalDecision, TurnCompletedParams } from "@muse-code/protocol";
import type { CancelOutcome } from "../client/turnClient.js";
import type { TurnHandle } from "../client/turnHandle.js";
import type { ApprovalQuestion } from "../turns/approvals.js";

/**
 * The states of a Stop button's turn:
 * - `starting`: `turn/start` sent, no ack yet (Stop works: it is held until the ack);
 * - `running`: acked, no terminal yet;
 * - `stopping`: Stop pressed, waiting for the turn's own terminal;
 * - `ended`: the turn reached its terminal (see `snapshot.turnCompleted`);
 * - `failed`: the turn could not start, the stop failed, or the connection closed. After a stop
 *   that timed out (the turn may still be running) `canStop` is true again: Stop can be retried,
 *   and the turn's terminal, when it comes, still moves the state to `ended`.
 *
 * @example
 * ```ts
 * const stop = new StopController(turn);
 * stop.subscribe((s) => {
 *   if (s.state === StopStates.stopping) status.textContent = "Stopping…";
 *   if (s.state === StopStates.ended) status.textContent = `ended: ${s.turnCompleted?.terminal}`;
 * });
 * ```
 */
export const StopStates = {
  starting: "starting",
  running: "running",
  stopping: "stopping",
  ended: "ended",
  failed: "failed",
} as const;

/**
 * One of {@link StopStates}.
 *
 * @example
 * ```ts
 * const labels: Record<StopState, string> = { starting: "Stop", running: "Stop", stopping: "Stopping…", ended: "Done", failed: "Error" };
 * const stop = new StopController(turn);
 * button.textContent = labels[stop.getSnapshot().state];
 * ```
 */
export type StopState = (typeof StopStates)[keyof typeof StopStates];

/**
 * An immutable view of a {@link StopController}; a new object on every change.
 *
 * @example
 * ```ts
 * const stop = new StopController(turn);
 * stop.subscribe((s: StopSnapshot) => {
 *   button.disabled = !s.canStop;
 *   if (s.state === "failed") console.error(MspError.is(s.error) ? s.error.kind : s.error?.name, s.error?.message);
 * });
 * ```
 */
export interface StopSnapshot {
  readonly state: StopState;
  /** True while pressing Stop would do something (`starting` or `running`). */
  readonly canStop: boolean;
  /** The params of the turn's own `turn/completed`, once `ended`. */
  readonly turnCompleted?: TurnCompletedParams;
  /** How the host answered the Stop, if it was pressed: `accepted` or `already_terminal` (the race). */
  readonly ack?: CancelOutcome["ack"];
  /**
   * The turn's open `tool/approve` question (the oldest, if the host asked several), until it is
   * answered or withdrawn; never set once `ended`. Render the dialog from `approval.request`
   * (`tool`, `args`) and answer with {@link StopController.answer}. A Stop answers it `cancelled`
   * before it sends `turn/cancel`.
   */
  readonly approval?: ApprovalQuestion;
  /**
   * What went wrong, when `failed`: an {@link MspError} for a runtime failure (timeout,
   * rejection, closed connection, …), or the `TypeError`/`RangeError` itself when the turn
   * failed on the caller's own mistake (e.g. `startTurn` with unserializable input or a
   * negative `timeoutMs`). Never relabelled.
   */
  readonly error?: AnyMspError | TypeError | RangeError;
}

/**
 * Options of a {@link StopController}. Checked when the controller is built: a bad value throws
 * there (`TypeError` for a wrong type, `RangeError` for a negative or NaN `stopTimeoutMs`), so
 * `stop()` itself never has to reject.
 *
 * @example
 * ```ts
 * const stop = new StopController(turn, {
 *   stopTimeoutMs: 10_000,
 *   onSubscriberError: (error) => console.warn("the Stop button failed to render", error),
 * });
 * ```
 */
export interface StopControllerOptions {
  /**
   * Bound on a stop: ack plus terminal. `Infinity` waits for as long as the connection lives.
   * @unit milliseconds
   * @defaultValue 30 000
   */
  stopTimeoutMs?: number;
  /**
   * Receives whatever a subscriber throws. The throw never reaches `stop()` or the other
   * subscribers, which still see the change. Default: `console.error`.
   */
  onSubscriberError?: (error: unknown) => void;
}

/**
 * Drives a Stop button for one turn. `stop()` never rejects; the constructor throws a
 * `TypeError`/`RangeError` on bad arguments (see {@link StopControllerOptions}).
 *
 * @example
 * ```ts
 * const turn = client.startTurn({ sessionId, input });
 * const stop = new StopController(turn);
 * stop.subscribe((s) => {
 *   button.disabled = !s.canStop;
 *   status.textContent = s.state === "ended" ? `stopped: ${s.turnCompleted?.terminal}` : s.state;
 * });
 * button.onclick = () => void stop.stop();
 * ```
 */
export class StopController {
  readonly #turn: TurnHandle;
  readonly #listeners: SafeEmitter<{ change: [StopSnapshot] }>;
  readonly #stopTimeoutMs: number;
  #snapshot: StopSnapshot = { state: StopStates.starting, canStop: true };
  #stopping: Promise<StopSnapshot> | undefined;
  /** The turn's terminal, once it arrived (kept even while a stop is pending). */
  #terminal: TurnCompletedParams | undefined;
  /** The open question the snapshot shows. */
  #approval: ApprovalQuestion | undefined;

  constructor(turn: TurnHandle, options: StopControllerOptions = {}) {
    // The caller's mistakes throw here, synchronously, before any async work: stop() keeps "never rejects".
    if (typeof turn !== "object" || turn === null || typeof turn.cancel !== "function")
      throw new TypeError("StopController: turn must be a TurnHandle (from client.startTurn)");
    const { stopTimeoutMs = 30_000, onSubscriberError } = options;
    if (typeof stopTimeoutMs !== "number") throw new TypeError(`StopController: stopTimeoutMs must be a number of milliseconds, got ${typeof stopTimeoutMs}`);
    if (!(stopTimeoutMs >= 0)) throw new RangeError(`StopController: stopTimeoutMs must be a non-negative number of milliseconds, got ${stopTimeoutMs}`);
    if (onSubscriberError !== undefined && typeof onSubscriberError !== "function") throw new TypeError("StopController: onSubscriberError must be a function");
    this.#turn = turn;
    this.#stopTimeoutMs = stopTimeoutMs;
    this.#listeners = new SafeEmitter((error) => reportSubscriberError(error, onSubscriberError));
    turn.accepted.then(
      () => {
        if (this.#snapshot.state === StopStates.starting) this.#set({ state: StopStates.running, canStop: true });
      },
      (error: unknown) => this.#fail(error),
    );
    // The turn's questions, while it runs: every approval event of its client refreshes `approval`.
    // A stand-in for a TurnHandle (a test double, a wrapper) may have no such client: no questions then.
    const { approvals, events } = (turn.client ?? {}) as Partial<TurnHandle["client"]>;
    const asks = typeof approvals?.openOf === "function" && typeof events?.on === "function" ? { approvals, events } : undefined;
    const refresh = () => {
      const [open] = asks?.approvals.openOf(turn.turnId ?? turn.commandId) ?? [];
      if (open === this.#approval) return;
      this.#approval = open;
      const { approval: _, ...rest } = this.#snapshot;
      this.#set(rest);
    };
    asks?.events.on("approvalAsked", refresh).on("approvalAnswered", refresh);
    refresh(); // a question asked before this controller existed (a reload's re-ask)
    const forget = () => asks?.events.off("approvalAsked", refresh).off("approvalAnswered", refresh);
    turn.completed.then(
      (terminal) => {
        forget();
        this.#end(terminal);
      },
      (error: unknown) => {
        forget();
        if (this.#snapshot.state !== StopStates.stopping) this.#fail(error);
      },
    );
  }

  /** The current snapshot (stable between changes). */
  getSnapshot(): StopSnapshot {
    return this.#snapshot;
  }

  /**
   * Call `listener` on every change. Returns the unsubscribe function. A listener that throws is
   * reported to `onSubscriberError` (default `console.error`); the others still run.
   *
   * @example
   * ```ts
   * const stop = new StopController(turn);
   * const off = stop.subscribe((s) => (status.textContent = s.state));
   * off(); // the listener is not called again
   * ```
   */
  subscribe(listener: (snapshot: StopSnapshot) => void): () => void {
    // A function subscribed twice is still called once per change (subscriptions are a set).
    this.#listeners.off("change", listener);
    this.#listeners.on("change", listener);
    return () => void this.#listeners.off("change", listener);
  }

  /**
   * Press Stop. Idempotent: pressing again shares the first press. Resolves with the snapshot
   * once the turn has ended (or the stop failed); never rejects.
   *
   * @example
   * ```ts
   * const stop = new StopController(turn);
   * const { state, turnCompleted } = await stop.stop(); // "ended", { terminal: "cancelled", … }
   * ```
   */
  stop(): Promise<StopSnapshot> {
    if (this.#stopping !== undefined) return this.#stopping;
    if (!this.#snapshot.canStop) return Promise.resolve(this.#snapshot);
    // The open question is answered `cancelled` now, before `turn/cancel` goes out (the connection
    // does the same for any other open question of this turn, as it sends the cancel).
    const open = this.#approval;
    this.#approval = undefined;
    this.#set({ state: StopStates.stopping, canStop: false });
    open?.answer("cancelled", "turn cancelled");
    this.#stopping = this.#turn.cancel({ timeoutMs: this.#stopTimeoutMs }).then(
      (outcome) => {
        this.#end(outcome.turnCompleted, outcome.ack);
        return this.#snapshot;
      },
      (error: unknown) => {
        if (this.#terminal !== undefined) {
          // The turn's own terminal already arrived: that is the outcome, whatever the cancel did.
          this.#set(endedSnapshot(this.#terminal));
        } else {
          const retryable = MspError.is(error) && (error.kind === "timeout" || error.kind === "aborted");
          this.#stopping = undefined; // a later press is a new attempt
          this.#fail(error, retryable);
        }
        return this.#snapshot;
      },
    );
    return this.#stopping;
  }

  /**
   * Answer the turn's open question (the snapshot's `approval`): `true` when this call answered
   * it, `false` when there is none or it was already answered or withdrawn. Throws a `TypeError`
   * for a decision that is not `approve`, `deny` or `cancelled`.
   *
   * @example
   * ```ts
   * const stop = new StopController(turn);
   * client.onApproval(() => new Promise(() => {})); // the dialog answers, through the controller
   * stop.subscribe((s) => {
   *   if (s.approval !== undefined) status.textContent = `Allow ${s.approval.request.tool} ${s.approval.request.args}?`;
   * });
   * button.onclick = () => stop.answer("approve");
   * ```
   */
  answer(decision: ApprovalDecision, reason?: string): boolean {
    return this.#approval?.answer(decision, reason) ?? false;
  }

  #end(terminal: TurnCompletedParams, ack?: CancelOutcome["ack"]): void {
    this.#terminal = terminal;
    if (this.#snapshot.state === StopStates.ended) {
      if (ack !== undefined && this.#snapshot.ack === undefined) this.#set({ ...this.#snapshot, ack });
      return;
    }
    if (this.#snapshot.state === StopStates.stopping && ack === undefined) return; // the cancel's outcome will say
    this.#set(endedSnapshot(terminal, ack));
  }

  /** Fail, unless the turn already ended. `canStop` stays true when the turn may still be running (a stop that timed out). */
  #fail(error: unknown, canStop = false): void {
    if (this.#snapshot.state === StopStates.ended) return;
    if (this.#snapshot.state === StopStates.failed && !this.#snapshot.canStop) return;
    this.#set({ state: StopStates.failed, canStop, error: stopError(error) });
  }

  #set(snapshot: StopSnapshot): void {
    const approval = this.#approval;
    if (approval !== undefined && snapshot.state !== StopStates.ended) snapshot = { ...snapshot, approval };
    this.#snapshot = snapshot;
    this.#listeners.emit("change", snapshot);
  }
}

/** The snapshot of a turn that ended with `turnCompleted` (and the Stop's `ack`, when it was pressed). */
function endedSnapshot(turnCompleted: TurnCompletedParams, ack?: CancelOutcome["ack"]): StopSnapshot {
  const snapshot = { state: StopStates.ended, canStop: false, turnCompleted };
  return ack === undefined ? snapshot : { ...snapshot, ack };
}

/**
 * The snapshot's `error`: an MspError or the caller's own TypeError/RangeError as they are.
 * Anything else (the SDK rejects with nothing else) is wrapped, with the original as `cause`.
 */
function stopError(error: unknown): AnyMspError | TypeError | RangeError {
  if (MspError.is(error) || error instanceof TypeError || error instanceof RangeError) return error;
  return new MspError("protocol", String(error), { problem: String(error) }, { cause: error });
}

/** Hand a subscriber's throw to the user's callback, else (or if that throws too) to the console. */
function reportSubscriberError(error: unknown, onSubscriberError: ((error: unknown) => void) | undefined): void {
  if (onSubscriberError !== undefined) {
    try {
      onSubscriberError(error);
      return;
    } catch (reporterError) {
      console.error("@muse-code/sdk: StopController onSubscriberError threw", reporterError);
    }
  }
  console.error("@muse-code/sdk: a StopController subscriber threw", error);
}
