/**
 * JsonRpcEndpoint: the one owner of a vscode-jsonrpc MessageConnection, and JSON-RPC only. It
 * sends requests and waits for their answers (bounded), maps every failure to a typed MspError,
 * owns the writer and the close, and answers "method not found" for a request nobody handles.
 * Every incoming notification and request goes to one sink, synchronously and in wire order.
 */
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
import { MspError, MspErrorKinds, type CommandRejectedData } from "../errors.js";
import type { EndDetails } from "../framing/byteChannel.js";
import type { FramedMessageReader } from "../framing/framedReader.js";
import { MessageEncodingError, WriteBufferFullError } from "../framing/framedWriter.js";
import type { FramingProblem } from "../framing/limits.js";
import { boundedWait } from "../internal/boundedWait.js";
import { PendingCommands, type AcceptedHook } from "../internal/pendingCommands.js";
import { COMMAND_REJECTED_CODE, isObject, type JsonValue } from "@muse-code/protocol";
import { errorMessage } from "../internal/errorMessage.js";
import type { CloseInfo } from "../types/closeInfo.js";
import type { WaitOptions } from "../types/waitOptions.js";

/** Where the endpoint hands what it does not own: everything but the answers to its own requests. */
export interface EndpointSink {
  /** A notification, in wire order. */
  onNotification(message: NotificationMessage): void;
  /** A request from the host. Returns false when it is not one the sink answers: it then gets "method not found". */
  onRequest(message: RequestMessage): boolean;
  /** Something the host sent that JSON-RPC cannot use (a framing problem, an answer to nothing). */
  onProblem(problem: string, offending?: unknown): void;
  /** An answer to a request whose caller had already given up (timeout or abort). */
  onLateResponse(id: number, method: string, response: ResponseMessage): void;
  /** A request is about to be written (its wait is set up and not settled): the last moment before the host can read it. */
  beforeWrite(method: string, params: Record<string, unknown>): void;
  /** The endpoint is closing, with `error`: answer what the host asked. Runs once, before pending requests settle. */
  onClosing(error: MspError<"connectionClosed">): void;
  /** Pending requests have settled with `error`: settle every wait of your own. Runs once, before the writer ends. */
  onRequestsClosed(error: MspError<"connectionClosed">): void;
  /** The endpoint has closed: every request and wait has settled. Runs once, last. */
  onClosed(info: CloseInfo): void;
}

/** Forwards the host's requests nobody handles to vscode-jsonrpc, which answers "method not found". */
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

/** A JSON-RPC 2.0 endpoint over one reader and writer pair. Internal: `MspClient` is what users hold. */
export class JsonRpcEndpoint {
  /** Resolves (never rejects) once the endpoint has closed, with why. */
  readonly closed: Promise<CloseInfo>;
  /** The bound of a request whose caller gives no `timeoutMs`. @unit milliseconds */
  readonly defaultTimeoutMs: number;

  readonly #reader: MessageReader;
  readonly #writer: MessageWriter;
  readonly #sink: EndpointSink;
  readonly #rpc: MessageConnection;
  readonly #tap = new RequestTap();
  readonly #requests = new PendingCommands();
  readonly #abort = new AbortController();
  readonly #disposables: Disposable[] = [];
  #resolveClosed!: (info: CloseInfo) => void;
  #closeError: MspError<"connectionClosed"> | undefined;
  #fatalProblem: FramingProblem | undefined;

  constructor(reader: MessageReader, writer: MessageWriter, sink: EndpointSink, defaultTimeoutMs: number) {
    this.#reader = reader;
    this.#writer = writer;
    this.#sink = sink;
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    const problems = (reader as Partial<FramedMessageReader>).onProblem;
    if (problems !== undefined) this.#disposables.push(problems((problem) => this.#onFramingProblem(problem)));
    this.#disposables.push(
      reader.onClose(() => this.close(this.#endInfo())),
      writer.onError(([error]) => this.close({ reason: writeFailure(error) })),
      writer.onClose(() => this.close({ reason: "the transport closed" })),
    );
    this.#rpc = createMessageConnection(this.#tap, writer);
    this.#rpc.listen();
  }

  /**
   * Start reading: the one listener of the reader, installed before any request can be sent. The
   * owner calls it last, once everything the sink reaches is in place (a reader may deliver at once).
   */
  listen(): void {
    this.#reader.listen((message) => this.#dispatch(message));
  }

  /** Aborts when the endpoint closes; its `reason` is the `connectionClosed` MspError. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** The `connectionClosed` error every later request gets, once closed. */
  get closeError(): MspError<"connectionClosed"> | undefined {
    return this.#closeError;
  }

  /** Requests sent and not yet settled. */
  get pendingCount(): number {
    return this.#requests.size;
  }

  /**
   * Send a request and wait, bounded, for its result object. Rejects with `MspError`:
   * `commandRejected`, `rpcError`, `timeout`, `aborted`, `connectionClosed` or `protocol`; with a
   * `TypeError` when `params` cannot be encoded (the caller's mistake: the endpoint stays open).
   */
  request(method: string, params: Record<string, unknown>, options: WaitOptions, onAccepted?: AcceptedHook): Promise<Record<string, unknown>> {
    if (this.#closeError !== undefined) return Promise.reject(this.#closeError);
    const id = this.#requests.nextId();
    const requests = this.#requests;
    const wait = boundedWait<Record<string, unknown>>(
      `command ${method}`,
      { method, commandId: params["commandId"] as string },
      options,
      this.defaultTimeoutMs,
      () => requests.settled(id),
    );
    if (wait.settled) return wait.promise;
    this.#sink.beforeWrite(method, params);
    this.#requests.add(id, { method, wait, onAccepted });
    this.#writer.write({ jsonrpc: "2.0", id, method, params } as Message).catch((error: unknown) => {
      if (error instanceof MessageEncodingError) {
        this.#requests.take(id);
        wait.reject(new TypeError(`command ${method}: params are ${error.message}`, { cause: error.cause }));
        return;
      }
      this.close({ reason: writeFailure(error) });
    });
    return wait.promise;
  }

