/**
 * NDJSON framing (MSP's default on stdio): one JSON-RPC message per `\n`-terminated
 * UTF-8 line. Lines are split on the byte 0x0A, so a character split across chunks is
 * never decoded in halves.
 */
import type { Message } from "vscode-jsonrpc";
import type { ByteChannel } from "./byteChannel.js";
import { FramedMessageReader, type ReaderOptions } from "./framedReader.js";
import { FramedMessageWriter } from "./framedWriter.js";
import { excerpt, isFramingProblem, parseMessage } from "./limits.js";

const NEWLINE = 0x0a;

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
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;

  constructor(channel: ByteChannel, options: ReaderOptions = {}) {
    super(channel, options);
  }

  protected consume(chunk: Uint8Array): void {
    let start = 0;
    let newline = chunk.indexOf(NEWLINE, start);
    if (newline >= 0 && this.#pending.length > 0) {
      // Finish the line begun in earlier chunks.
      const head = chunk.subarray(0, newline);
      if (this.#pendingBytes + head.length > this.maxMessageBytes) return this.#oversized();
      this.#pending.push(head);
      const line = concat(this.#pending, this.#pendingBytes + head.length);
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#line(this.#decoder.decode(line));
      start = newline + 1;
      newline = chunk.indexOf(NEWLINE, start);
    }
    if (newline >= 0) {
      // Decode every whole line in this chunk at once, then split: one decode per chunk.
      const last = chunk.lastIndexOf(NEWLINE);
      if (last - start <= this.maxMessageBytes) {
        for (const text of this.#decoder.decode(chunk.subarray(start, last)).split("\n")) this.#line(text);
      } else {
        // Some line here may be oversized: measure each before decoding it.
        for (let end = newline; end >= 0 && end <= last; end = chunk.indexOf(NEWLINE, start)) {
          if (end - start > this.maxMessageBytes) return this.#oversized();
          this.#line(this.#decoder.decode(chunk.subarray(start, end)));
          start = end + 1;
        }
      }
      start = last + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.#pendingBytes + rest.length > this.maxMessageBytes) return this.#oversized();
      // Copy: the caller may reuse its buffer.
      this.#pending.push(rest.slice());
      this.#pendingBytes += rest.length;
    }
  }

  /** A last line without its newline is still a message if it parses; otherwise it is reported. */
  protected override flush(): void {
    if (this.#pendingBytes === 0) return;
    const text = this.#decoder.decode(concat(this.#pending, this.#pendingBytes));
    this.#pending = [];
    this.#pendingBytes = 0;
    if (text.trim() === "") return;
    const parsed = parseMessage(text.endsWith("\r") ? text.slice(0, -1) : text);
    if (isFramingProblem(parsed)) this.problem({ problem: `the stream ended inside a message (${parsed.problem})`, text: excerpt(text), fatal: false });
    else this.deliver(parsed);
  }

  #line(text: string): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.trim().length === 0) return;
    this.deliverText(line);
  }

  #oversized(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.problem({ problem: `a message exceeds maxMessageBytes (${this.maxMessageBytes} bytes)`, fatal: true });
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const encoder = new TextEncoder();

/**
 * Writes messages as NDJSON lines to a {@link ByteChannel}, strictly in call order.
 *
 * @example
 * ```ts
 * const writer = new NdjsonMessageWriter(channel);
 * await writer.write({ jsonrpc: "2.0", method: "ping" });
 * ```
 */
export class NdjsonMessageWriter extends FramedMessageWriter {
  protected encode(message: Message): Uint8Array {
    return encoder.encode(`${JSON.stringify(message)}\n`);
  }
}
