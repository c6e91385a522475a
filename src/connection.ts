/**
 * MspConnection: the one owner of a vscode-jsonrpc MessageConnection, and JSON-RPC mechanics
 * only. It sends commands, maps every failure to a typed MspError, and dispatches each incoming
 * notification, in wire order, to the recorder, the ledger, the typed events and the user's
 * handler. What it knows of sessions lives in SessionTracker; its command tables in PendingCommands.
 */
import type { EventEmitter } from "eventemitter3";
import {
  AbstractMessageReader,
  createMessageConnection,
  Message,
  type DataCallback,
  type Disposable,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
  type NotificationMessage,
  type RequestMessage,
  type ResponseMessage,
} from "vscode-jsonrpc";
import { MspError, MspErrorKinds, type CommandRejectedData, type ConnectionClosedData, type ProtocolData } from "./errors.js";
import type { EndDetails } from "./framing/byteChannel.js";
import type { FramedMessageReader } from "./framing/framedReader.js";
import { MessageEncodingError, WriteBufferFullError } from "./framing/framedWriter.js";
import type { FramingProblem } from "./framing/limits.js";
import { boundedWait, type WaitOptions } from "./internal/boundedWait.js";
import { PendingCommands } from "./internal/pendingCommands.js";
import { ensureRuntime } from "./internal/runtime.js";
import { uuidv7 } from "./protocol/uuidv7.js";
import { SafeEmitter } from "./internal/safeEmitter.js";
import {
  COMMAND_REJECTED_CODE,
  Commands,
  HostRequests,
  Notifications,
  problemWithNotification,
  problemWithToolApprove,
  isObject,
  type CommandMap,
  type CommandParams,
  type CommandResult,
  type Item,
  type ItemNotificationParams,
  type JsonValue,
  type ToolApproveParams,
  type ToolApproveResult,
  type TurnCompletedParams,
  type TurnStartedParams,
} from "./protocol/index.js";
import { Approvals, type ApprovalHandler, type ApprovalQuestion, type TurnApprovals } from "./turns/approvals.js";
import { DEFAULT_ITEMS_PER_TURN_CAPACITY, DEFAULT_ITEM_TURN_CAPACITY, ItemLedger, type LedgerItem, type TurnItems } from "./turns/itemLedger.js";
import { DEFAULT_SESSION_CAPACITY, SessionTracker } from "./turns/sessionTracker.js";
import { DEFAULT_TERMINAL_CAPACITY, TurnRecorder, type TurnTerminals } from "./turns/turnRecorder.js";

/**
 * A notification as the user's handler receives it: `{ method, params }`.
 *
 * @example
 * ```ts
 * client.connection.onNotification((n: MspNotification) => {
 *   if (n.method === "turn/completed") console.log(n.params?.["terminal"]);
 * });
 * ```
 */
export interface MspNotification {
  method: string;
  params: Record<string, unknown> | undefined;
  /**
   * When the host emitted it, read from the message envelope (MSP puts `emittedAtMs` beside
   * `params`, as the seed's wire shows). Absent when the host sent none.
   * @unit milliseconds since the Unix epoch
   */
  emittedAtMs?: number;
}

/**
 * The user's single, replace-only notification handler.
 *
 * @example
 * ```ts
 * const log: NotificationHandler = ({ method, params }) => console.log(method, params);
 * client.connection.onNotification(log);
 * ```
 */
export type NotificationHandler = (notification: MspNotification) => void;

/**
 * Options of {@link MspConnection.command}. `timeoutMs` (milliseconds) defaults to the
 * connection's `defaultTimeoutMs`, 60 000 unless set.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: CommandOptions = { timeoutMs: 5_000, signal: controller.signal };
 * const info = await client.connection.command("host/info", {}, options);
 * ```
 */
export type CommandOptions = WaitOptions;

/**
 * Why and how a connection closed.
 *
 * @example
 * ```ts
 * const info: CloseInfo = await client.closed;
 * console.log(info.reason, info.exitCode ?? info.signal ?? info.closeCode);
 * ```
 */
