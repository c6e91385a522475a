/**
 * The seam between a session and what runs its turns. The session keeps the log, the inbox,
 * `turn/started`, the terminal, cancellation and steering; a turn driver runs one turn's work
 * (a scripted model here, an agent behind a bridge) and speaks through the turn's context.
 */
import type { ApprovalOffer, NotificationMethod, ToolCallItem, TurnInput, TurnUsage } from "@muse-code/protocol";
import { TurnReasons } from "@muse-code/protocol/reasons.js";
import type { SessionLog } from "../log/sessionLog.js";
import type { ChildTurnSpec } from "./childTurnSpec.js";

/** Where a running turn is: the point its cancel is reported at (`turn/completed.reason`). */
export type CancelPoint = "promptAssembly" | "stepBoundary" | "modelStream" | "toolExecution" | "approval";

/** The `turn/completed.reason` of a turn cancelled at each point. */
export const cancelReasons: Readonly<Record<CancelPoint, string>> = {
  promptAssembly: TurnReasons.cancelledDuringPromptAssembly,
  stepBoundary: TurnReasons.cancelledAtStepBoundary,
  modelStream: TurnReasons.cancelledDuringModelStream,
  toolExecution: TurnReasons.cancelledDuringToolExecution,
  approval: TurnReasons.cancelledAwaitingApproval,
};

/** One turn as its driver sees it, and the session's means to speak for it. */
export interface TurnContext {
  readonly turnId: string;
  readonly input: readonly TurnInput[];
  /** The turn's number in its session, from 0. */
  readonly index: number;
  readonly modelName: string;
  /** Set on a child turn: its parent link, depth and agent script. */
  readonly child: ChildTurnSpec | undefined;
  /** Aborted with the winning `CancelCause` when the turn is cancelled. */
  readonly signal: AbortSignal;
  /** The session's log, for backpressure (a stream waits while too many records are not durable). */
  readonly log: Pick<SessionLog, "unsynced" | "durable">;
  /** Logs one notification of this turn and publishes it once durable; its params, or `undefined` when it could not be logged. */
  emit(method: NotificationMethod, body: Record<string, unknown>): Record<string, unknown> | undefined;
  /**
   * Asks the client about a tool call the driver started (`item`, already sent), through the
   * session's grants and approval gate, bound to the turn's signal: resolves with the item
   * `approved` (the call may run), or `undefined` once the session closed it (denied, or withdrawn
   * by a stop, or by `withdraw`: the driver's own withdrawal, when its agent took the question
   * back or ended the turn while it was open); the item's later state is the returned one.
   */
  approve(item: ToolCallItem, decisions?: readonly ApprovalOffer[], withdraw?: AbortSignal): Promise<ToolCallItem | undefined>;
  /** Says where the turn is now: a cancel observed from here on is reported at `point`. */
  at(point: CancelPoint): void;
  /** Says which step of its plan the turn is in (the phase machine's step). */
  step(index: number): void;
  /** The turn reports usage from now on (a turn that never calls it sends none). */
  declareUsage(): void;
  /** Adds one step's usage (when usage is declared). */
  addUsage(usage: TurnUsage | undefined): void;
  /** Stops the turn as a policy stop (`cause: {kind: "hook", reason}`), through the same drain as a user's Stop. */
  stopByHook(reason: string): void;
  /** Waits (at most `ms`, or until the turn is cancelled) for steering input to be pending. */
  whenSteering(ms: number): Promise<void>;
  /** Takes in every pending steering input (each completes `consumed`); returns their texts. */
  takeSteering(): string[];
  /** The steering texts this turn has taken in so far, carried-over ones first. */
  readonly heard: readonly string[];
}

/**
 * What a driver's completed turn says beyond completing: `reason`, its `turn/completed.reason`
 * (default `"completed"`), e.g. an ACP agent's `max_tokens` stopReason.
 *
 * @example
 * ```ts
 * const outcome: TurnOutcome = { reason: "max_tokens" };
 * ```
 */
export interface TurnOutcome {
  reason?: string;
}

/**
 * Runs turns. `run` resolves when the turn's work is over (its tools, processes and child turns
 * are gone), throws when it failed, and, once `turn.signal` aborted, settles only after everything
 * it started has stopped: the session sends the terminal right after.
 */
export interface TurnDriver {
  run(turn: TurnContext): Promise<TurnOutcome | void>;
  /** Set when the driver cannot take steering input: every `turn/steer` of its session is refused `steering_unsupported`, with this as the message. */
  readonly refusesSteering?: string;
  /** Stops what the driver keeps between turns (a bridge's agent process); called when its session is disposed or unloaded. */
  close?(): Promise<void>;
  /**
   * Hands steering text to the agent running turn `turnId` (a bridge), before the session accepts
   * the `turn/steer`: resolves `undefined` once the agent took it, or with the agent's refusal in
   * its words (the steer is then refused `turn_not_running`, nothing logged). The accepted input
   * waits in the inbox until the driver takes it (`takeSteering`) as the agent consumes it.
   * Without it, steering waits in the inbox for the driver's own step boundaries.
   */
  steer?(turnId: string, text: string): Promise<string | undefined>;
}

/**
 * Thrown by a driver whose turn must end `failed` even when a stop was asked: its processes could
 * not be confirmed gone (never `cancelled` over a live process), the agent never confirmed the
 * cancel, or the agent had already ended the turn by itself (a stop does not relabel the agent's
 * own end). The session ends the turn `failed` with its message.
 *
 * @example
 * ```ts
 * throw new TurnStopFailedError("tool process 4242 (sleep 47) could not be confirmed gone 3000 ms after SIGKILL");
 * ```
 */
export class TurnStopFailedError extends Error {
  override readonly name = "TurnStopFailedError";
}
