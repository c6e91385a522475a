/**
 * LineSplitter: MSP's NDJSON line rule (one message per `\n`-terminated UTF-8 line), bytes in and
 * lines out. It lives in protocol/ because it is part of the wire format: the client's framing
 * reader, the testing fixtures and the reference host all split lines with it.
 */

/**
 * Default longest line a {@link LineSplitter} accepts (16 MiB).
 * @unit bytes
 *
 * @example
 * ```ts
 * new LineSplitter(onLine, { maxLineBytes: DEFAULT_MAX_LINE_BYTES });
 * ```
 */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Options of a {@link LineSplitter}.
 *
 * @example
 * ```ts
 * const options: LineSplitterOptions = { maxLineBytes: 1 << 20, onOverflow: () => console.warn("line too long") };
 * ```
 */
export interface LineSplitterOptions {
  /** The longest line accepted, its `\r` included. `Infinity` for no bound. @unit bytes @defaultValue 16 MiB */
  maxLineBytes?: number;
  /** Called once for each longer line, which is discarded up to its newline; splitting goes on after it. */
  onOverflow?: () => void;
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into `\n`-terminated lines. Splitting on the byte 0x0A (never inside a
 * UTF-8 sequence) means a character split across chunks is decoded whole. A trailing `\r` is
 * dropped and blank lines are skipped. An over-long line's bytes are dropped as they come, never kept.
 *
 * @example
 * ```ts
 * const splitter = new LineSplitter((line) => console.log(line));
 * splitter.push(new TextEncoder().encode('{"a":1}\n{"b"'));
 * splitter.push(new TextEncoder().encode(':2}\n')); // logs both lines
 * ```
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: (() => void) | undefined;
  readonly #maxLineBytes: number;
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #skipping = false;

  /**
   * @param onLine - Called with each complete, non-blank line, decoded as UTF-8, without its line ending.
   * @param options - The longest line accepted, and what to call for a longer one.
   */
  constructor(onLine: (line: string) => void, options: LineSplitterOptions = {}) {
    this.#onLine = onLine;
    this.#onOverflow = options.onOverflow;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Feed a chunk; calls `onLine` for every line it completes. The chunk is copied where kept. */
  push(chunk: Uint8Array): void {
    const last = chunk.lastIndexOf(NEWLINE);
    if (last < 0) return this.#keep(chunk);
    let start = 0;
    if (this.#pendingBytes > 0 || this.#skipping) {
      // Finish the line begun in earlier chunks.
      const first = chunk.indexOf(NEWLINE);
      this.#keep(chunk.subarray(0, first));
      this.#emit();
      start = first + 1;
    }
    if (start <= last) {
      if (last - start <= this.#maxLineBytes) {
        // No line here can be over-long: decode them all at once, then split (one decode per chunk).
        for (const text of this.#decoder.decode(chunk.subarray(start, last)).split("\n")) this.#line(text);
      } else {
        // Some line here may be over-long: measure each before decoding it.
        while (start <= last) {
          const end = chunk.indexOf(NEWLINE, start);
          if (end - start > this.#maxLineBytes) this.#onOverflow?.();
          else this.#line(this.#decoder.decode(chunk.subarray(start, end)));
          start = end + 1;
        }
      }
    }
    if (last + 1 < chunk.length) this.#keep(chunk.subarray(last + 1));
  }

  /**
   * End of stream: the last line, if it has no newline, is delivered too: to `onLast` when given
   * (a reader may treat a cut-off message differently), else to `onLine`.
   */
  end(onLast: (line: string) => void = this.#onLine): void {
    const skipped = this.#skipping;
    const bytes = this.#take();
    if (skipped || bytes.length === 0) return;
    const line = trimReturn(this.#decoder.decode(bytes));
    if (line.trim() !== "") onLast(line);
  }

  #keep(part: Uint8Array): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#pendingBytes + part.length > this.#maxLineBytes) {
      this.#take();
      this.#skipping = true;
      this.#onOverflow?.();
      return;
    }
    this.#pending.push(new Uint8Array(part)); // a copy: the caller may reuse its buffer (Buffer#slice would not copy)
    this.#pendingBytes += part.length;
  }

  /** The line begun in earlier chunks is complete: deliver it, unless it was over-long. */
  #emit(): void {
    const skipped = this.#skipping;
    const bytes = this.#take();
    if (!skipped) this.#line(this.#decoder.decode(bytes));
  }

  /** Take the pending bytes, leaving nothing pending and not skipping. */
  #take(): Uint8Array {
    const bytes = concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#skipping = false;
    return bytes;
  }

  #line(text: string): void {
    const line = trimReturn(text);
    if (line.trim() !== "") this.#onLine(line);
  }
}

function trimReturn(text: string): string {
  return text.endsWith("\r") ? text.slice(0, -1) : text;
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
