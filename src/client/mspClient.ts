/**
 * MspClient: what a user holds of one connection to an MSP host. It sends commands, starts and
 * cancels turns, and reads the state the dispatcher has kept since the first byte.
 */
import type { MessageReader, MessageWriter } from "vscode-jsonrpc";
import { asyncDispose } from "../internal/asyncDispose.js";
import { ensureRuntime } from "../internal/runtime.js";
import { isObject, uuidv7, type CommandMap, type CommandParams, type CommandResult } from "@muse-code/protocol";
import { JsonRpcEndpoint } from "../rpc/jsonRpcEndpoint.js";
import type { ApprovalHandler, TurnApprovals } from "../turns/approvals.js";
import type { TurnItems } from "../turns/itemLedger.js";
import { MspDispatcher, type TableCapacities } from "../turns/mspDispatcher.js";
import type { MspEventEmitter, NotificationHandler } from "../turns/mspEvents.js";
import type { RecordedTurns } from "../turns/turnRecorder.js";
import type { CloseInfo } from "../types/closeInfo.js";
import type { WaitOptions } from "../types/waitOptions.js";
import { cancelSharing, type CancelsInFlight } from "./cancelTurn.js";
import type { CancelOutcome, CancelTurnParams, TurnClient } from "./turnClient.js";
import { startTurn, type StartTurnParams, type TurnHandle } from "./turnHandle.js";

declare global {
  interface SymbolConstructor {
    /**
     * The key of the `await using` dispose method, declared as the `esnext.disposable` lib does (the
     * two merge), so apps whose `lib` lacks it compile against `[Symbol.asyncDispose]()`.
     */
    readonly asyncDispose: unique symbol;
  }
}

/**
 * Options of an {@link MspClient}: the default bound of every wait, and the capacity of every
 * table it keeps (its memory depends on these, not on what the host sends).
 *
 * @example
 * ```ts
 * const client = connect(channel, { defaultTimeoutMs: 30_000, terminalCapacity: 1_000, itemTurnCapacity: 100, sessionCapacity: 500 });
 * ```
 */
export interface MspClientOptions extends TableCapacities {
  /** Default bound of every command and wait. @unit milliseconds @defaultValue 60 000 */
  defaultTimeoutMs?: number;
}

