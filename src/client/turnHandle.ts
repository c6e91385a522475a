/**
 * TurnHandle: one started turn, as a UI holds it. `accepted` is the host's ack, `completed`
 * the turn's own end, and `cancel()` works even while `turn/start` is still in flight.
 */
import { bounded } from "../internal/boundedWait.js";
import { timeBudget } from "../internal/timeBudget.js";
import { Commands, type CommandResult, type TurnCompletedParams, type TurnInput } from "@muse-code/protocol";
import type { WaitOptions } from "../types/waitOptions.js";
import { cancelTurn } from "./cancelTurn.js";
import type { CancelOutcome, TurnClient } from "./turnClient.js";

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
  /** The host's ack; rejects with an `MspError` when `turn/start` fails (observed, so never unhandled). */
  readonly accepted: Promise<TurnStartResult>;
  /** The client the turn runs on, whose approvals and events `StopController` reads. */
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
   * The params of the turn's own `turn/completed`, however long the turn runs; `connectionClosed`
   * if the connection closes first. {@link TurnHandle.waitForTerminal} bounds the wait.
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
   * The turn's terminal, bounded by `timeoutMs` (default: the client's `defaultTimeoutMs`), the wait
   * for the ack included, and `signal`.
   */
  async waitForTerminal(options: WaitOptions = {}): Promise<TurnCompletedParams> {
    const { ack, rest } = await this.#acked(options);
    return this.client.turns.terminalOf(ack.turnId, rest);
  }

  /**
   * Cancel this turn and resolve with its real terminal (`already_terminal` counts as done). Before
   * the ack, the cancel waits for the turnId. `timeoutMs` (default: the client's
   * `defaultTimeoutMs`) bounds it all, the ack included.
   */
  async cancel(options: TurnCancelOptions = {}): Promise<CancelOutcome> {
    const { keepInbox, ...waitOptions } = options;
    const { ack, rest } = await this.#acked(waitOptions);
    // An absent keepInbox stays absent on the wire: cancelTurn sends it only when set.
    return cancelTurn(this.client, { sessionId: this.sessionId, turnId: ack.turnId, keepInbox }, rest);
  }

  /**
   * Steer this turn while it runs (MSP 2.1 `turn/steer`): the model sees `input` at its next step
   * boundary. Resolves with `{turnId, steerId}`; `steerId` names the steering `message` item, which
   * completes `completed` (consumed) or `cancelled` (discarded, or `carriedOver` to the next turn).
   * Rejects with `commandRejected`: `already_terminal` (`data.terminal`), `turn_not_running`
   * (queued, or being cancelled), `inbox_full`, `unknown_turn`. `timeoutMs` (default: the client's
   * `defaultTimeoutMs`) bounds it all, the ack included. To retry with one `commandId`, send
   * `client.command("turn/steer", …)`.
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

  /** Waits for the ack within the caller's bound; `rest` is what is left of it. */
  async #acked(options: WaitOptions): Promise<{ ack: TurnStartResult; rest: WaitOptions }> {
    const left = timeBudget(options, this.client.defaultTimeoutMs);
    const ack = await bounded(
      this.accepted,
      "waiting for the turn/start ack",
      { method: Commands.turnStart, commandId: this.commandId },
      options,
      this.client.defaultTimeoutMs,
    );
    return { ack, rest: left() };
  }
}

/** Send `turn/start` and wrap it in a {@link TurnHandle}. */
export function startTurn(client: TurnClient, params: StartTurnParams, commandIdFactory: () => string, options: WaitOptions = {}): TurnHandle {
  const commandId = params.commandId ?? commandIdFactory();
  const accepted = client.command(Commands.turnStart, { sessionId: params.sessionId, input: params.input, commandId }, options);
  return new TurnHandle(client, accepted, { sessionId: params.sessionId, commandId });
}
