/**
 * MspConnection: the one owner of a vscode-jsonrpc MessageConnection. It sends commands,
 * maps every failure to a typed MspError, and dispatches each incoming notification, in
 * wire order, to the recorder, the ledger, the typed events and the user's handler.
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
  type ResponseMessage,
} from "vscode-jsonrpc";
import { v7 as uuidv7 } from "uuid";
import { MspError, MspErrorKinds, type CommandRejectedData, type ConnectionClosedData, type ProtocolData } from "./errors.js";
import type { EndDetails } from "./framing/byteChannel.js";
import type { FramedMessageReader } from "./framing/framedReader.js";
import { MessageEncodingError } from "./framing/framedWriter.js";
import type { FramingProblem } from "./framing/limits.js";
import { boundedWait, type BoundedWait, type WaitOptions } from "./internal/boundedWait.js";
import { ensureRuntime } from "./internal/runtime.js";
import { SafeEmitter } from "./internal/safeEmitter.js";
import {
  COMMAND_REJECTED_CODE,
  Commands,
  Notifications,
  problemWithNotification,
  isObject,
  parseViewCursor,
  type CommandMap,
  type CommandParams,
  type CommandResult,
  type Item,
  type ItemNotificationParams,
  type JsonValue,
  type TurnCompletedParams,
  type TurnStartedParams,
} from "./protocol/index.js";
import { ItemLedger, type LedgerItem } from "./turns/itemLedger.js";
import { TurnRecorder } from "./turns/turnRecorder.js";

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
 * console.log(info.reason, info.exitCode ?? info.signal);
 * ```
 */
