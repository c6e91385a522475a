/**
 * FramedMessageReader: the shared half of every byte-stream reader. It subscribes to a
 * ByteChannel, hands chunks to a framing-specific `consume`, and reports problems.
 */
import { AbstractMessageReader, Emitter, type DataCallback, type Disposable, type Event, type Message } from "vscode-jsonrpc";
import type { ByteChannel, EndDetails, Unsubscribe } from "./byteChannel.js";
import { DEFAULT_MAX_MESSAGE_BYTES, isFramingProblem, parseMessage, type FramingProblem } from "./limits.js";
import { errorMessage } from "../internal/errorMessage.js";

/**
 * Options shared by every reader.
 *
 * @example
 * ```ts
 * const reader = new NdjsonMessageReader(channel, { maxMessageBytes: 1024 * 1024 });
 * ```
 */
export interface ReaderOptions {
  /** Largest accepted message. @unit bytes @defaultValue 16 MiB */
  maxMessageBytes?: number | undefined;
}

/**
 * Base class of the byte-stream readers: framing subclasses implement
 * {@link FramedMessageReader.consume}; this class subscribes, parses and reports problems.
 *
 * @example
 * ```ts
 * class LineReader extends FramedMessageReader {
 *   protected consume(chunk: Uint8Array) { this.deliverText(new TextDecoder().decode(chunk)); }
 * }
 * ```
 */
export abstract class FramedMessageReader extends AbstractMessageReader {
  readonly #channel: ByteChannel;
  readonly #problems = new Emitter<FramingProblem>();
  #callback: DataCallback | undefined;
  #subscriptions: Unsubscribe[] = [];
  #stopped = false;
  #endDetails: EndDetails | undefined;
  protected readonly maxMessageBytes: number;

  constructor(channel: ByteChannel, options: ReaderOptions = {}) {
    super();
    this.#channel = channel;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** Fires for every malformed or oversized frame. Fatal problems are followed by close. */
  get onProblem(): Event<FramingProblem> {
    return this.#problems.event;
  }

  /**
   * Start delivering parsed messages to `callback` (the connection calls this once).
   *
   * @example
   * ```ts
   * const reader = new NdjsonMessageReader(channel);
   * reader.listen((message) => console.log(message));
   * ```
   */
  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    this.#subscriptions = [
      this.#channel.onData((chunk) => {
        if (!this.#stopped) this.consume(chunk);
      }),
      this.#channel.onEnd((details) => {
        this.#endDetails = details;
        this.stop();
      }),
      this.#channel.onError((error) => {
        this.#endDetails ??= { reason: `transport error: ${errorMessage(error)}` };
        this.fireError(error);
        this.stop();
      }),
    ];
    return { dispose: () => this.#unsubscribe() };
  }

  /** How the channel ended, when it said (exit code or signal of a child host). */
  get endDetails(): EndDetails | undefined {
    return this.#endDetails;
  }

  /** Feed one chunk of bytes. */
  protected abstract consume(chunk: Uint8Array): void;

  /** Parse one complete message's text and deliver it, or report why not. */
  protected deliverText(text: string): void {
    const parsed = parseMessage(text);
    if (isFramingProblem(parsed)) this.#problems.fire(parsed);
    else this.deliver(parsed);
  }

  /** Deliver a parsed message to the connection. */
  protected deliver(message: Message): void {
    this.#callback?.(message);
  }

  /** Report a problem; a fatal one stops the reader and closes the connection. */
  protected problem(problem: FramingProblem): void {
    this.#problems.fire(problem);
    if (problem.fatal) this.stop(false);
  }

  /** Stop reading and signal close, once. */
  /**
   * Stop reading and signal close, once. At end of stream, `flush` first hands over (or reports)
   * whatever the framing still holds, so a last message is never dropped without a word.
   */
  protected stop(flush = true): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unsubscribe();
    if (flush) this.flush();
    this.fireClose();
  }

  /** End of stream: deliver or report bytes still buffered. Framings that buffer override it. */
  protected flush(): void {}

  #unsubscribe(): void {
    for (const unsubscribe of this.#subscriptions.splice(0)) unsubscribe();
  }

  /** Stop reading and release the channel subscriptions and emitters. */
  override dispose(): void {
    this.#unsubscribe();
    this.#problems.dispose();
    super.dispose();
  }
}
