/**
 * FramedMessageWriter: the shared half of every byte-stream writer. Subclasses say how one
 * message becomes bytes; this class writes them in call order and reports pipe errors.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc";
import type { ByteChannel } from "./byteChannel.js";
import { errorMessage } from "../internal/errorMessage.js";

/**
 * A message that cannot be encoded (not JSON-serializable). Nothing was written: the channel
 * is unharmed, unlike a write that fails.
 *
 * @example
 * ```ts
 * import type { RequestMessage } from "vscode-jsonrpc";
 *
 * const writer = new NdjsonMessageWriter(channel);
 * const request: RequestMessage = { jsonrpc: "2.0", id: 1, method: "host/info", params: { size: 1n } }; // a BigInt
 * await writer.write(request).catch((e: unknown) => {
 *   if (!(e instanceof MessageEncodingError)) throw e;
 *   console.warn(e.message); // nothing was written; the channel is fine
 * });
 * ```
 */
export class MessageEncodingError extends TypeError {
  constructor(cause: unknown) {
    super(`not JSON-serializable (${errorMessage(cause)})`, { cause });
    this.name = "MessageEncodingError";
  }
}

/**
 * Default bound on the bytes a writer holds for a peer that is not reading (64 MiB): four
 * messages of the default `maxMessageBytes` (16 MiB). A peer that reads keeps the queue near empty,
 * whatever it is sent; only one that stopped reading lets it reach this bound.
 *
 * @unit bytes
 * @example
 * ```ts
 * connect(channel, { maxWriteBufferBytes: DEFAULT_MAX_WRITE_BUFFER_BYTES / 4 });
 * ```
 */
export const DEFAULT_MAX_WRITE_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Options of a {@link FramedMessageWriter}.
 *
 * @example
 * ```ts
 * const writer = new NdjsonMessageWriter(channel, { maxWriteBufferBytes: 8 * 1024 * 1024 });
 * ```
 */
export interface WriterOptions {
  /**
   * The most bytes held for a peer that does not read: messages waiting for the channel to make
   * room, plus the one it is writing. A message that would pass the bound fails the writer with a
   * {@link WriteBufferFullError} (a connection then closes as `connectionClosed`, saying the host
   * is not reading). A single message larger than the bound is still written when nothing waits.
   * @unit bytes
   * @defaultValue 64 MiB ({@link DEFAULT_MAX_WRITE_BUFFER_BYTES})
   */
  maxWriteBufferBytes?: number | undefined;
}

/**
 * The peer is not reading: writing one more message would hold more than `maxWriteBufferBytes`
 * for it. The writer is broken from then on (every later write rejects with this error), and
 * what it held is released. An `MspClient` closes with `connectionClosed`, this message as its reason.
 *
 * @example
 * ```ts
 * client.events.once("close", ({ reason }) => {
 *   if (reason.startsWith("the host is not reading its input")) console.warn("the host stopped reading:", reason);
 * });
 * ```
 */
export class WriteBufferFullError extends Error {
  /** Bytes held, for the peer, when the message came. @unit bytes */
  readonly queuedBytes: number;
  /** The bound it would have passed. @unit bytes */
  readonly maxWriteBufferBytes: number;

  constructor(queuedBytes: number, maxWriteBufferBytes: number) {
    super(`the host is not reading its input: ${queuedBytes} bytes queued (maxWriteBufferBytes ${maxWriteBufferBytes})`);
    this.name = "WriteBufferFullError";
    this.queuedBytes = queuedBytes;
    this.maxWriteBufferBytes = maxWriteBufferBytes;
  }
}

/** Throws the RangeError a bad `maxWriteBufferBytes` gets: callers check before they start anything. */
export function assertMaxWriteBufferBytes(value: unknown): asserts value is number | undefined {
  if (value !== undefined && !(typeof value === "number" && value > 0))
    throw new RangeError(`maxWriteBufferBytes must be a positive number, got ${String(value)}`);
}

interface Queued {
  bytes: Uint8Array;
  message: Message;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Base class of the byte-stream writers: framing subclasses implement
 * {@link FramedMessageWriter.encode}; this class writes in call order and reports pipe errors.
 *
 * Backpressure: a channel whose `write` returns a promise is given the next message only once
 * that promise resolves (Node's `streamChannel` returns one when the stream is full, resolved at
 * `drain`). Messages wait here meanwhile, at most `maxWriteBufferBytes` of them.
 *
 * @example
 * ```ts
 * import type { Message } from "vscode-jsonrpc";
 *
 * class LineWriter extends FramedMessageWriter {
 *   protected encode(message: Message) { return new TextEncoder().encode(JSON.stringify(message) + "\n"); }
 * }
 * ```
 */
export abstract class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  readonly #channel: ByteChannel;
  readonly #max: number;
  /** Messages not yet accepted by the channel, the one being written first. */
  #queue: Queued[] = [];
  /** Bytes of the queued messages. @unit bytes */
  #queuedBytes = 0;
  #writing = false;
  /** Set once the channel failed or the peer stopped reading: every later write rejects with it. */
  #broken: unknown;
  /** 1 once `end()` was called, 2 once the channel was ended. */
  #end = 0;