export interface CloseInfo {
  /** Plain-words reason, e.g. "closed by the client" or "the host closed the connection". */
  reason: string;
  /** Exit code of a child-process host, when known. */
  exitCode?: number | null;
  /** Signal that ended a child-process host, when known. */
  signal?: string | null;
  /**
   * The WebSocket close code, when the host closed a WebSocket connection or it was lost (1006):
   * RFC 6455 §7.4 codes, or the host's own 4000–4999. Absent when the client closed it.
   */
  closeCode?: number;
  /** The WebSocket close reason the host sent with `closeCode` (`""` when it sent none). */
  closeReason?: string;
}

/**
 * The typed events of a connection (eventemitter3: any number of subscribers).
 *
 * @example
 * ```ts
 * client.events.on("turn/completed", (params) => console.log(params.turnId, params.terminal));
 * client.events.on("protocolError", (error) => console.warn(error.data.problem));
 * client.events.once("close", (info) => console.log(`closed: ${info.reason}`));
 * ```
 */
export interface MspEvents {
  /** Every well-formed notification, after the recorder and ledger saw it. */
  notification: [MspNotification];
  "turn/started": [TurnStartedParams];
  "item/started": [ItemNotificationParams];
  "item/updated": [ItemNotificationParams];
  "item/completed": [ItemNotificationParams];
  "turn/completed": [TurnCompletedParams];
  /** The host asked `tool/approve`; the question is in `client.approvals` until answered. */
  approvalAsked: [ApprovalQuestion];
  /** A question was answered, once: by the handler, the app, or the SDK (`cancelled`, when withdrawn). */
  approvalAnswered: [ApprovalQuestion, ToolApproveResult];
  /** An item the host left `inProgress` when its turn ended, now shown as `cancelled`. */
  itemSynthesized: [LedgerItem];
  /** The host sent something MSP does not allow: `error.data.problem` says what, `error.data.message` shows it. */
  protocolError: [MspError<"protocol">];
  /** A response arrived for a command that had already timed out or been aborted. */
  lateResponse: [{ id: number; method: string; response: JsonValue }];
  /** A notification handler or event listener threw. */
  handlerError: [unknown];
  /** The connection closed. Fires once. */
  close: [CloseInfo];
}

/**
 * Options of an {@link MspConnection}. Every table the connection keeps has a capacity, so its
 * memory is a function of these options, not of what the host sends.
 *
 * @example
 * ```ts
 * const client = connect(channel, { defaultTimeoutMs: 30_000, terminalCapacity: 1_000, itemTurnCapacity: 100, sessionCapacity: 500 });
 * ```
 */
export interface MspConnectionOptions {
  /** Default bound of every command and wait. @unit milliseconds @defaultValue 60 000 */
  defaultTimeoutMs?: number;
  /**
   * How many turn terminals to retain, oldest recorded forgotten first; it also bounds the turns
   * the connection remembers as its own (started, cancelled or seen), for the stray-terminal check.
   * @unit turns
   * @defaultValue 10 000
   * @example
   * ```ts
   * const client = connect(channel, { terminalCapacity: 100_000 }); // a long-lived connection that looks terminals up late
   * ```
   */
  terminalCapacity?: number;
  /**
   * How many turns' items the ledger (`client.items`) retains, least recently touched forgotten first.
   * @unit turns
   * @defaultValue 1 000
   * @example
   * ```ts
   * const client = connect(channel, { itemTurnCapacity: 50 }); // a UI that shows the last 50 turns
   * ```
   */
  itemTurnCapacity?: number;
  /**
   * How many items the ledger retains per turn. Past it, the turn's earliest-finished item
   * (completed, failed or cancelled) is forgotten: like a terminal's scrollback, a long turn shows
   * its latest items. An item in progress is never forgotten; in the case no honest host makes,
   * every retained item in progress, a new item is not retained and a `protocolError` says so (its
   * notification is still delivered).
   * @unit items
   * @defaultValue 1 000
   * @example
   * ```ts
   * const client = connect(channel, { itemsPerTurnCapacity: 10_000 }); // agents whose turns run thousands of tool calls
   * ```
   */
  itemsPerTurnCapacity?: number;
  /**
   * How many sessions the connection remembers: each one's last `viewCursor` (for the order check
   * and `lastViewCursor`) and whether it follows it. The least recently active is forgotten first:
   * its next notification is then taken as its first, and `lastViewCursor` returns `undefined` for it.
   * @unit sessions
   * @defaultValue 10 000 (about 1.3 MB at most)
   * @example
   * ```ts
   * const client = connect(channel, { sessionCapacity: 100_000 }); // one connection multiplexing many sessions
   * ```
   */
  sessionCapacity?: number;
}

