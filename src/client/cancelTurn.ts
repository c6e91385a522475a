/**
 * cancelTurn: ask the host to cancel a turn, then wait for the turn's OWN terminal.
 * Only an `already_terminal` rejection reads as "already done"; every other one throws.
 */
import { MspError } from "../errors.js";
import { boundedWait, timeoutProblem, type WaitOptions } from "../internal/boundedWait.js";
import { Commands, type TurnCompletedParams } from "@muse-code/protocol";
import type { TurnCanceller } from "./turnClient.js";

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

/** One `turn/cancel` on the wire, shared by every concurrent caller with the same turn and keepInbox. */
interface SharedCancel {
  readonly ack: Promise<CancelOutcome["ack"]>;
  /** Aborts the shared command once every joined caller has stopped waiting for it. */
  readonly controller: AbortController;
  waiting: number;
}

const inFlight = new WeakMap<TurnCanceller, Map<string, SharedCancel>>();

/**
 * Cancel a turn and resolve with its real terminal. `timeoutMs` (default: the client's
 * `defaultTimeoutMs`, 60 000) bounds the whole operation, ack and terminal together.
 * Concurrent cancels of one turn with the same `keepInbox` share one `turn/cancel` request;
 * each caller keeps its own bound and signal, and the request is abandoned only when every
 * caller has given up on it.
 *
 * @example
 * ```ts
 * const { ack, turnCompleted } = await cancelTurn(client, { sessionId, turnId }, { timeoutMs: 10_000 });
 * console.log(ack, turnCompleted.terminal); // "accepted" "cancelled", or "already_terminal" "completed"
 * ```
 */
export async function cancelTurn(client: TurnCanceller, params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
  const started = Date.now();
  const budget = options.timeoutMs ?? client.defaultTimeoutMs;
  // The caller's mistake is found before anything is sent.
  const badTimeout = timeoutProblem(budget);
  if (badTimeout !== undefined) throw badTimeout;
  const { turnId } = params;
  const shared = sharedCancel(client, params);
  shared.waiting += 1;
  const wait = boundedWait<CancelOutcome["ack"]>(`cancelling turn ${turnId}`, { method: Commands.turnCancel, turnId }, options, budget, () => {
    shared.waiting -= 1;
    if (shared.waiting === 0) shared.controller.abort();
  });
  shared.ack.then(wait.resolve, wait.reject);
  const ack = await wait.promise;
  const waitOptions: WaitOptions = { timeoutMs: Math.max(0, budget - (Date.now() - started)) };
  if (options.signal !== undefined) waitOptions.signal = options.signal;
  const turnCompleted = await client.turns.terminalOf(turnId, waitOptions);
  return { ack, turnCompleted };
}

/** The in-flight `turn/cancel` for this turn and keepInbox, sending one if there is none. */
function sharedCancel(client: TurnCanceller, params: CancelTurnParams): SharedCancel {
  let requests = inFlight.get(client);
  if (requests === undefined) {
    requests = new Map();
    inFlight.set(client, requests);
  }
  const key = `${params.turnId}${params.keepInbox === true ? "\u0000keepInbox" : ""}`;
  const existing = requests.get(key);
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
  const map = requests;
  map.set(key, entry);
  const forget = () => {
    if (map.get(key) === entry) map.delete(key);
  };
  ack.then(forget, forget);
  return entry;
}
