/**
 * TurnClient: the narrow face of a client that a TurnHandle, cancelTurn and StopController need.
 * `MspClient` is one; so is anything that forwards these members to one (a wrapper, a test double).
 */
import type { CommandParams, CommandResult, TurnCompletedParams } from "@muse-code/protocol";
import type { TurnApprovals } from "../turns/approvals.js";
import type { MspEventEmitter } from "../turns/mspEvents.js";
import type { RecordedTurns } from "../turns/turnRecorder.js";
import type { WaitOptions } from "../types/waitOptions.js";

/**
 * What `turn/cancel` needs. `keepInbox: true` keeps queued turns alive.
 *
 * @example
 * ```ts
 * const params: CancelTurnParams = { sessionId, turnId, keepInbox: true };
 * const { turnCompleted } = await client.cancelTurn(params, { timeoutMs: 10_000 });
 * ```
 */
export interface CancelTurnParams {
  sessionId: string;
  turnId: string;
  keepInbox?: boolean | undefined;
}

/**
 * The outcome of a cancel: how the host answered, and the turn's own `turn/completed`.
 * `ack: "already_terminal"` means the turn finished first; `turnCompleted.terminal` says how.
 *
 * @example
 * ```ts
 * const outcome: CancelOutcome = await turn.cancel({ timeoutMs: 10_000 });
 * if (outcome.ack === "already_terminal") console.log(`it finished first: ${outcome.turnCompleted.terminal}`);
 * ```
 */
export interface CancelOutcome {
  /** How the host answered `turn/cancel`: it will try (`accepted`), or the turn had already ended. */
  ack: "accepted" | "already_terminal";
  /** The params of the turn's own `turn/completed`: `terminal`, `reason`, `cause`, `durationMs`. */
  turnCompleted: TurnCompletedParams;
}

/**
 * What turn-level code needs of a client: the two turn commands, the recorded terminals, the
 * open approvals, the events and the default bound. An `MspClient` is a `TurnClient`.
 *
 * @example
 * ```ts
 * function showQuestions(client: TurnClient, turnId: string): void {
 *   client.events.on("approvalAsked", () => console.log(client.approvals.openOf(turnId).length, "open"));
 * }
 * showQuestions(client, turnId);
 * ```
 */
export interface TurnClient {
  /** Send `turn/start`, `turn/cancel` or `turn/steer`; see `MspClient.command`. */
  command<M extends "turn/start" | "turn/cancel" | "turn/steer">(method: M, params: CommandParams<M>, options?: WaitOptions): Promise<CommandResult<M>>;
  /** Every turn's recorded terminal: `get(turnId)` and bounded `terminalOf(turnId)`. */
  readonly turns: RecordedTurns;
  /** The open `tool/approve` questions: `openOf(turnId)`. */
  readonly approvals: TurnApprovals;
  /** The typed events. */
  readonly events: MspEventEmitter;
  /** The bound of a wait whose caller gives no `timeoutMs`. @unit milliseconds */
  readonly defaultTimeoutMs: number;
  /**
   * The client's own cancel, which {@link cancelTurn} runs when present: an `MspClient`'s shares
   * one `turn/cancel` among concurrent cancels of a turn. A wrapper forwards it to its client's.
   */
  cancelTurn?(params: CancelTurnParams, options?: WaitOptions): Promise<CancelOutcome>;
}

/**
 * The narrowest client {@link cancelTurn} takes: a way to send `turn/cancel`, the recorded
 * terminals, the default bound, and the client's own `cancelTurn` when it has one.
 *
 * @example
 * ```ts
 * async function stop(client: TurnCanceller, sessionId: string, turnId: string) {
 *   return (await cancelTurn(client, { sessionId, turnId })).turnCompleted.terminal;
 * }
 * ```
 */
export type TurnCanceller = Pick<TurnClient, "command" | "turns" | "defaultTimeoutMs" | "cancelTurn">;
