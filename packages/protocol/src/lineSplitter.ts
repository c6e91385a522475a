/**
 * LineSplitter: MSP's NDJSON line rule (one message per `\n`-terminated UTF-8 line), bytes in and
 * lines out. It lives in protocol/ because it is part of the wire format: the client's framing
 * reader, the testing fixtures and the reference host all split lines with it.
 */

/**
 * Default longest line a {@link LineSplitter} accepts (16 MiB).
 * @unit bytes
 */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Options of a {@link LineSplitter}. */
export interface LineSplitterOptions {
  /** The longest line accepted, its `\r` included. `Infinity` for no bound. @unit bytes @defaultValue 16 MiB */
  maxLineBytes?: number;
  /** Called once for each longer line, which is discarded up to its newline; splitting goes on after it. */
  onOverflow?: () => void;
}

const NEWLINE = 0x0a;
/** First capacity of the pending-line buffer. @unit bytes */
const MIN_PENDING_CAPACITY = 256;
/** A pending-line buffer up to this size is kept for the next line; a larger one is released. @unit bytes */
const RETAINED_CAPACITY = 64 * 1024;
const EMPTY = new Uint8Array(0);

/**
 * Splits a byte stream into `\n`-terminated lines. Splitting on the byte 0x0A (never inside a
 * UTF-8 sequence) means a character split across chunks is decoded whole. A trailing `\r` is
 * dropped and blank lines are skipped. An over-long line's bytes are dropped as they come, never kept.
 *
 * Memory: a line begun in one chunk and continued in later ones is copied into one growable
 * buffer (its capacity doubles, never past `maxLineBytes`), so whatever the chunking (one byte
 * per chunk included) a pending line costs at most twice its bytes, and never more than
 * `maxLineBytes`: one object, not one per chunk.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: (() => void) | undefined;
  readonly #maxLineBytes: number;
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  /** The line begun in earlier chunks: its first `#pendingBytes` bytes (a copy, never the caller's buffer). */
  #pending: Uint8Array = EMPTY;
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
      this.end(); // the line begun in earlier chunks is complete: delivered, unless it was over-long
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
    if (!skipped) this.#line(this.#decoder.decode(bytes), onLast);
  }

  #keep(part: Uint8Array): void {
    if (this.#skipping || part.length === 0) return;
    const needed = this.#pendingBytes + part.length;
    if (needed > this.#maxLineBytes) {
      this.#take();
      this.#skipping = true;
      this.#onOverflow?.();
      return;
    }
    if (needed > this.#pending.length) {
      // Amortized doubling, capped at the longest line accepted.
      const grown = new Uint8Array(Math.min(Math.max(MIN_PENDING_CAPACITY, this.#pending.length * 2, needed), this.#maxLineBytes));
      grown.set(this.#pending.subarray(0, this.#pendingBytes));
      this.#pending = grown;
    }
    this.#pending.set(part, this.#pendingBytes); // a copy: the caller may reuse its buffer
    this.#pendingBytes = needed;
  }

  /**
   * Take the pending bytes, leaving nothing pending and not skipping. The result is a view of the
   * buffer: decode it before anything is kept again.
   */
  #take(): Uint8Array {
    const bytes = this.#pending.subarray(0, this.#pendingBytes);
    // A small buffer serves the next line; a large one goes, so an idle splitter holds little.
    if (this.#pending.length > RETAINED_CAPACITY) this.#pending = EMPTY;
    this.#pendingBytes = 0;
    this.#skipping = false;
    return bytes;
  }

  #line(text: string, onLine = this.#onLine): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (line.trim() !== "") onLine(line);
  }
}
