/**
 * TurnHandle: one started turn, as a UI holds it. `accepted` is the host's ack, `completed`
 * the turn's own end, and `cancel()` works even while `turn/start` is still in flight.
 */
import { bounded, type WaitOptions } from "../internal/boundedWait.js";
import { Commands, type CommandResult, type TurnCompletedParams, type TurnInput } from "@muse-code/protocol";
import { cancelTurn, type CancelOutcome } from "./cancelTurn.js";
import type { TurnClient } from "./turnClient.js";

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
 * const { turnCompleted } = await turn.cancel(options);
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
 * const { terminal } = await turn.completed;          // the turn's own turn/completed
 * ```
 */
export class TurnHandle {
  /** The `commandId` of this turn's `turn/start`; MSP hosts use it as the turnId. */
  readonly commandId: string;
  /** The session the turn belongs to. */
  readonly sessionId: string;
  /** The host's ack. Rejects with `MspError` when `turn/start` fails (already observed: no unhandled rejection). */
  readonly accepted: Promise<TurnStartResult>;
  /** The client the turn runs on: its approvals and events are the turn's too (`StopController` reads them). */
  readonly client: TurnClient;
  #turnId: string | undefined;
  #completed: Promise<TurnCompletedParams> | undefined;

  /** @internal Use {@link MspClient.startTurn}. */
  constructor(client: TurnClient, accepted: Promise<TurnStartResult>, params: { sessionId: string; commandId: string }) {
    this.client = client;
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
   * The params of the turn's own `turn/completed` (`terminal`, `reason`, …). Waits for as long as
   * the turn runs, and settles with `connectionClosed` if the connection closes first. For a time
   * bound use {@link TurnHandle.waitForTerminal}.
   *
   * @example
   * ```ts
   * const { terminal, reason } = await turn.completed; // "cancelled", "cancelled during tool execution"
   * ```
   */
  get completed(): Promise<TurnCompletedParams> {
    this.#completed ??= this.waitForTerminal({ timeoutMs: Infinity });
    return this.#completed;
  }

  /**
   * The turn's terminal, bounded by `timeoutMs` (default: the client's `defaultTimeoutMs`, 60 000; the wait for
   * the ack included) and `signal`.
   *
   * @example
   * ```ts
   * const t = await turn.waitForTerminal({ timeoutMs: 30_000 });
   * ```
   */
  async waitForTerminal(options: WaitOptions = {}): Promise<TurnCompletedParams> {
    const { ack, rest } = await this.#acked(options);
    return this.client.turns.terminalOf(ack.turnId, rest);
  }

  /**
   * Cancel this turn and resolve with its real terminal. Called before the ack, the cancel is
   * held and sent once the turnId is known. `already_terminal` resolves as done. `timeoutMs`
   * (default: the client's `defaultTimeoutMs`) bounds the whole operation, the wait for the ack included.
   *
   * @example
   * ```ts
   * const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 10_000 });
   * ```
   */
  async cancel(options: TurnCancelOptions = {}): Promise<CancelOutcome> {
    const { keepInbox, ...waitOptions } = options;
    const { ack, rest } = await this.#acked(waitOptions);
    // An absent keepInbox stays absent on the wire: cancelTurn sends it only when set.
    return cancelTurn(this.client, { sessionId: this.sessionId, turnId: ack.turnId, keepInbox }, rest);
  }

  /**
   * Steer this turn while it runs (MSP 2.1 `turn/steer`): `input` joins the turn's inbox, and the
   * model sees it at its next step boundary. Resolves with `{turnId, steerId}` (`steerId`, this
   * command's commandId, names the steering `message` item); the outcome is on the stream: the
   * item completes `completed` (consumed), or `cancelled` (discarded by a cancel, or
   * `carriedOver` into the next turn). Rejects with an `MspError` of kind `commandRejected`:
   * `already_terminal` (`data.terminal` says how the turn ended), `turn_not_running` (queued, or
   * being cancelled), `inbox_full`, `unknown_turn`. `timeoutMs` (default: the client's
   * `defaultTimeoutMs`) bounds the whole call, the wait for the ack included. (To retry with the
   * same `commandId`, send `client.command("turn/steer", …)` yourself.)
   *
   * @example
   * ```ts
   * const { steerId } = await turn.steer([{ type: "text", text: "use pnpm, not npm" }], { timeoutMs: 10_000 });
   * ```
   */
  async steer(input: TurnInput[], options: WaitOptions = {}): Promise<CommandResult<"turn/steer">> {
    const { ack, rest } = await this.#acked(options);
    return this.client.command(Commands.turnSteer, { sessionId: this.sessionId, turnId: ack.turnId, input }, rest);
  }

  /** Wait for the ack within the caller's bound; returns the bound that is left. */
  async #acked(options: WaitOptions): Promise<{ ack: TurnStartResult; rest: WaitOptions }> {
    const started = Date.now();
    const budget = options.timeoutMs ?? this.client.defaultTimeoutMs;
    const ack = await bounded(this.accepted, "waiting for the turn/start ack", { method: Commands.turnStart, commandId: this.commandId }, options, budget);
    const rest: WaitOptions = { timeoutMs: Math.max(0, budget - (Date.now() - started)) };
    if (options.signal !== undefined) rest.signal = options.signal;
    return { ack, rest };
  }
}

/** Send `turn/start` and wrap it in a {@link TurnHandle}. */
export function startTurn(client: TurnClient, params: StartTurnParams, commandIdFactory: () => string, options: WaitOptions = {}): TurnHandle {
  const commandId = params.commandId ?? commandIdFactory();
  const accepted = client.command(Commands.turnStart, { sessionId: params.sessionId, input: params.input, commandId }, options);
  return new TurnHandle(client, accepted, { sessionId: params.sessionId, commandId });
}
