/**
 * MspClient: the public domain object of one connection to an MSP host. It sends commands,
 * holds the turn recorder, item ledger and approvals (through the MSP dispatcher) that were
 * listening from the first byte, and starts and cancels turns.
 */
import type { MessageReader, MessageWriter } from "vscode-jsonrpc";
import { asyncDispose } from "../internal/asyncDispose.js";
import type { WaitOptions } from "../internal/boundedWait.js";
import { ensureRuntime } from "../internal/runtime.js";
import { isObject, uuidv7, type CommandMap, type CommandParams, type CommandResult } from "@muse-code/protocol";
import { JsonRpcEndpoint, type CloseInfo } from "../rpc/jsonRpcEndpoint.js";
import type { ApprovalHandler, TurnApprovals } from "../turns/approvals.js";
import type { TurnItems } from "../turns/itemLedger.js";
import { MspDispatcher, type TableCapacities } from "../turns/mspDispatcher.js";
import type { MspEventEmitter, NotificationHandler } from "../turns/mspEvents.js";
import type { RecordedTurns } from "../turns/turnRecorder.js";
import { cancelTurn, type CancelOutcome, type CancelTurnParams } from "./cancelTurn.js";
import type { TurnClient } from "./turnClient.js";
import { startTurn, type StartTurnParams, type TurnHandle } from "./turnHandle.js";

declare global {
  interface SymbolConstructor {
    /**
     * The key of an object's `await using` dispose method (explicit resource management). The
     * same declaration as TypeScript's `esnext.disposable` lib and `@types/node` make, with which it
     * merges: it lets apps whose `lib` lacks `esnext.disposable` (and that check library types)
     * compile against this package's `[Symbol.asyncDispose]()`.
     */
    readonly asyncDispose: unique symbol;
  }
}

/**
 * Options of an {@link MspClient}: the default bound of every command and wait, and the
 * capacity of every table it keeps, so its memory is a function of these, not of what the host sends.
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
 * A connected MSP client. Usually made by {@link connect}, `connectWebSocket` or `spawnHost`;
 * construct it yourself over any vscode-jsonrpc reader and writer pair to plug in a transport of
 * your own (the framing's readers and writers are in `@muse-code/sdk/framing`).
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
   * Send a command and wait, bounded, for its result. Fills in `commandId` (UUIDv7) when
   * missing. Rejects with `MspError`: `commandRejected`, `rpcError`, `timeout`, `aborted`,
   * `connectionClosed` or `protocol`; with a `TypeError` for a bad method or params. The result is
   * delivered after every notification that preceded it on the wire.
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
   * Set the single, replace-only notification handler (pass `undefined` to remove it). It runs
   * after the recorder, the ledger and the typed events, so replacing it can never make a
   * terminal slip past.
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
   * Set the single, replace-only answerer of the host's `tool/approve` questions (pass
   * `undefined` to remove it). The handler gets `(request, { signal })` and returns
   * `{ decision, reason? }` or a promise of one; every question is answered exactly once:
   * - with no handler, `deny` (reason "no approval handler");
   * - a handler that throws or rejects, `deny` with its message;
   * - `cancelled`, by the SDK itself, when the question is withdrawn first: this client cancels
   *   the turn (the answer goes before the `turn/cancel`), the turn ends, the host moves the item
   *   off `pending`, or the connection closes. `signal` then aborts, and whatever the handler
   *   returns later is ignored.
   *
   * A UI that answers from its own dialog (through `client.approvals` or
   * `StopController.answer`) installs a handler that leaves the question open:
   * `client.onApproval(() => new Promise(() => {}))`.
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
   * The host's open `tool/approve` questions, read-only: `openOf(turnId)` and `size`. Each
   * question's `answer()` answers it; `approvalAsked` and `approvalAnswered` on {@link MspClient.events}
   * say when one opens and closes.
   */
  get approvals(): TurnApprovals {
    return this.#dispatcher.approvals;
  }

  /**
   * The last `viewCursor` this client saw for a session: pass it as `afterCursor` to
   * `session/resume` after a reconnect, and nothing is lost or replayed twice. Still readable
   * after the connection closed.
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

  /**
   * The bound every command and wait uses when the caller gives no `timeoutMs`.
   * @unit milliseconds
   */
  get defaultTimeoutMs(): number {
    return this.#endpoint.defaultTimeoutMs;
  }

  /** Commands sent and not yet settled. */
  get pendingCount(): number {
    return this.#endpoint.pendingCount;
  }

  /**
   * The client itself, so the cookbook's spelling `msp.connection.command(…)` and
   * `msp.connection.onNotification(…)` works as written.
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

  /**
   * Start a turn. Returns at once with a {@link TurnHandle}; its `cancel()` is safe even before
   * the host's ack.
   *
   * @example
   * ```ts
   * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
   * ```
   */
  startTurn(params: StartTurnParams, options: WaitOptions = {}): TurnHandle {
    return startTurn(this, params, uuidv7, options);
  }

  /**
   * Cancel a turn by id and resolve with its real terminal; see {@link cancelTurn}.
   *
   * @example
   * ```ts
   * const { ack, turnCompleted } = await client.cancelTurn({ sessionId, turnId });
   * ```
   */
  cancelTurn(params: CancelTurnParams, options: WaitOptions = {}): Promise<CancelOutcome> {
    return cancelTurn(this, params, options);
  }

  /**
   * Close the connection. Every pending command and wait settles with `connectionClosed`; no
   * timer or listener is left behind. Idempotent. The tables that serve a live connection are
   * emptied: pending and abandoned commands, waiters, the item ledger, followed sessions and known
   * turns. Two stay readable, each bounded by its capacity, because recovering after a crash reads
   * them: `turns.get(turnId)` (a recorded terminal is still true) and `lastViewCursor(sessionId)`
   * (the `afterCursor` of the `session/resume` on the next connection). The same happens however
   * the connection closes: by `close()`, or because the host ended or stopped reading.
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
    // The `await using` method, under Symbol.asyncDispose where the runtime has it, else under
    // Symbol.for("Symbol.asyncDispose") (see internal/asyncDispose.ts). Its type is declared by the
    // interface below, so the public type reads `[Symbol.asyncDispose]()` whatever the runtime key.
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
   * `await using`: leaving the block closes the client as {@link MspClient.close} does (a
   * spawned host is also stopped), even when the block throws.
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
