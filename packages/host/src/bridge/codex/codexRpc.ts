/**
 * JSON-RPC with a Codex app-server over its stdio. The app-server speaks newline-delimited JSON,
 * one message per line, without the `"jsonrpc"` field (codex 0.169.0); its own requests have
 * integer ids counting from 0. So this is a small line reader (the protocol's LineSplitter) and a
 * writer, not vscode-jsonrpc, whose stream framing is Content-Length headers and which the host
 * package does not depend on.
 *
 * Every request's answer is awaited with a bound. A line that is not a JSON-RPC message ends the
 * connection: every pending request is rejected with a {@link CodexProtocolError}, and so is every
 * later one; the owner is told through {@link CodexRpc.closed}. Server requests go to one handler,
 * whose result (or thrown error) is the answer.
 */
import type { Readable, Writable } from "node:stream";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter } from "@muse-code/protocol/lineSplitter.js";
import type { ClientRequest } from "./generated/ClientRequest.js";
import type { InitializeResponse } from "./generated/InitializeResponse.js";
import type { ServerNotification } from "./generated/ServerNotification.js";
import type { ServerRequest } from "./generated/ServerRequest.js";
import type { ThreadBackgroundTerminalsCleanResponse } from "./generated/v2/ThreadBackgroundTerminalsCleanResponse.js";
import type { ThreadBackgroundTerminalsListResponse } from "./generated/v2/ThreadBackgroundTerminalsListResponse.js";
import type { ThreadBackgroundTerminalsTerminateResponse } from "./generated/v2/ThreadBackgroundTerminalsTerminateResponse.js";
import type { ThreadResumeResponse } from "./generated/v2/ThreadResumeResponse.js";
import type { ThreadStartResponse } from "./generated/v2/ThreadStartResponse.js";
import type { TurnInterruptResponse } from "./generated/v2/TurnInterruptResponse.js";
import type { TurnStartResponse } from "./generated/v2/TurnStartResponse.js";
import type { TurnSteerResponse } from "./generated/v2/TurnSteerResponse.js";
import { CodexBridgeError, CodexProtocolError, CodexRpcError, CodexTimeoutError } from "./codexErrors.js";

/** The answer type of each request the bridge sends (the generated unions name params, not results). */
export interface CodexResponses {
  initialize: InitializeResponse;
  "thread/start": ThreadStartResponse;
  "thread/resume": ThreadResumeResponse;
  "turn/start": TurnStartResponse;
  "turn/steer": TurnSteerResponse;
  "turn/interrupt": TurnInterruptResponse;
  "thread/backgroundTerminals/list": ThreadBackgroundTerminalsListResponse;
  "thread/backgroundTerminals/terminate": ThreadBackgroundTerminalsTerminateResponse;
  "thread/backgroundTerminals/clean": ThreadBackgroundTerminalsCleanResponse;
}

/** A request method the bridge sends. */
export type CodexMethod = keyof CodexResponses & ClientRequest["method"];

/** The params of request `M`, from the generated ClientRequest union. */
export type CodexParams<M extends CodexMethod> = Extract<ClientRequest, { method: M }>["params"];

/** What a server request's handler returns: the `result` to send back. */
export type ServerRequestHandler = (request: ServerRequest) => Promise<unknown>;

