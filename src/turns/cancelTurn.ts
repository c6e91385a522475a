/**
 * cancelTurn: ask the host to cancel a turn, then wait for the turn's OWN terminal.
 * Only an `already_terminal` rejection reads as "already done"; every other one throws.
 */
import type { MspConnection } from "../connection.js";
import { MspError } from "../errors.js";
import { withSignal, type WaitOptions } from "../internal/boundedWait.js";
import { Commands, type TurnCompletedParams } from "../protocol/index.js";

/**
 * What `turn/cancel` needs. `keepInbox: true` keeps queued turns alive.
 *
 * @example
 * ```ts
 * const params: CancelTurnParams = { sessionId, turnId, keepInbox: true };
 * const { terminal } = await client.cancelTurn(params, { timeoutMs: 10_000 });
 * ```
 */
export interface CancelTurnParams {
  sessionId: string;
  turnId: string;
  keepInbox?: boolean;
}

/**
 * The outcome of a cancel: how the host answered, and the turn's real terminal.
 * `ack: "already_terminal"` means the turn finished first; its `terminal` says how.
 *
 * @example
 * ```ts
 * const outcome: CancelOutcome = await turn.cancel({ timeoutMs: 10_000 });
 * if (outcome.ack === "already_terminal") console.log(`it finished first: ${outcome.terminal.terminal}`);
 * ```
 */
export interface CancelOutcome {
  ack: "accepted" | "already_terminal";
  terminal: TurnCompletedParams;
}

/**
 * Anything with an MSP connection: an `MspClient`, or `{ connection }`.
 *
 * @example
 * ```ts
 * const msp: HasConnection = { connection: client.connection };
 * const { terminal } = await cancelTurn(msp, { sessionId, turnId });
 * ```
 */
export interface HasConnection {
  readonly connection: MspConnection;
}

const inFlight = new WeakMap<MspConnection, Map<string, Promise<CancelOutcome["ack"]>>>();

/**
 * Cancel a turn and resolve with its real terminal. `timeoutMs` (default: the connection's,
 * 60 000) bounds the whole operation, ack and terminal together. Concurrent cancels of one
 * turn share one `turn/cancel` request (the first caller's `keepInbox` is sent); each caller
 * keeps its own bound and signal.
 *
 * @example
 * ```ts
 * const { ack, terminal } = await cancelTurn(msp, { sessionId, turnId }, { timeoutMs: 10_000 });
 * console.log(ack, terminal.terminal); // "accepted" "cancelled", or "already_terminal" "completed"
 * ```
 */
export async function cancelTurn(msp: HasConnection, params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
  const connection = msp.connection;
  const started = Date.now();
  const { turnId } = params;
  let shared = inFlight.get(connection);
  if (shared === undefined) {
    shared = new Map();
    inFlight.set(connection, shared);
  }
  let request = shared.get(turnId);
  if (request === undefined) {
    const commandParams: { sessionId: string; turnId: string; keepInbox?: boolean } = { sessionId: params.sessionId, turnId };
    if (params.keepInbox !== undefined) commandParams.keepInbox = params.keepInbox;
    const requests = shared;
    request = connection.command(Commands.turnCancel, commandParams, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }).then(
      () => "accepted" as const,
      (error: unknown) => {
        if (MspError.is(error) && error.isAlreadyTerminal()) return "already_terminal" as const;
        throw error;
      },
    );
    requests.set(turnId, request);
    const forget = () => {
      if (requests.get(turnId) === request) requests.delete(turnId);
    };
    request.then(forget, forget);
  }
  const ack = await withSignal(request, `cancelling turn ${turnId}`, { turnId }, options.signal);
  const waitOptions: WaitOptions = {};
  if (options.signal !== undefined) waitOptions.signal = options.signal;
  if (options.timeoutMs !== undefined) waitOptions.timeoutMs = Math.max(0, options.timeoutMs - (Date.now() - started));
  const terminal = await connection.turns.terminalOf(turnId, waitOptions);
  return { ack, terminal };
}
