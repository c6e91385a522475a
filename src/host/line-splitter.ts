/** The NDJSON line splitter: bytes in, complete UTF-8 lines out, splitting on byte 0x0A. */

/**
 * Default longest line accepted.
 * @unit bytes
 *
 * @example
 * ```ts
 * new LineSplitter(onLine, { maxLineBytes: DEFAULT_MAX_LINE_BYTES });
 * ```
 */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Splits a byte stream into `\n`-terminated lines. Splitting on the byte 0x0A (never inside a
 * UTF-8 sequence) means a character split across chunks is decoded whole. A trailing `\r` is
 * dropped; empty lines are skipped. A line longer than `maxLineBytes` is reported to `onOverflow`
 * and discarded up to its newline.
 *
 * @example
 * ```ts
 * const splitter = new LineSplitter((line) => console.log(line));
 * splitter.push(Buffer.from('{"a":1}\n{"b"'));
 * splitter.push(Buffer.from(':2}\n')); // logs both lines
 * ```
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: (() => void) | undefined;
  readonly #maxLineBytes: number;
  readonly #decoder = new TextDecoder("utf-8");
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #skipping = false;

  /**
   * @param onLine - Called with each complete line, decoded as UTF-8, without its line ending.
   * @param options - `maxLineBytes`: the longest line accepted, in bytes (default 16 MiB,
   *   `DEFAULT_MAX_LINE_BYTES`); `onOverflow`: called once for each longer line, which is discarded.
   */
  constructor(onLine: (line: string) => void, options: { maxLineBytes?: number; onOverflow?: () => void } = {}) {
    this.#onLine = onLine;
    this.#onOverflow = options.onOverflow;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Feeds a chunk; calls `onLine` for every line it completes. */
  push(chunk: Uint8Array): void {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        this.#keep(buf);
        return;
      }
      this.#keep(buf.subarray(0, nl));
      this.#emit();
      buf = buf.subarray(nl + 1);
    }
  }

  /** Ends the stream: a final unterminated line is delivered too. */
  end(): void {
    if (this.#pendingBytes > 0 || this.#skipping) this.#emit();
  }

  #keep(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#pendingBytes + part.length > this.#maxLineBytes) {
      this.#skipping = true;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#onOverflow?.();
      return;
    }
    this.#pending.push(Buffer.from(part)); // copy: the caller may reuse its buffer
    this.#pendingBytes += part.length;
  }

  #emit(): void {
    const skipped = this.#skipping;
    this.#skipping = false;
    const bytes = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    if (skipped) return;
    let line = this.#decoder.decode(bytes);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() !== "") this.#onLine(line);
  }
}
