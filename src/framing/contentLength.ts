/**
 * Content-Length framing (the LSP style, an option for MSP on stdio):
 * `Content-Length: N\r\n` headers, a blank line, then exactly N bytes of UTF-8 JSON.
 */
import type { Message } from "vscode-jsonrpc";
import type { ByteChannel } from "./byteChannel.js";
import { FramedMessageReader, type ReaderOptions } from "./framedReader.js";
import { FramedMessageWriter } from "./framedWriter.js";
import { excerpt } from "./limits.js";

/** Largest header block accepted before the blank line. @unit bytes */
const MAX_HEADER_BYTES = 8 * 1024;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Reads Content-Length framed messages from a {@link ByteChannel}. A body that is not valid
 * JSON-RPC is a non-fatal problem; a bad header, two Content-Length headers that disagree, or a
 * length over `maxMessageBytes` is fatal (the stream can no longer be trusted) and no buffer is
 * allocated for that body. Identical repeated Content-Length headers are accepted.
 *
 * @example
 * ```ts
 * const reader = new ContentLengthMessageReader(channel);
 * ```
 */
export class ContentLengthMessageReader extends FramedMessageReader {
  readonly #decoder = new TextDecoder("utf-8");
  readonly #header = new Uint8Array(MAX_HEADER_BYTES);
  #headerLength = 0;
  #body: Uint8Array | undefined;
  #bodyFilled = 0;

  constructor(channel: ByteChannel, options: ReaderOptions = {}) {
    super(channel, options);
  }

  protected consume(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#body === undefined) {
        // Header state: copy bytes until the blank line.
        const end = this.#scanHeader(chunk, at);
        if (end === -2) return;
        if (end === -1) return;
        at = end;
        const length = this.#contentLength();
        if (length === undefined) return;
        if (chunk.length - at >= length && length > 0) {
          // Whole body is in this chunk: decode it in place, no copy.
          this.deliverText(this.#decoder.decode(chunk.subarray(at, at + length)));
          at += length;
          continue;
        }
        this.#body = new Uint8Array(length);
        this.#bodyFilled = 0;
        if (length === 0) this.#finishBody();
        continue;
      }
      const take = Math.min(this.#body.length - this.#bodyFilled, chunk.length - at);
      this.#body.set(chunk.subarray(at, at + take), this.#bodyFilled);
      this.#bodyFilled += take;
      at += take;
      if (this.#bodyFilled === this.#body.length) this.#finishBody();
    }
  }

  /** Copy header bytes from `chunk` starting at `at`; returns the index after the blank line, -1 when more is needed, -2 when fatal. */
  #scanHeader(chunk: Uint8Array, at: number): number {
    for (let i = at; i < chunk.length; i++) {
      if (this.#headerLength === MAX_HEADER_BYTES) {
        this.problem({ problem: `Content-Length header block exceeds ${MAX_HEADER_BYTES} bytes`, fatal: true });
        return -2;
      }
      const byte = chunk[i] as number;
      this.#header[this.#headerLength++] = byte;
      const n = this.#headerLength;
      if (byte === LF && n >= 4 && this.#header[n - 2] === CR && this.#header[n - 3] === LF && this.#header[n - 4] === CR) {
        return i + 1;
      }
    }
    return -1;
  }

  /** Parse the collected header block; reports a fatal problem and returns undefined when it is bad. */
  #contentLength(): number | undefined {
    const text = this.#decoder.decode(this.#header.subarray(0, this.#headerLength - 4));
    this.#headerLength = 0;
    let length: number | undefined;
    for (const line of text.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon <= 0) {
        this.problem({ problem: "malformed header line", text: excerpt(line), fatal: true });
        return undefined;
      }
      if (line.slice(0, colon).trim().toLowerCase() === "content-length") {
        const value = line.slice(colon + 1).trim();
        const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
        // Two lengths that disagree: which one frames the body cannot be known, so the stream
        // cannot be trusted (whichever were taken, the next header would be read mid-body).
        if (length !== undefined && parsed !== length) {
          this.problem({ problem: "conflicting Content-Length headers", text: excerpt(text), fatal: true });
          return undefined;
        }
        length = parsed;
      }
    }
    if (length === undefined || !Number.isSafeInteger(length)) {
      this.problem({ problem: "missing or invalid Content-Length header", text: excerpt(text), fatal: true });
      return undefined;
    }
    if (length > this.maxMessageBytes) {
      this.problem({ problem: `a message exceeds maxMessageBytes (${length} > ${this.maxMessageBytes} bytes)`, fatal: true });
      return undefined;
    }
    return length;
  }

  /** A header or body cut off by the end of the stream is reported, never silently dropped. */
  protected override flush(): void {
    if (this.#headerLength === 0 && this.#body === undefined) return;
    const had = this.#body === undefined ? `${this.#headerLength} header bytes` : `${this.#bodyFilled} of ${this.#body.length} body bytes`;
    this.#headerLength = 0;
    this.#body = undefined;
    this.problem({ problem: `the stream ended inside a message (${had})`, fatal: false });
  }

  #finishBody(): void {
    const body = this.#body as Uint8Array;
    this.#body = undefined;
    this.#bodyFilled = 0;
    this.deliverText(this.#decoder.decode(body));
  }
}

const encoder = new TextEncoder();

/**
 * Writes Content-Length framed messages to a {@link ByteChannel}, strictly in call order.
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
export class ContentLengthMessageWriter extends FramedMessageWriter {
  protected encode(message: Message): Uint8Array {
    const body = encoder.encode(JSON.stringify(message));
    const header = encoder.encode(`Content-Length: ${body.length}\r\n\r\n`);
    const frame = new Uint8Array(header.length + body.length);
    frame.set(header, 0);
    frame.set(body, header.length);
    return frame;
  }
}
