/**
 * TurnHandle: one started turn, as a UI holds it. `accepted` is the host's ack, `terminal`
 * the turn's own end, and `cancel()` works even while `turn/start` is still in flight.
 */
import type { MspConnection } from "../connection.js";
import { bounded, type WaitOptions } from "../internal/boundedWait.js";
import { Commands, type CommandResult, type TurnCompletedParams, type TurnInput } from "../protocol/index.js";
import { cancelTurnOn, type CancelOutcome } from "./cancelTurn.js";

/**
 * Params of {@link MspClient.startTurn}. `commandId` (and so the turnId) is generated when missing.
 *
 * @example
 * ```ts
 * const params: StartTurnParams = { sessionId, input: [{ type: "text", text: "Run the tests" }] };
 * const turn = client.startTurn(params);
 * ```
 */
export interface StartTurnParams {
  sessionId: string;
  input: TurnInput[];
  commandId?: string;
}

/**
 * The host's ack of `turn/start`.
 *
 * @example
 * ```ts
 * const ack: TurnStartResult = await turn.accepted;
 * console.log(ack.turnId, ack.disposition); // disposition is "started" or "queued"
 * ```
 */
export type TurnStartResult = CommandResult<"turn/start">;

/**
 * Options of {@link TurnHandle.cancel}.
 *
 * @example
 * ```ts
 * const options: TurnCancelOptions = { keepInbox: true, timeoutMs: 10_000 };
 * const { terminal } = await turn.cancel(options);
 * ```
 */
export interface TurnCancelOptions extends WaitOptions {
  /** Keep queued turns alive (by default a cancel discards them, each with its own terminal). */
  keepInbox?: boolean;
}

/**
 * A turn started with {@link MspClient.startTurn}.
 *
 * @example
 * ```ts
 * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "hi" }] });
 * button.onclick = () => void turn.cancel();          // safe before the ack, too
 * const terminal = await turn.terminal;               // the turn's own turn/completed
 * ```
 */
export class TurnHandle {
  /** The `commandId` of this turn's `turn/start`; MSP hosts use it as the turnId. */
  readonly commandId: string;
  /** The session the turn belongs to. */
  readonly sessionId: string;
  /** The host's ack. Rejects with `MspError` when `turn/start` fails (already observed: no unhandled rejection). */
  readonly accepted: Promise<TurnStartResult>;
  readonly #connection: MspConnection;
  #turnId: string | undefined;
  #terminal: Promise<TurnCompletedParams> | undefined;

  /** @internal Use {@link MspClient.startTurn}. */
  constructor(connection: MspConnection, accepted: Promise<TurnStartResult>, params: { sessionId: string; commandId: string }) {
    this.#connection = connection;
    connections.set(this, connection);
    this.commandId = params.commandId;
    this.sessionId = params.sessionId;
    this.accepted = accepted.then((ack) => {
      this.#turnId = ack.turnId;
      return ack;
    });
    this.accepted.catch(() => {});
  }

  /** The turnId from the ack, or `undefined` until the ack arrives. */
  get turnId(): string | undefined {
    return this.#turnId;
  }

  /**
   * The turn's terminal. Waits for as long as the turn runs, and settles with
   * `connectionClosed` if the connection closes first. For a time bound use {@link waitForTerminal}.
   */
  get terminal(): Promise<TurnCompletedParams> {
    this.#terminal ??= this.waitForTerminal({ timeoutMs: Infinity });
    return this.#terminal;
  }

  /**
   * The turn's terminal, bounded by `timeoutMs` (default: the connection's, 60 000; the wait for
   * the ack included) and `signal`.
   *
   * @example
   * ```ts
   * const t = await turn.waitForTerminal({ timeoutMs: 30_000 });
   * ```
   */
  async waitForTerminal(options: WaitOptions = {}): Promise<TurnCompletedParams> {
    const { ack, rest } = await this.#acked(options);
    return this.#connection.turns.terminalOf(ack.turnId, rest);
  }

  /**
   * Cancel this turn and resolve with its real terminal. Called before the ack, the cancel is
   * held and sent once the turnId is known. `already_terminal` resolves as done. `timeoutMs`
   * (default: the connection's) bounds the whole operation, the wait for the ack included.
   *
   * @example
   * ```ts
   * const { ack, terminal } = await turn.cancel({ timeoutMs: 10_000 });
   * ```
   */
  async cancel(options: TurnCancelOptions = {}): Promise<CancelOutcome> {
    const { keepInbox, ...waitOptions } = options;
    const { ack, rest } = await this.#acked(waitOptions);
    // An absent keepInbox stays absent on the wire: cancelTurnOn sends it only when set.
    return cancelTurnOn(this.#connection, { sessionId: this.sessionId, turnId: ack.turnId, keepInbox }, rest);
  }

  /** Wait for the ack within the caller's bound; returns the bound that is left. */
  async #acked(options: WaitOptions): Promise<{ ack: TurnStartResult; rest: WaitOptions }> {
    const started = Date.now();
    const budget = options.timeoutMs ?? this.#connection.defaultTimeoutMs;
    const ack = await bounded(this.accepted, "waiting for the turn/start ack", { method: Commands.turnStart, commandId: this.commandId }, options, budget);
    const rest: WaitOptions = { timeoutMs: Math.max(0, budget - (Date.now() - started)) };
    if (options.signal !== undefined) rest.signal = options.signal;
    return { ack, rest };
  }
}

const connections = new WeakMap<TurnHandle, MspConnection>();

/** The connection a turn runs on (`undefined` for an object that is not a real TurnHandle). */
export function connectionOf(turn: TurnHandle): MspConnection | undefined {
  return connections.get(turn);
}

/** Send `turn/start` and wrap it in a {@link TurnHandle}. */
export function startTurn(connection: MspConnection, params: StartTurnParams, commandIdFactory: () => string, options: WaitOptions = {}): TurnHandle {
  const commandId = params.commandId ?? commandIdFactory();
  const accepted = connection.command(Commands.turnStart, { sessionId: params.sessionId, input: params.input, commandId }, options);
  return new TurnHandle(connection, accepted, { sessionId: params.sessionId, commandId });
}