const CAPACITIES = ["terminalCapacity", "itemTurnCapacity", "itemsPerTurnCapacity", "sessionCapacity"] as const;

/** Throws the RangeError a capacity below 1 (or not a number) gets: callers check before they start anything. */
export function assertCapacities(options: MspConnectionOptions): void {
  for (const name of CAPACITIES) {
    const value: unknown = options[name];
    if (value !== undefined && !(typeof value === "number" && value >= 1)) throw new RangeError(`${name} must be a number at least 1, got ${String(value)}`);
  }
}

/** Forwards host-to-client requests (not part of MSP) to vscode-jsonrpc, which answers "method not found". */
class RequestTap extends AbstractMessageReader {
  #callback: DataCallback | undefined;
  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    return { dispose: () => (this.#callback = undefined) };
  }
  forward(message: Message): void {
    this.#callback?.(message);
  }
  close(): void {
    this.fireClose();
  }
}

/**
 * An MSP connection over any vscode-jsonrpc reader and writer pair. Usually made by
 * {@link connect} or `spawnHost` and reached as `client.connection`; construct it yourself
 * (from `@muse-code/sdk/framing`) to plug in a transport of your own, and wrap it in an `MspClient`.
 *
 * @example
 * ```ts
 * import { MspClient } from "@muse-code/sdk";
 * import { MspConnection, NdjsonMessageReader, NdjsonMessageWriter } from "@muse-code/sdk/framing";
 *
 * const connection = new MspConnection(new NdjsonMessageReader(channel), new NdjsonMessageWriter(channel));
 * const msp = new MspClient(connection);
 * msp.connection.onNotification((n) => console.log(n.method));
 * const ack = await msp.connection.command("turn/start", { sessionId, input });
 * ```
 */
export class MspConnection {
  /** Typed events; subscribe with `events.on(name, listener)`. */
  readonly events: EventEmitter<MspEvents> = new SafeEmitter<MspEvents>((error) => this.#reportHandlerError(error));
  /** Resolves (never rejects) once the connection has closed, with why. */
  readonly closed: Promise<CloseInfo>;

  readonly #reader: MessageReader;
  readonly #writer: MessageWriter;
  readonly #rpc: MessageConnection;
  readonly #tap = new RequestTap();
  readonly #commands = new PendingCommands();
  readonly #turns: TurnRecorder;
  readonly #items: ItemLedger;
  readonly #turnsView: TurnTerminals;
  readonly #itemsView: TurnItems;
  readonly #approvals: Approvals;
  readonly #approvalsView: TurnApprovals;
  readonly #sessions: SessionTracker;
  readonly #abort = new AbortController();
  readonly #defaultTimeoutMs: number;
  readonly #disposables: Disposable[] = [];
  #resolveClosed!: (info: CloseInfo) => void;
  #handler: NotificationHandler | undefined;
  #closeError: MspError<"connectionClosed"> | undefined;
  #fatalProblem: FramingProblem | undefined;

  constructor(reader: MessageReader, writer: MessageWriter, options: MspConnectionOptions = {}) {
    ensureRuntime();
    this.#reader = reader;
    this.#writer = writer;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 60_000;
    assertCapacities(options);
    const terminalCapacity = options.terminalCapacity ?? DEFAULT_TERMINAL_CAPACITY;
    this.#turns = new TurnRecorder({ capacity: terminalCapacity, defaultTimeoutMs: this.#defaultTimeoutMs });
    this.#sessions = new SessionTracker(this.#turns, {
      knownTurnCapacity: terminalCapacity,
      sessionCapacity: options.sessionCapacity ?? DEFAULT_SESSION_CAPACITY,
    });
    this.#items = new ItemLedger({
      turnCapacity: options.itemTurnCapacity ?? DEFAULT_ITEM_TURN_CAPACITY,
      itemsPerTurnCapacity: options.itemsPerTurnCapacity ?? DEFAULT_ITEMS_PER_TURN_CAPACITY,
    });
    // Read-only at runtime too, not only in the type: the views hold no way to the writers.
    const turns = this.#turns;
    const items = this.#items;
    this.#turnsView = Object.freeze({
      get: (turnId: string) => turns.get(turnId),
      terminalOf: (turnId: string, options?: WaitOptions) => turns.terminalOf(turnId, options),
      get waiterCount() {
        return turns.waiterCount;
      },
      get size() {
        return turns.size;
      },
    });
    this.#itemsView = Object.freeze({
      itemsOf: (turnId: string) => items.itemsOf(turnId),
      get: (turnId: string, itemId: string) => items.get(turnId, itemId),
      get turnCount() {
        return items.turnCount;
      },
    });
    const approvals = (this.#approvals = new Approvals({
      answer: (id, result) => this.#reply(id, { result }),
      emit: (event, question, answer) => this.#emit(event, question, answer as ToolApproveResult),
    }));
    this.#approvalsView = Object.freeze({
      openOf: (turnId: string) => approvals.openOf(turnId),
      get size() {
        return approvals.size;
      },
    });
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));

    const problems = (reader as Partial<FramedMessageReader>).onProblem;
    if (problems !== undefined) {
      this.#disposables.push(
        problems((problem) => {
          if (problem.fatal) this.#fatalProblem = problem;
          this.#protocolError(`framing: ${problem.problem}`, problem.text);
          // A malformed answer to a pending command fails that command now, as `protocol`.
          const pending = this.#commands.take(problem.responseId);
          if (pending !== undefined) {
            pending.wait.reject(
              new MspError(MspErrorKinds.protocol, `${pending.method}: malformed response: ${problem.problem}`, {
                problem: problem.problem,
                message: problem.text ?? null,
              }),
            );
          }
        }),
      );
    }
    this.#disposables.push(
      reader.onClose(() => this.#shutdown(this.#endInfo())),
      writer.onError(([error]) => this.#shutdown({ reason: writeFailure(error) })),
      writer.onClose(() => this.#shutdown({ reason: "the transport closed" })),
    );
    // vscode-jsonrpc answers host-to-client requests MSP does not define ("method not found").
    this.#rpc = createMessageConnection(this.#tap, writer);
    this.#rpc.listen();
    // ONE internal handler, installed before any command can be sent.
    reader.listen((message) => this.#dispatch(message));
  }

  /** Every turn's terminal, recorded before anything else sees it: `get(turnId)` and bounded `terminalOf(turnId)`. */
  get turns(): TurnTerminals {
    return this.#turnsView;
  }

  /** Every item of recent turns at its latest revision: `itemsOf(turnId)` and `get(turnId, itemId)`. */
  get items(): TurnItems {
    return this.#itemsView;
  }

  /** The open `tool/approve` questions, read-only: `openOf(turnId)` and `size`. */
  get approvals(): TurnApprovals {
    return this.#approvalsView;
  }

  /** True once the connection has closed. */
  get isClosed(): boolean {
    return this.#closeError !== undefined;
  }

  /** Aborts when the connection closes; its `reason` is the `connectionClosed` MspError. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * The last `viewCursor` this connection saw for a session: pass it as `afterCursor` to
   * `session/resume` after a reconnect, and nothing is lost or replayed twice.
   *
   * @example
   * ```ts
   * async function resume(old: MspClient, fresh: MspClient): Promise<void> {
   *   const afterCursor = old.connection.lastViewCursor(sessionId);
   *   await fresh.connection.command("session/resume", { sessionId, afterCursor });
   * }
   * ```
   */
  lastViewCursor(sessionId: string): string | undefined {
    return this.#sessions.lastViewCursor(sessionId);
  }

  /**
   * The bound every command and wait uses when the caller gives no `timeoutMs`.
   * @unit milliseconds
   */
  get defaultTimeoutMs(): number {
    return this.#defaultTimeoutMs;
  }

  /** Commands sent and not yet settled. */
  get pendingCount(): number {
    return this.#commands.size;
  }

  /**
   * Send a command and wait, bounded, for its result. Fills in `commandId` (UUIDv7) when
   * missing. Rejects with `MspError`: `commandRejected`, `rpcError`, `timeout`, `aborted`,
   * `connectionClosed` or `protocol`. The result is delivered after every notification that
   * preceded it on the wire.
   *
   * @example
   * ```ts
   * const ack = await msp.connection.command("turn/start", { sessionId, input }, { timeoutMs: 5_000 });
   * console.log(ack.turnId);
   * ```
   */
  command<M extends keyof CommandMap>(method: M, params: CommandParams<M>, options?: CommandOptions): Promise<CommandResult<M>>;
  command(method: string, params?: Record<string, unknown>, options?: CommandOptions): Promise<Record<string, unknown>>;
  command(method: string, params: Record<string, unknown> = {}, options: CommandOptions = {}): Promise<Record<string, unknown>> {
    if (typeof method !== "string" || method.length === 0) return Promise.reject(new TypeError("command: method must be a non-empty string"));
    if (!isObject(params)) return Promise.reject(new TypeError(`command ${method}: params must be a plain object`));
    if (this.#closeError !== undefined) return Promise.reject(this.#closeError);
    const commandId = typeof params["commandId"] === "string" ? params["commandId"] : uuidv7();
    const onAccepted = this.#sessions.noteCommand(method, params, commandId);
    const id = this.#commands.nextId();
    const wait = boundedWait<Record<string, unknown>>(`command ${method}`, { method, commandId }, options, this.#defaultTimeoutMs, () =>
      this.#commands.settled(id),
    );
    if (wait.settled) return wait.promise;
    // Stop answers the turn's open questions `cancelled` before the host reads the cancel.
    if (method === Commands.turnCancel) this.#approvals.withdraw(String(params["turnId"]), "turn cancelled");
    this.#commands.add(id, { method, wait, onAccepted });
    const message = { jsonrpc: "2.0", id, method, params: { ...params, commandId } };
    this.#writer.write(message as Message).catch((error: unknown) => {
      if (error instanceof MessageEncodingError) {
        // The caller's mistake: reject this command only, never the connection.
        this.#commands.take(id);
        wait.reject(new TypeError(`command ${method}: params are ${error.message}`, { cause: error.cause }));
        return;
      }
      this.#shutdown({ reason: writeFailure(error) });
    });
    return wait.promise;
  }

  /**
   * Set the single, replace-only notification handler (pass `undefined` to remove it). It runs
   * after the recorder, the ledger and the typed events, so replacing it can never make a
   * terminal slip past.
   *
   * @example
   * ```ts
   * msp.connection.onNotification((n) => {
   *   if (isTurnCompleted(n.params)) console.log(n.params.turnId, n.params.terminal);
   * });
   * ```
   */
  onNotification(handler: NotificationHandler | undefined): void {
    this.#handler = handler;
  }

  /**
   * Set the single, replace-only answerer of the host's `tool/approve` questions (pass
   * `undefined` to remove it; without one, every question is answered `deny`, reason
   * "no approval handler"). See {@link MspClient.onApproval}.
   *
   * @example
   * ```ts
   * msp.connection.onApproval((request) => ({ decision: request.tool === "read_file" ? "approve" : "deny" }));
   * ```
   */
  onApproval(handler: ApprovalHandler | undefined): void {
    this.#approvals.handler = handler;
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
   * await msp.connection.close();
   * ```
   */
  close(reason = "closed by the client"): Promise<CloseInfo> {
    this.#shutdown({ reason });
    return this.closed;
  }

  #endInfo(): CloseInfo {
    if (this.#fatalProblem !== undefined) return { reason: `framing lost: ${this.#fatalProblem.problem}` };
    const details: EndDetails | undefined = (this.#reader as Partial<FramedMessageReader>).endDetails;
    return withEndDetails(details?.reason ?? "the host closed the connection", details);
  }

  #shutdown(info: CloseInfo): void {
    if (this.#closeError !== undefined) return;
    const data: ConnectionClosedData = withEndDetails(info.reason, info);
    const error = new MspError(MspErrorKinds.connectionClosed, `connection closed: ${info.reason}`, data);
    this.#closeError = error;
    this.#approvals.withdraw(undefined, "connection closed");
    this.#commands.closeAll(error);
    this.#turns.closeAll(error);
    // Forget what only serves a live connection. Recorded terminals and the last cursors stay
    // readable (each bounded by its capacity): recovery after a crash reads them.
    this.#items.clear();
    this.#sessions.close();
    for (const d of this.#disposables.splice(0)) d.dispose();
    try {
      this.#writer.end();
    } catch {
      // already ended
    }
    this.#tap.close();
    this.#rpc.dispose();
    this.#reader.dispose();
    this.#writer.dispose();
    this.#abort.abort(error);
    this.#emit("close", info);
    this.events.removeAllListeners();
    this.#handler = undefined;
    this.#resolveClosed(info);
  }

  #dispatch(message: Message): void {
    if (this.#closeError !== undefined) return;
    if (Message.isResponse(message)) this.#onResponse(message);
    else if (Message.isNotification(message)) this.#onNotification(message);
    else if (Message.isRequest(message)) {
      if (message.method === HostRequests.toolApprove) this.#onToolApprove(message);
      else this.#tap.forward(message);
    }
  }

  #onToolApprove(message: RequestMessage): void {
    const id = message.id as number | string;
    const request = message.params as ToolApproveParams;
    const invalid = problemWithToolApprove(request);
    const problem = invalid === undefined ? this.#approvals.ask(id, request, this.#turns.get(request.turnId) !== undefined) : `tool/approve: ${invalid}`;
    if (invalid !== undefined) this.#reply(id, { error: { code: -32602, message: `Invalid params: ${invalid}` } });
    if (problem !== undefined) this.#protocolError(problem, message);
  }

  /** Answer the host's request `id`; a write that fails closes the connection through the writer's own error. */
  #reply(id: number | string, body: { result: ToolApproveResult } | { error: { code: number; message: string } }): void {
    this.#writer.write({ jsonrpc: "2.0", id, ...body } as unknown as Message).catch(() => {});
  }

  #onResponse(message: ResponseMessage): void {
    const id = message.id;
    // Answered: no longer pending (nor abandoned). A second response to this id is then a protocol error.
    const pending = this.#commands.take(id);
    if (pending === undefined) {
      const late = this.#commands.takeAbandoned(id);
      if (late !== undefined && typeof id === "number") {
        // Its caller gave up, but the host acted on it: a late accepted resume still replays.
        if (message.error === undefined && isObject(message.result)) late.onAccepted?.();
        this.#emit("lateResponse", { id, method: late.method, response: message as unknown as JsonValue });
        return;
      }
      const what = id === null ? "a response with a null id (the host could not read a request)" : `a response to unknown id ${JSON.stringify(id)}`;
      this.#protocolError(what, message);
      return;
    }
    const { wait, method } = pending;
    if (message.error !== undefined) {
      const { code, message: text, data } = message.error;
      if (code === COMMAND_REJECTED_CODE && isObject(data)) {
        const reason = typeof data["reason"] === "string" ? data["reason"] : "unspecified";
        wait.reject(new MspError(MspErrorKinds.commandRejected, `${method} rejected: ${reason}`, data as unknown as CommandRejectedData));
      } else {
        wait.reject(new MspError(MspErrorKinds.rpcError, `${method} failed: ${text} (${code})`, { code, message: text, data: (data ?? null) as JsonValue }));
      }
    } else if (!isObject(message.result)) {
      wait.reject(
        new MspError(MspErrorKinds.protocol, `${method}: the result is not an object`, {
          problem: "result must be an object",
          message: message as unknown as JsonValue,
        }),
      );
    } else {
      // Synchronously, before the notifications behind this answer (a resume's replay) dispatch.
      pending.onAccepted?.();
      wait.resolve(message.result);
    }
  }

  #onNotification(message: NotificationMessage): void {
    const { method } = message;
    const params = message.params as Record<string, unknown> | undefined;
    const problem = problemWithNotification(method, params);
    if (problem !== undefined) return this.#protocolError(`${method}: ${problem}`, message);
    const admission = this.#sessions.admit(method, params);
    // A stray terminal is reported, but still recorded: a waiter must never miss a terminal.
    if (admission.problem !== undefined) this.#protocolError(admission.problem, message);
    if (!admission.deliver) return;
    let synthesized: LedgerItem[] | undefined;
    if (method === Notifications.turnCompleted) {
      const terminal = params as unknown as TurnCompletedParams;
      if (!this.#turns.record(terminal)) return this.#protocolError(`a second turn/completed for turn ${terminal.turnId}`, message);
      synthesized = this.#items.closeTurn(terminal.turnId);
      this.#approvals.withdraw(terminal.turnId, "turn ended");
    } else if (method === Notifications.itemStarted || method === Notifications.itemUpdated || method === Notifications.itemCompleted) {
      const item = (params as unknown as ItemNotificationParams).item as Item;
      if (this.#items.apply(item) === "full") {
        // Only the ledger's view misses it: the notification itself is delivered below.
        this.#protocolError(`${method}: item ${item.itemId} not kept: turn ${item.turnId} has itemsPerTurnCapacity items in progress`, message);
      }
      this.#approvals.noteItem(item);
    }
    if (synthesized !== undefined) for (const item of synthesized) this.#emit("itemSynthesized", item);
    if (TYPED_EVENTS.has(method)) this.#emit(method as "turn/started", params as unknown as TurnStartedParams);
    const emittedAtMs = (message as { emittedAtMs?: unknown }).emittedAtMs;
    const notification: MspNotification = typeof emittedAtMs === "number" ? { method, params, emittedAtMs } : { method, params };
    this.#emit("notification", notification);
    const handler = this.#handler;
    if (handler !== undefined)
      try {
        handler(notification);
      } catch (error) {
        this.#reportHandlerError(error);
      }
  }

  #protocolError(problem: string, offending?: unknown): void {
    const data: ProtocolData = { problem };
    if (offending !== undefined) data.message = offending as JsonValue;
    const error = new MspError(MspErrorKinds.protocol, `protocol error: ${problem}`, data);
    this.#emit("protocolError", error);
  }

  /** Emit an event; whatever escapes it is reported, never thrown (no closure: this runs for every notification). */
  #emit<E extends keyof MspEvents>(event: E, ...args: MspEvents[E]): void {
    try {
      (this.events as unknown as { emit(event: E, ...args: MspEvents[E]): boolean }).emit(event, ...args);
    } catch (error) {
      this.#reportHandlerError(error);
    }
  }

  #reportingHandlerError = false;

  /** A listener or the user's handler threw: tell `handlerError` listeners, else the console. */
  #reportHandlerError(error: unknown): void {
    if (!this.#reportingHandlerError && this.events.listenerCount("handlerError") > 0) {
      this.#reportingHandlerError = true;
      try {
        this.events.emit("handlerError", error);
        return;
      } finally {
        this.#reportingHandlerError = false;
      }
    }
    console.error("@muse-code/sdk: a notification handler threw", error);
  }
}

/** Why a write failure closes the connection: a host that stopped reading says so in its own words. */
function writeFailure(error: unknown): string {
  if (error instanceof WriteBufferFullError) return error.message;
  return `write failed: ${error instanceof Error ? error.message : String(error)}`;
}

// A Set: `in` on an object with a method name fresh from JSON.parse costs a string-table lookup a notification.
const TYPED_EVENTS: ReadonlySet<string> = new Set(Object.values(Notifications));

/** `reason`, with whichever exit and close details `from` carries (absent ones stay absent). */
function withEndDetails(reason: string, from: EndDetails | undefined): CloseInfo {
  const info: CloseInfo = { reason };
  for (const key of ["exitCode", "signal", "closeCode", "closeReason"] as const)
    if (from?.[key] !== undefined) (info as unknown as Record<string, unknown>)[key] = from[key];
  return info;
}