/**
 * A connected MSP client, made by {@link connect}, `connectWebSocket` or `spawnHost`, or over any
 * vscode-jsonrpc reader and writer pair (a transport of your own; see `@muse-code/sdk/framing`).
 *
 * @example
 * ```ts
 * const client = connect(channel);
 * const { sessionId } = await client.command("session/create", {});
 * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "hello" }] });
 * console.log((await turn.completed).terminal);
 * await client.close();
 * ```
 * @example
 * ```ts
 * import { MspClient } from "@muse-code/sdk";
 * import { NdjsonMessageReader, NdjsonMessageWriter } from "@muse-code/sdk/framing";
 *
 * const client = new MspClient(new NdjsonMessageReader(channel), new NdjsonMessageWriter(channel));
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the interface MspClient below types the method the static block defines
export class MspClient implements TurnClient {
  /** Typed events (any number of subscribers): `client.events.on("turn/completed", …)`. */
  readonly events: MspEventEmitter;
  /** Resolves (never rejects) once the connection has closed, with why. */
  readonly closed: Promise<CloseInfo>;
  readonly #endpoint: JsonRpcEndpoint;
  readonly #dispatcher: MspDispatcher;
  /** The `turn/cancel`s in flight: concurrent cancels of one turn join one request. */
  readonly #cancels: CancelsInFlight = new Map();

  constructor(reader: MessageReader, writer: MessageWriter, options: MspClientOptions = {}) {
    ensureRuntime();
    const defaultTimeoutMs = options.defaultTimeoutMs ?? 60_000;
    const dispatcher = (this.#dispatcher = new MspDispatcher({ ...options, defaultTimeoutMs }, (id, body) => this.#endpoint.reply(id, body)));
    // The dispatcher is the endpoint's one sink, installed before any command can be sent.
    this.#endpoint = new JsonRpcEndpoint(reader, writer, dispatcher, defaultTimeoutMs);
    this.events = dispatcher.events;
    this.closed = this.#endpoint.closed;
    // Last: a reader may deliver at once, and the dispatcher answers through the endpoint.
    this.#endpoint.listen();
  }

  /**
   * Send a command and wait, bounded, for its result, which comes after every notification that
   * preceded it on the wire. `commandId` (UUIDv7) is filled in when missing. Rejects with an
   * `MspError` (`commandRejected`, `rpcError`, `timeout`, `aborted`, `connectionClosed`, `protocol`),
   * or a `TypeError` for a bad method or params.
   *
   * @example
   * ```ts
   * const { sessionId } = await client.command("session/create", {});
   * const ack = await client.command("turn/start", { sessionId, input }, { timeoutMs: 5_000 });
   * console.log(ack.turnId);
   * ```
   */
  command<M extends keyof CommandMap>(method: M, params: CommandParams<M>, options?: WaitOptions): Promise<CommandResult<M>>;
  command(method: string, params?: Record<string, unknown>, options?: WaitOptions): Promise<Record<string, unknown>>;
  command(method: string, params: Record<string, unknown> = {}, options: WaitOptions = {}): Promise<Record<string, unknown>> {
    if (typeof method !== "string" || method.length === 0) return Promise.reject(new TypeError("command: method must be a non-empty string"));
    if (!isObject(params)) return Promise.reject(new TypeError(`command ${method}: params must be a plain object`));
    const closeError = this.#endpoint.closeError;
    if (closeError !== undefined) return Promise.reject(closeError);
    const commandId = typeof params["commandId"] === "string" ? params["commandId"] : uuidv7();
    return this.#endpoint.request(method, { ...params, commandId }, options, this.#dispatcher.noteCommand(method, params, commandId));
  }

  /**
   * Set the one notification handler (`undefined` removes it). It runs after the recorder, the
   * ledger and the typed events, so replacing it never lets a terminal slip past.
   *
   * @example
   * ```ts
   * client.onNotification((n) => {
   *   if (isTurnCompleted(n.params)) console.log(n.params.turnId, n.params.terminal);
   * });
   * ```
   */
  onNotification(handler: NotificationHandler | undefined): void {
    this.#dispatcher.handler = handler;
  }

  /**
   * Set the one answerer of the host's `tool/approve` questions (`undefined` removes it): it gets
   * `(request, { signal })` and returns `{ decision, reason? }`, or a promise of one. Each question
   * is answered once: `deny` with no handler ("no approval handler") or when it throws (its
   * message); `cancelled` by the SDK when the question is withdrawn first (this client cancels the
   * turn, answering before the `turn/cancel`; the turn ends; the item leaves `pending`; the
   * connection closes), which aborts `signal` and ignores what the handler returns later. A UI that
   * answers from its own dialog (`client.approvals`, `StopController.answer`) leaves the question
   * open: `client.onApproval(() => new Promise(() => {}))`.
   *
   * @example
   * ```ts
   * const askTheUser = (question: string, signal: AbortSignal) => new Promise<boolean>((resolve) => {
   *   signal.addEventListener("abort", () => resolve(false)); // withdrawn: close the dialog
   *   resolve(confirm(question));
   * });
   * client.onApproval(async (request, { signal }) => {
   *   const allowed = await askTheUser(`Run ${request.tool} ${request.args}?`, signal);
   *   return allowed ? { decision: "approve" } : { decision: "deny", reason: "the user said no" };
   * });
   * ```
   */
  onApproval(handler: ApprovalHandler | undefined): void {
    this.#dispatcher.approvalHandler = handler;
  }

  /** Every turn's terminal, read-only: `get(turnId)` and bounded `terminalOf(turnId)`. */
  get turns(): RecordedTurns {
    return this.#dispatcher.turns;
  }

  /** Every item of recent turns at its latest revision, read-only: `itemsOf(turnId)` and `get(turnId, itemId)`. */
  get items(): TurnItems {
    return this.#dispatcher.items;
  }

  /**
   * The host's open `tool/approve` questions, read-only: `openOf(turnId)` and `size`; each one's
   * `answer()` answers it. The `approvalAsked` and `approvalAnswered` events say when one opens and closes.
   */
  get approvals(): TurnApprovals {
    return this.#dispatcher.approvals;
  }

  /**
   * The last `viewCursor` this client saw for a session, readable after the close: as the next
   * connection's `session/resume` `afterCursor`, nothing is lost or replayed twice.
   *
   * @example
   * ```ts
   * async function resume(old: MspClient, fresh: MspClient, sessionId: string): Promise<void> {
   *   const afterCursor = old.lastViewCursor(sessionId);
   *   await fresh.command("session/resume", afterCursor === undefined ? { sessionId } : { sessionId, afterCursor });
   * }
   * ```
   */
  lastViewCursor(sessionId: string): string | undefined {
    return this.#dispatcher.lastViewCursor(sessionId);
  }

  /** True once the connection has closed. */
  get isClosed(): boolean {
    return this.#endpoint.closeError !== undefined;
  }

  /** Aborts when the connection closes; its `reason` is the `connectionClosed` MspError. */
  get signal(): AbortSignal {
    return this.#endpoint.signal;
  }

  /** The bound of every command and wait whose caller gives no `timeoutMs`. @unit milliseconds */
  get defaultTimeoutMs(): number {
    return this.#endpoint.defaultTimeoutMs;
  }

  /** Commands sent and not yet settled. */
  get pendingCount(): number {
    return this.#endpoint.pendingCount;
  }

  /**
   * The client itself, so the cookbook's `msp.connection.command(…)` works as written.
   *
   * @example
   * ```ts
   * msp.connection.onNotification((n) => console.log(n.method));
   * const ack = await msp.connection.command("turn/start", { sessionId, input });
   * ```
   */
  get connection(): this {
    return this;
  }

  /** Start a turn: a {@link TurnHandle} at once, whose `cancel()` is safe even before the host's ack. */
  startTurn(params: StartTurnParams, options: WaitOptions = {}): TurnHandle {
    return startTurn(this, params, uuidv7, options);
  }

  /** Cancel a turn by id and resolve with its real terminal; see {@link cancelTurn}. */
  cancelTurn(params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
    return cancelSharing(this, this.#cancels, params, options);
  }

  /**
   * Close the connection (idempotent): every pending command and wait settles with
   * `connectionClosed`, and no timer or listener is left. Any close (this one, the host ending or
   * not reading) empties the live tables but two, which recovery reads, each bounded by its
   * capacity: `turns.get(turnId)` and `lastViewCursor(sessionId)`.
   *
   * @example
   * ```ts
   * const info = await client.close(); // { reason: "closed by the client" }
   * ```
   */
  close(reason = "closed by the client"): Promise<CloseInfo> {
    this.#endpoint.close({ reason });
    return this.closed;
  }

  static {
    // The `await using` method, under the runtime's Symbol.asyncDispose or its stand-in
    // (internal/asyncDispose.ts); the interface below types it as `[Symbol.asyncDispose]()`.
    Object.defineProperty(this.prototype, asyncDispose, {
      value: async function disposeAsync(this: MspClient): Promise<void> {
        await this.close();
      },
      writable: true,
      configurable: true,
    });
  }
}

/** Supports `await using`: leaving the block closes the client. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- merges into the class: the type of the method its static block defines
export interface MspClient {
  /**
   * `await using`: leaving the block, even by a throw, closes the client as {@link MspClient.close}
   * does (and stops a spawned host).
   *
   * @example
   * ```ts
   * {
   *   await using client = connect(channel);
   *   await client.command("host/info", {});
   * } // closed here
   * ```
   */
  [Symbol.asyncDispose](): Promise<void>;
}
