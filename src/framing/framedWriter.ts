/**
 * FramedMessageWriter: the shared half of every byte-stream writer. Subclasses say how one
 * message becomes bytes; this class writes them in call order and reports pipe errors.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc";
import type { ByteChannel } from "./byteChannel.js";

/**
 * Base class of the byte-stream writers: framing subclasses implement
 * {@link FramedMessageWriter.encode}; this class writes in call order and reports pipe errors.
 *
 * @example
 * ```ts
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
   * await writer.write({ jsonrpc: "2.0", method: "ping" });
   * ```
   */
  async write(message: Message): Promise<void> {
    const bytes = this.encode(message);
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
