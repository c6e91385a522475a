/**
 * TurnClient: the narrow face of a client that a TurnHandle, cancelTurn and StopController need.
 * `MspClient` is one; so is anything that forwards these members to one (a wrapper, a test double).
 */
import type { WaitOptions } from "../internal/boundedWait.js";
import type { CommandParams, CommandResult } from "@muse-code/protocol";
import type { TurnApprovals } from "../turns/approvals.js";
import type { MspEventEmitter } from "../turns/mspEvents.js";
import type { RecordedTurns } from "../turns/turnRecorder.js";

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
}

/**
 * The narrowest client {@link cancelTurn} takes: a way to send `turn/cancel`, the recorded
 * terminals, and the default bound.
 *
 * @example
 * ```ts
 * async function stop(client: TurnCanceller, sessionId: string, turnId: string) {
 *   return (await cancelTurn(client, { sessionId, turnId })).turnCompleted.terminal;
 * }
 * ```
 */
export type TurnCanceller = Pick<TurnClient, "command" | "turns" | "defaultTimeoutMs">;