export interface CloseInfo {
  /** Plain-words reason, e.g. "closed by the client" or "the host closed the connection". */
  reason: string;
  /** Exit code of a child-process host, when known. */
  exitCode?: number | null;
  /** Signal that ended a child-process host, when known. */
  signal?: string | null;
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
 * Options of an {@link MspConnection}.
 *
 * @example
 * ```ts
 * const client = connect(channel, { defaultTimeoutMs: 30_000, terminalCapacity: 1_000, itemTurnCapacity: 100 });
 * ```
 */
export interface MspConnectionOptions {
  /** Default bound of every command and wait. @unit milliseconds @defaultValue 60 000 */
  defaultTimeoutMs?: number;
  /** How many turn terminals to retain. @defaultValue 10 000 */
  terminalCapacity?: number;
  /** How many turns' items the ledger retains. @defaultValue 1 000 */
  itemTurnCapacity?: number;
}

interface PendingCommand {
  method: string;
  wait: BoundedWait<Record<string, unknown>>;
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

const ABANDONED_CAPACITY = 10_000;

/**
 * An MSP connection over any framed reader and writer. Usually made by {@link connect} or
 * `spawnHost`; use it directly to plug in a transport of your own.
 *
 * @example
 * ```ts
 * const msp = connect(channel);
 * msp.connection.onNotification((n) => console.log(n.method));
 * const ack = await msp.connection.command("turn/start", { sessionId, input });
 * ```
 */
export class MspConnection {
  /** Every turn terminal, recorded before anything else sees it. */
  readonly turns: TurnRecorder;
  /** Every item at its latest revision. */
  readonly items: ItemLedger;
  /** Typed events; subscribe with `events.on(name, listener)`. */
  readonly events: EventEmitter<MspEvents> = new SafeEmitter<MspEvents>((error) => this.#reportHandlerError(error));
  /** Resolves (never rejects) once the connection has closed, with why. */
  readonly closed: Promise<CloseInfo>;

  readonly #reader: MessageReader;
  readonly #writer: MessageWriter;
  readonly #rpc: MessageConnection;
  readonly #tap = new RequestTap();
  readonly #pending = new Map<number, PendingCommand>();
  readonly #abandoned = new Map<number, string>();
  readonly #cursors = new Map<string, { cursor: string; sequence: number | undefined }>();
  readonly #followed = new Map<string, { resumed: boolean }>();
  readonly #knownTurns = new Set<string>();
  readonly #knownTurnCapacity: number;
  readonly #abort = new AbortController();
  readonly #defaultTimeoutMs: number;
  readonly #disposables: Disposable[] = [];
  #resolveClosed!: (info: CloseInfo) => void;
  #handler: NotificationHandler | undefined;
  #nextId = 1;
  #closeError: MspError | undefined;
  #fatalProblem: FramingProblem | undefined;

  constructor(reader: MessageReader, writer: MessageWriter, options: MspConnectionOptions = {}) {
    ensureRuntime();
    this.#reader = reader;
    this.#writer = writer;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 60_000;
    this.turns = new TurnRecorder({ capacity: options.terminalCapacity ?? 10_000, defaultTimeoutMs: this.#defaultTimeoutMs });
    this.#knownTurnCapacity = options.terminalCapacity ?? 10_000;
    this.items = new ItemLedger({ turnCapacity: options.itemTurnCapacity ?? 1_000 });
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));

    const problems = (reader as Partial<FramedMessageReader>).onProblem;
    if (problems !== undefined) {
      this.#disposables.push(
        problems((problem) => {
          if (problem.fatal) this.#fatalProblem = problem;
          this.#protocolError(`framing: ${problem.problem}`, problem.text);
          // A malformed answer to a pending command fails that command now, as `protocol`.
          const pending = typeof problem.responseId === "number" ? this.#pending.get(problem.responseId) : undefined;
          if (pending !== undefined) {
            this.#pending.delete(problem.responseId as number);
            pending.wait.reject(new MspError(MspErrorKinds.protocol, `${pending.method}: malformed response: ${problem.problem}`, { problem: problem.problem, message: problem.text ?? null }));
          }
        }),
      );
    }
    this.#disposables.push(
      reader.onClose(() => this.#shutdown(this.#endInfo())),
      writer.onError(([error]) => this.#shutdown({ reason: `write failed: ${error.message}` })),
      writer.onClose(() => this.#shutdown({ reason: "the transport closed" })),
    );
    // vscode-jsonrpc owns host-to-client requests (MSP has none: it answers "method not found").
    this.#rpc = createMessageConnection(this.#tap, writer);
    this.#rpc.listen();
    // ONE internal handler, installed before any command can be sent.
    reader.listen((message) => this.#dispatch(message));
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
   * const afterCursor = old.connection.lastViewCursor(sessionId);
   * await fresh.connection.command("session/resume", { sessionId, afterCursor });
   * ```
   */
  lastViewCursor(sessionId: string): string | undefined {
    return this.#cursors.get(sessionId)?.cursor;
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
    return this.#pending.size;
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
    this.#noteCommand(method, params, commandId);
    const id = this.#nextId++;
    const wait = boundedWait<Record<string, unknown>>(
      `command ${method}`,
      { method, commandId },
      { ...options, defaultTimeoutMs: this.#defaultTimeoutMs },
      () => {
        if (this.#pending.delete(id) && this.#closeError === undefined) this.#abandon(id, method);
      },
    );
    if (wait.settled) return wait.promise;
    this.#pending.set(id, { method, wait });
    const message = { jsonrpc: "2.0", id, method, params: { ...params, commandId } };
    this.#writer.write(message as Message).catch((error: unknown) => {
      if (error instanceof MessageEncodingError) {
        // The caller's mistake: reject this command only, never the connection.
        this.#pending.delete(id);
        wait.reject(new TypeError(`command ${method}: params are ${error.message}`, { cause: error.cause }));
        return;
      }
      this.#shutdown({ reason: `write failed: ${error instanceof Error ? error.message : String(error)}` });
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
   * msp.connection.onNotification((n) => { if (n.method === "turn/completed") render(n.params); });
   * ```
   */
  onNotification(handler: NotificationHandler | undefined): void {
    this.#handler = handler;
  }

  /**
   * Close the connection. Every pending command and wait settles with `connectionClosed`; no
   * timer or listener is left behind. Idempotent.
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
    const info: CloseInfo = { reason: details?.reason ?? "the host closed the connection" };
    if (details?.exitCode !== undefined) info.exitCode = details.exitCode;
    if (details?.signal !== undefined) info.signal = details.signal;
    return info;
  }

  #shutdown(info: CloseInfo): void {
    if (this.#closeError !== undefined) return;
    const data: ConnectionClosedData = { reason: info.reason };
    if (info.exitCode !== undefined) data.exitCode = info.exitCode;
    if (info.signal !== undefined) data.signal = info.signal;
    const error = new MspError(MspErrorKinds.connectionClosed, `connection closed: ${info.reason}`, data);
    this.#closeError = error;
    for (const { wait } of [...this.#pending.values()]) wait.reject(error);
    this.#pending.clear();
    this.#abandoned.clear();
    this.turns.closeAll(error);
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
    this.#safely(() => this.events.emit("close", info));
    this.events.removeAllListeners();
    this.#handler = undefined;
    this.#resolveClosed(info);
  }

  #abandon(id: number, method: string): void {
    this.#abandoned.set(id, method);
    if (this.#abandoned.size > ABANDONED_CAPACITY) this.#abandoned.delete(this.#abandoned.keys().next().value as number);
  }

  #dispatch(message: Message): void {
    if (this.#closeError !== undefined) return;
    if (Message.isResponse(message)) this.#onResponse(message);
    else if (Message.isNotification(message)) this.#onNotification(message);
    else if (Message.isRequest(message)) this.#tap.forward(message);
  }

  #onResponse(message: ResponseMessage): void {
    const id = message.id;
    const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
    if (pending === undefined) {
      const late = typeof id === "number" ? this.#abandoned.get(id) : undefined;
      if (late !== undefined && typeof id === "number") {
        this.#abandoned.delete(id);
        this.#safely(() => this.events.emit("lateResponse", { id, method: late, response: message as unknown as JsonValue }));
        return;
      }
      const what = id === null ? "a response with a null id (the host could not read a request)" : `a response to unknown id ${JSON.stringify(id)}`;
      this.#protocolError(what, message);
      return;
    }
    const { wait, method } = pending;
    // Answered: not abandoned. A second response to this id is then a protocol error.
    this.#pending.delete(id as number);
    if (message.error !== undefined) {
      const { code, message: text, data } = message.error;
      if (code === COMMAND_REJECTED_CODE && isObject(data)) {
        const reason = typeof data["reason"] === "string" ? data["reason"] : "unspecified";
        wait.reject(new MspError(MspErrorKinds.commandRejected, `${method} rejected: ${reason}`, data as unknown as CommandRejectedData));
      } else {
        wait.reject(new MspError(MspErrorKinds.rpcError, `${method} failed: ${text} (${code})`, { code, message: text, data: (data ?? null) as JsonValue }));
      }
    } else if (!isObject(message.result)) {
      wait.reject(new MspError(MspErrorKinds.protocol, `${method}: the result is not an object`, { problem: "result must be an object", message: message as unknown as JsonValue }));
    } else {
      wait.resolve(message.result);
    }
  }

  #onNotification(message: NotificationMessage): void {
    const { method } = message;
    const params = message.params as Record<string, unknown> | undefined;
    const problem = problemWithNotification(method, params);
    if (problem !== undefined) return this.#protocolError(`${method}: ${problem}`, message);
    if (!this.#advanceCursor(params)) {
      // A terminal this connection has not recorded is news even with an old cursor (a restarted
      // host re-sends a logged turn/completed before its already_terminal): record it, so no
      // waiter misses it. Anything else that repeats or steps back is reported and dropped.
      const newTerminal = method === Notifications.turnCompleted && this.turns.get(String(params?.["turnId"])) === undefined;
      if (!newTerminal) {
        return this.#protocolError(`${method}: viewCursor ${String(params?.["viewCursor"])} does not follow ${this.lastViewCursor(String(params?.["sessionId"]))}`, message);
      }
    }
    let synthesized: LedgerItem[] = [];
    if (method === Notifications.turnCompleted) {
      const terminal = params as unknown as TurnCompletedParams;
      // Reported, but still recorded: a waiter must never miss a terminal.
      if (this.#strayTerminal(terminal)) this.#protocolError(`turn/completed for turn ${terminal.turnId}, which this connection never started, cancelled or saw in session ${terminal.sessionId}`, message);
      if (!this.turns.record(terminal)) return this.#protocolError(`a second turn/completed for turn ${terminal.turnId}`, message);
      synthesized = this.items.closeTurn(terminal.turnId);
    } else if (method === Notifications.turnStarted) {
      this.#knowTurn(String(params?.["turnId"]));
    } else if (method === Notifications.itemStarted || method === Notifications.itemUpdated || method === Notifications.itemCompleted) {
      const item = (params as unknown as ItemNotificationParams).item as Item;
      if (this.turns.get(item.turnId) !== undefined) return this.#protocolError(`${method} for turn ${item.turnId} after its turn/completed`, message);
      this.#knowTurn(item.turnId);
      this.items.apply(item);
    }
    for (const item of synthesized) this.#safely(() => this.events.emit("itemSynthesized", item));
    if (method in TYPED_EVENTS) this.#safely(() => this.events.emit(method as keyof MspEvents, params as never));
    const emittedAtMs = (message as { emittedAtMs?: unknown }).emittedAtMs;
    const notification: MspNotification = typeof emittedAtMs === "number" ? { method, params, emittedAtMs } : { method, params };
    this.#safely(() => this.events.emit("notification", notification));
    const handler = this.#handler;
    if (handler !== undefined) this.#safely(() => handler(notification));
  }

  /**
   * What this connection knows of sessions and turns, to tell a host's stray terminal from a
   * legitimate one. A session it sends commands for is followed; a turn it started, cancelled or
   * saw any notification of is known. A resume makes every turn of its session legitimate.
   */
  #noteCommand(method: string, params: Record<string, unknown>, commandId: string): void {
    const sessionId = params["sessionId"];
    if (typeof sessionId !== "string") return;
    const session = this.#followed.get(sessionId) ?? { resumed: false };
    this.#followed.set(sessionId, session);
    if (method === Commands.turnStart) this.#knowTurn(commandId);
    if (method === Commands.turnCancel && typeof params["turnId"] === "string") this.#knowTurn(params["turnId"]);
    if (method === Commands.sessionResume) {
      session.resumed = true;
      // A resume replays from afterCursor: what follows may step back from what this connection saw.
      const afterCursor = params["afterCursor"];
      if (typeof afterCursor === "string") this.#cursors.set(sessionId, { cursor: afterCursor, sequence: parseViewCursor(afterCursor, sessionId) });
      else this.#cursors.delete(sessionId);
    }
  }

  #knowTurn(turnId: string): void {
    this.#knownTurns.add(turnId);
    if (this.#knownTurns.size > this.#knownTurnCapacity) this.#knownTurns.delete(this.#knownTurns.values().next().value as string);
  }

  /** True when a terminal for this turn is one the host should not have sent this connection. */
  #strayTerminal(terminal: TurnCompletedParams): boolean {
    const session = this.#followed.get(terminal.sessionId);
    return session !== undefined && !session.resumed && !this.#knownTurns.has(terminal.turnId);
  }

  /** Track the session's viewCursor; false when it does not strictly increase (a duplicate or a step back). */
  #advanceCursor(params: Record<string, unknown> | undefined): boolean {
    const sessionId = params?.["sessionId"];
    const cursor = params?.["viewCursor"];
    if (typeof sessionId !== "string" || typeof cursor !== "string") return true;
    const sequence = parseViewCursor(cursor, sessionId);
    const last = this.#cursors.get(sessionId);
    if (last !== undefined) {
      const ahead = sequence !== undefined && last.sequence !== undefined ? sequence > last.sequence : cursor !== last.cursor;
      if (!ahead) return false;
    }
    this.#cursors.set(sessionId, { cursor, sequence });
    return true;
  }

  #protocolError(problem: string, offending?: unknown): void {
    const data: ProtocolData = { problem };
    if (offending !== undefined) data.message = offending as JsonValue;
    const error = new MspError(MspErrorKinds.protocol, `protocol error: ${problem}`, data);
    this.#safely(() => this.events.emit("protocolError", error));
  }

  #safely(run: () => unknown): void {
    try {
      run();
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

const TYPED_EVENTS: Record<string, true> = Object.fromEntries(Object.values(Notifications).map((m) => [m, true]));