  constructor(channel: ByteChannel, options: WriterOptions = {}) {
    super();
    assertMaxWriteBufferBytes(options.maxWriteBufferBytes);
    this.#channel = channel;
    this.#max = options.maxWriteBufferBytes ?? DEFAULT_MAX_WRITE_BUFFER_BYTES;
  }

  /** The bytes of one framed message. */
  protected abstract encode(message: Message): Uint8Array;

  /** Bytes waiting for the channel to accept them, the message being written included. @unit bytes */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /**
   * Write one message, after every message written before it. Resolves once the channel has
   * accepted it; rejects (and fires `onError`) when the channel is broken or the peer is not
   * reading (a {@link WriteBufferFullError}).
   *
   * @example
   * ```ts
   * import type { RequestMessage } from "vscode-jsonrpc";
   *
   * const writer = new ContentLengthMessageWriter(channel);
   * const request: RequestMessage = { jsonrpc: "2.0", id: 1, method: "host/info", params: {} };
   * await writer.write(request);
   * ```
   */
  write(message: Message): Promise<void> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    let bytes: Uint8Array;
    try {
      bytes = this.encode(message);
    } catch (error) {
      // The message itself is bad (a BigInt, a cycle): nothing was sent and the channel is fine.
      return Promise.reject(new MessageEncodingError(error));
    }
    const queued = this.#queuedBytes;
    if (queued > 0 && queued + bytes.length > this.#max) {
      this.#fail(new WriteBufferFullError(queued, this.#max), message);
      return Promise.reject(this.#broken);
    }
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ bytes, message, resolve, reject });
      this.#queuedBytes += bytes.length;
      this.#pump();
    });
  }

  /** Hand queued messages to the channel in order, waiting whenever it returns a promise. */
  #pump(): void {
    if (this.#writing) return;
    this.#writing = true;
    let entry: Queued | undefined;
    while (this.#broken === undefined && (entry = this.#queue[0]) !== undefined) {
      const first = entry;
      let accepted: Promise<void> | void;
      try {
        accepted = this.#channel.write(first.bytes);
      } catch (error) {
        this.#writing = false;
        return this.#fail(error, first.message);
      }
      if (accepted) {
        // The channel is full: the next message waits until it has room. An entry no longer
        // first was dropped meanwhile (disposed or failed).
        accepted.then(
          () => {
            if (this.#queue[0] !== first) return;
            this.#done();
            this.#writing = false;
            this.#pump();
          },
          (error: unknown) => {
            if (this.#queue[0] !== first) return;
            this.#writing = false;
            this.#fail(error, first.message);
          },
        );
        return;
      }
      // A channel that failed or ended inside write() (synchronously) dropped the queue already.
      if (this.#broken !== undefined || this.#queue[0] !== first) break;
      this.#done();
    }
    this.#writing = false;
    if (this.#queue.length === 0) this.#endIfAsked();
  }

  /** The first queued message was accepted by the channel. */
  #done(): void {
    const done = this.#queue.shift() as Queued;
    this.#queuedBytes -= done.bytes.length;
    done.resolve();
  }

  /** The channel failed or the peer stopped reading: report it once, and release everything queued. */
  #fail(error: unknown, message: Message): void {
    if (this.#broken !== undefined) return;
    this.#broken = error;
    this.#drop();
    this.fireError(error, message, 1);
  }

  /** Reject and release every queued message. */
  #drop(): void {
    const dropped = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const entry of dropped) entry.reject(this.#broken);
  }

  /** Close the channel's writing side, once the messages already queued are written. */
  end(): void {
    this.#end ||= 1;
    if (this.#queue.length === 0) this.#endIfAsked();
  }

  #endIfAsked(): void {
    if (this.#end !== 1) return;
    this.#end = 2;
    this.#channel.end();
  }

  /** Release what is still queued (its writes reject) and stop; a requested `end()` happens now. */
  override dispose(): void {
    this.#broken ??= new Error("the writer was disposed");
    this.#drop();
    this.#endIfAsked();
    super.dispose();
  }
}
