/**
 * NDJSON framing (MSP's default on stdio): one JSON-RPC message per `\n`-terminated
 * UTF-8 line. Lines are split by the protocol's one LineSplitter, on the byte 0x0A, so a
 * character split across chunks is never decoded in halves.
 */
import type { Message } from "vscode-jsonrpc";
import { LineSplitter } from "@muse-code/protocol/lineSplitter.js";
import type { ByteChannel } from "./byteChannel.js";
import { FramedMessageReader, type ReaderOptions } from "./framedReader.js";
import { FramedMessageWriter } from "./framedWriter.js";
import { excerpt, isFramingProblem, parseMessage } from "./limits.js";

/**
 * Reads NDJSON messages from a {@link ByteChannel}. Blank lines are skipped and a trailing
 * `\r` is tolerated. A malformed line is a non-fatal problem: later lines still arrive. A line
 * longer than `maxMessageBytes` is fatal, and its bytes are dropped as they come, never kept.
 *
 * @example
 * ```ts
 * const reader = new NdjsonMessageReader(channel, { maxMessageBytes: 1 << 20 });
 * reader.onProblem((p) => console.warn(p.problem));
 * ```
 */
export class NdjsonMessageReader extends FramedMessageReader {
  readonly #lines: LineSplitter;
  #oversized = false;

  constructor(channel: ByteChannel, options: ReaderOptions = {}) {
    super(channel, options);
    this.#lines = new LineSplitter(
      (line) => {
        // After a fatal problem the rest of the chunk is not read.
        if (!this.#oversized) this.deliverText(line);
      },
      { maxLineBytes: this.maxMessageBytes, onOverflow: () => this.#overflow() },
    );
  }

  protected consume(chunk: Uint8Array): void {
    this.#lines.push(chunk);
  }

  /** A last line without its newline is still a message if it parses; otherwise it is reported. */
  protected override flush(): void {
    this.#lines.end((text) => {
      const parsed = parseMessage(text);
      if (isFramingProblem(parsed)) this.problem({ problem: `the stream ended inside a message (${parsed.problem})`, text: excerpt(text), fatal: false });
      else this.deliver(parsed);
    });
  }

  #overflow(): void {
    if (this.#oversized) return;
    this.#oversized = true;
    this.problem({ problem: `a message exceeds maxMessageBytes (${this.maxMessageBytes} bytes)`, fatal: true });
  }
}

const encoder = new TextEncoder();

/**
 * Writes messages as NDJSON lines to a {@link ByteChannel}, strictly in call order.
 *
 * @example
 * ```ts
 * import type { RequestMessage } from "vscode-jsonrpc";
 *
 * const writer = new NdjsonMessageWriter(channel);
 * const request: RequestMessage = { jsonrpc: "2.0", id: 1, method: "host/info", params: {} };
 * await writer.write(request);
 * ```
 */
export class NdjsonMessageWriter extends FramedMessageWriter {
  protected encode(message: Message): Uint8Array {
    return encoder.encode(`${JSON.stringify(message)}\n`);
  }
}