  /** Answer the host's request `id`; a write that fails closes the endpoint through the writer's own error. */
  reply(id: number | string, body: { result: unknown } | { error: { code: number; message: string } }): void {
    this.#writer.write({ jsonrpc: "2.0", id, ...body } as unknown as Message).catch(() => {});
  }

  /** Close, once: every pending request settles with `connectionClosed`, and no timer or listener is left. */
  close(info: CloseInfo): void {
    if (this.#closeError !== undefined) return;
    const data: CloseInfo = withEndDetails(info.reason, info);
    const error = new MspError(MspErrorKinds.connectionClosed, `connection closed: ${info.reason}`, data);
    this.#closeError = error;
    this.#sink.onClosing(error);
    this.#requests.closeAll(error);
    this.#sink.onRequestsClosed(error);
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
    this.#sink.onClosed(info);
    this.#resolveClosed(info);
  }

  #endInfo(): CloseInfo {
    if (this.#fatalProblem !== undefined) return { reason: `framing lost: ${this.#fatalProblem.problem}` };
    const details: EndDetails | undefined = (this.#reader as Partial<FramedMessageReader>).endDetails;
    return withEndDetails(details?.reason ?? "the host closed the connection", details);
  }

  #onFramingProblem(problem: FramingProblem): void {
    if (problem.fatal) this.#fatalProblem = problem;
    this.#sink.onProblem(`framing: ${problem.problem}`, problem.text);
    // A malformed answer to a pending request fails that request now, as `protocol`.
    const pending = this.#requests.take(problem.responseId);
    if (pending !== undefined) {
      pending.wait.reject(
        new MspError(MspErrorKinds.protocol, `${pending.method}: malformed response: ${problem.problem}`, {
          problem: problem.problem,
          message: problem.text ?? null,
        }),
      );
    }
  }

  #dispatch(message: Message): void {
    if (this.#closeError !== undefined) return;
    if (Message.isResponse(message)) this.#onResponse(message);
    else if (Message.isNotification(message)) this.#sink.onNotification(message);
    else if (Message.isRequest(message) && !this.#sink.onRequest(message)) this.#tap.forward(message);
  }

  #onResponse(message: ResponseMessage): void {
    const id = message.id;
    // Answered: no longer pending (nor abandoned). A second response to this id is then a protocol error.
    const pending = this.#requests.take(id);
    if (pending === undefined) {
      const late = this.#requests.takeAbandoned(id);
      if (late !== undefined && typeof id === "number") {
        // Its caller gave up, but the host acted on it: a late accepted resume still replays.
        if (message.error === undefined && isObject(message.result)) late.onAccepted?.(message.result);
        this.#sink.onLateResponse(id, late.method, message);
        return;
      }
      const what = id === null ? "a response with a null id (the host could not read a request)" : `a response to unknown id ${JSON.stringify(id)}`;
      this.#sink.onProblem(what, message);
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
      // Synchronously, before the notifications behind this answer (a resume's replay) are handed on.
      const refused = pending.onAccepted?.(message.result as Record<string, unknown>);
      if (refused === undefined) wait.resolve(message.result);
      else wait.reject(refused);
    }
  }
}

/** Why a write failure closes the endpoint: a host that stopped reading says so in its own words. */
function writeFailure(error: unknown): string {
  if (error instanceof WriteBufferFullError) return error.message;
  return `write failed: ${errorMessage(error)}`;
}

/** `reason`, with whichever exit and close details `from` carries (absent ones stay absent). */
function withEndDetails(reason: string, from: EndDetails | undefined): CloseInfo {
  const info: CloseInfo = { reason };
  for (const key of ["exitCode", "signal", "closeCode", "closeReason"] as const)
    if (from?.[key] !== undefined) (info as unknown as Record<string, unknown>)[key] = from[key];
  return info;
}
