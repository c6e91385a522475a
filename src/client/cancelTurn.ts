/**
 * cancelTurn: ask the host to cancel a turn, then wait for the turn's OWN terminal.
 * Only an `already_terminal` rejection reads as "already done"; every other one throws.
 */
import { MspError } from "../errors.js";
import { boundedWait } from "../internal/boundedWait.js";
import { timeBudget } from "../internal/timeBudget.js";
import { Commands } from "@muse-code/protocol";
import type { WaitOptions } from "../types/waitOptions.js";
import type { CancelOutcome, CancelTurnParams, TurnCanceller } from "./turnClient.js";

/** One `turn/cancel` on the wire, shared by every concurrent caller with the same turn and keepInbox. */
interface SharedCancel {
  readonly ack: Promise<CancelOutcome["ack"]>;
  /** Aborts the shared command once every joined caller has stopped waiting for it. */
  readonly controller: AbortController;
  waiting: number;
}

/** A client's `turn/cancel`s in flight, by turn and keepInbox. The client that sends them owns it. */
export type CancelsInFlight = Map<string, SharedCancel>;

/**
 * Cancel a turn and resolve with its real terminal. `timeoutMs` (default: the client's
 * `defaultTimeoutMs`, 60 000) bounds the whole operation, ack and terminal together.
 * A client with its own `cancelTurn` (an `MspClient`) runs it: concurrent cancels of one turn
 * with the same `keepInbox` then share one `turn/cancel` request; each caller keeps its own bound
 * and signal, and the request is abandoned only when every caller has given up on it.
 *
 * @example
 * ```ts
 * const { ack, turnCompleted } = await cancelTurn(client, { sessionId, turnId }, { timeoutMs: 10_000 });
 * console.log(ack, turnCompleted.terminal); // "accepted" "cancelled", or "already_terminal" "completed"
 * ```
 */
export function cancelTurn(client: TurnCanceller, params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
  return client.cancelTurn?.(params, options) ?? cancelSharing(client, new Map(), params, options);
}

/** {@link cancelTurn}, joining the request for the same turn and keepInbox in `inFlight` when there is one. */
export async function cancelSharing(client: TurnCanceller, inFlight: CancelsInFlight, params: CancelTurnParams, options: WaitOptions): Promise<CancelOutcome> {
  const left = timeBudget(options, client.defaultTimeoutMs);
  const { turnId } = params;
  const shared = sharedCancel(client, inFlight, params);
  shared.waiting += 1;
  const wait = boundedWait<CancelOutcome["ack"]>(`cancelling turn ${turnId}`, { method: Commands.turnCancel, turnId }, options, client.defaultTimeoutMs, () => {
    shared.waiting -= 1;
    if (shared.waiting === 0) shared.controller.abort();
  });
  shared.ack.then(wait.resolve, wait.reject);
  const ack = await wait.promise;
  const turnCompleted = await client.turns.terminalOf(turnId, left());
  return { ack, turnCompleted };
}

/** The in-flight `turn/cancel` for this turn and keepInbox, sending one if there is none. */
function sharedCancel(client: TurnCanceller, inFlight: CancelsInFlight, params: CancelTurnParams): SharedCancel {
  const key = `${params.turnId}${params.keepInbox === true ? "\u0000keepInbox" : ""}`;
  const existing = inFlight.get(key);
  if (existing !== undefined) return existing;
  const commandParams: { sessionId: string; turnId: string; keepInbox?: boolean } = { sessionId: params.sessionId, turnId: params.turnId };
  if (params.keepInbox !== undefined) commandParams.keepInbox = params.keepInbox;
  const controller = new AbortController();
  // Unbounded by time on its own: each caller's bound applies to its own wait.
  const ack = client.command(Commands.turnCancel, commandParams, { timeoutMs: Infinity, signal: controller.signal }).then(
    () => "accepted" as const,
    (error: unknown) => {
      if (MspError.is(error) && error.isAlreadyTerminal()) return "already_terminal" as const;
      throw error;
    },
  );
  const entry: SharedCancel = { ack, controller, waiting: 0 };
  inFlight.set(key, entry);
  const forget = () => {
    if (inFlight.get(key) === entry) inFlight.delete(key);
  };
  ack.then(forget, forget);
  return entry;
}
