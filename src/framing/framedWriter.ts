/**
 * FramedMessageWriter: the shared half of every byte-stream writer. Subclasses say how one
 * message becomes bytes; this class writes them in call order and reports pipe errors.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc";
import type { ByteChannel } from "./byteChannel.js";

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
    super(`not JSON-serializable (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.name = "MessageEncodingError";
  }
}

/**
 * Base class of the byte-stream writers: framing subclasses implement
 * {@link FramedMessageWriter.encode}; this class writes in call order and reports pipe errors.
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
  #errors = 0;

  constructor(channel: ByteChannel) {
    super();
    this.#channel = channel;
  }

  /** The bytes of one framed message. */
  protected abstract encode(message: Message): Uint8Array;

  /**
   * Write one message; rejects (and fires `onError`) when the channel is broken.
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
  async write(message: Message): Promise<void> {
    let bytes: Uint8Array;
    try {
      bytes = this.encode(message);
    } catch (error) {
      // The message itself is bad (a BigInt, a cycle): nothing was sent and the channel is fine.
      throw new MessageEncodingError(error);
    }
    try {
      await this.#channel.write(bytes);
    } catch (error) {
      this.#errors += 1;
      this.fireError(error, message, this.#errors);
      throw error;
    }
  }

  /** Close the channel's writing side. */
  end(): void {
    this.#channel.end();
  }
}