/** Options of a {@link CodexRpc}. */
export interface CodexRpcOptions {
  /** The app-server's stdout. */
  input: Readable;
  /** The app-server's stdin. */
  output: Writable;
  /** How long a request waits for its answer unless the call says otherwise. @unit milliseconds */
  requestTimeoutMs: number;
  /**
   * Answers the app-server's own requests (approvals); without it each is answered -32601. Its
   * promise is not bounded here: an approval waits for a person, and a stop answers it `cancel`.
   */
  onServerRequest?: ServerRequestHandler;
  /** The longest line accepted. @unit bytes @defaultValue 16 MiB */
  maxLineBytes?: number;
  /** Told of things worth a debug line: a late answer, a write that failed. */
  logger?: (line: string) => void;
  /** Told of every line, as written (`out`) or read (`in`), before it is acted on: a wire log. */
  onWire?: (direction: "in" | "out", line: string) => void;
}

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const excerpt = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}…` : text);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is string | number => typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));

/** One JSON-RPC connection to a Codex app-server. */
export class CodexRpc {
  readonly #output: Writable;
  readonly #timeoutMs: number;
  readonly #onServerRequest: ServerRequestHandler | undefined;
  readonly #logger: (line: string) => void;
  readonly #onWire: ((direction: "in" | "out", line: string) => void) | undefined;
  readonly #pending = new Map<number, Pending>();
  readonly #listeners = new Set<(notification: ServerNotification) => void>();
  readonly #splitter: LineSplitter;
  #nextId = 1;
  #closedWith: CodexBridgeError | undefined;
  #resolveClosed!: (error: CodexBridgeError) => void;
  /** Resolves, once, with why the connection ended (it never rejects). */
  readonly closed: Promise<CodexBridgeError>;

  constructor(options: CodexRpcOptions) {
    this.#output = options.output;
    this.#timeoutMs = options.requestTimeoutMs;
    this.#onServerRequest = options.onServerRequest;
    this.#logger = options.logger ?? (() => {});
    this.#onWire = options.onWire;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    const splitterOptions = {
      onOverflow: () => this.close(new CodexProtocolError(`a line longer than ${options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES} bytes`, "")),
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    };
    this.#splitter = new LineSplitter((line) => this.#receive(line), splitterOptions);
    options.input.on("data", (chunk: Buffer) => {
      if (this.#closedWith === undefined) this.#splitter.push(chunk);
    });
    options.output.on("error", (error) => this.#logger(`writing to codex app-server failed: ${error.message}`));
  }

  /** Why the connection ended, or `undefined` while it is open. */
  get closedWith(): CodexBridgeError | undefined {
    return this.#closedWith;
  }

  /**
   * Sends request `method` and resolves with its result. Rejects with {@link CodexRpcError} on an
   * error answer, {@link CodexTimeoutError} after `timeoutMs`, or the connection's end reason.
   */
  request<M extends CodexMethod>(method: M, params: CodexParams<M>, timeoutMs = this.#timeoutMs): Promise<CodexResponses[M]> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    const id = this.#nextId++;
    return new Promise<CodexResponses[M]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new CodexTimeoutError(`answer to ${method}`, timeoutMs));
      }, timeoutMs);
      this.#pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject, timer });
      this.#write({ id, method, params });
    });
  }

  /** Sends a notification (the client's only one is `initialized`). */
  notify(method: "initialized"): void {
    if (this.#closedWith === undefined) this.#write({ method });
  }

  /** Calls `listener` with every notification, in wire order. Returns the unsubscribe. */
  onNotification(listener: (notification: ServerNotification) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ends the connection with `reason`: every pending and later request rejects with it. Idempotent. */
  close(reason: CodexBridgeError): void {
    if (this.#closedWith !== undefined) return;
    this.#closedWith = reason;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      pending.reject(reason);
    }
    this.#resolveClosed(reason);
  }

  /** The input ended: a last line without its newline still counts. */
  endOfInput(): void {
    if (this.#closedWith === undefined) this.#splitter.end();
  }

  #write(message: Record<string, unknown>): void {
    const line = JSON.stringify(message);
    this.#onWire?.("out", line);
    try {
      this.#output.write(`${line}\n`);
    } catch (error) {
      this.#logger(`writing to codex app-server failed: ${(error as Error).message}`);
    }
  }

  #receive(line: string): void {
    if (this.#closedWith !== undefined) return;
    this.#onWire?.("in", line);
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return this.close(new CodexProtocolError("a line that is not JSON", excerpt(line)));
    }
    if (!isRecord(message)) return this.close(new CodexProtocolError("a line that is not a JSON object", excerpt(line)));
    const { id, method } = message;
    if (typeof method === "string") {
      if (id === undefined) return this.#notification(message as ServerNotification);
      if (!isId(id)) return this.close(new CodexProtocolError("a request whose id is neither a string nor an integer", excerpt(line)));
      return void this.#serverRequest(id, message as ServerRequest);
    }
    if (!isId(id)) return this.close(new CodexProtocolError("a message with neither a method nor an id", excerpt(line)));
    this.#response(id, message, line);
  }

  #notification(notification: ServerNotification): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(notification);
      } catch (error) {
        this.#logger(`a codex notification listener threw on ${notification.method}: ${(error as Error).message}`);
      }
    }
  }

  #response(id: string | number, message: Record<string, unknown>, line: string): void {
    const pending = typeof id === "number" ? this.#pending.get(id) : undefined;
    if (pending === undefined)
      return this.#logger(`codex app-server answered id ${JSON.stringify(id)}, which is not waiting (late or unknown): ${excerpt(line)}`);
    this.#pending.delete(id as number);
    clearTimeout(pending.timer);
    const { error } = message;
    if (error !== undefined) {
      const code = isRecord(error) && typeof error["code"] === "number" ? error["code"] : 0;
      const text = isRecord(error) && typeof error["message"] === "string" ? error["message"] : JSON.stringify(error);
      pending.reject(new CodexRpcError(pending.method, code, text, isRecord(error) ? error["data"] : undefined));
    } else if ("result" in message) {
      pending.resolve(message["result"]);
    } else {
      this.close(new CodexProtocolError(`an answer to ${pending.method} with neither result nor error`, excerpt(line)));
      pending.reject(this.#closedWith!);
    }
  }

  async #serverRequest(id: string | number, request: ServerRequest): Promise<void> {
    if (this.#onServerRequest === undefined) {
      return this.#write({ id, error: { code: -32601, message: `${request.method} is not handled by this client` } });
    }
    try {
      const result = await this.#onServerRequest(request);
      if (this.#closedWith === undefined) this.#write({ id, result });
    } catch (error) {
      const code = error instanceof CodexRpcError ? error.code : -32603;
      if (this.#closedWith === undefined) this.#write({ id, error: { code, message: (error as Error).message } });
    }
  }
}
