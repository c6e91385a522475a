/**
 * A bounded line reader over a file descriptor: yields a file's `\n`-separated lines one at a time
 * from a fixed-size read buffer, so its memory depends on the longest line it accepts, never on
 * the file's size. A line longer than the bound is reported and skipped, not fatal.
 */
import { readSync } from "node:fs";

/**
 * The longest session-log line the host reads back: 16 MiB, the SDK's default `maxMessageBytes`
 * (a logged notification longer than that could not reach a client with default limits anyway).
 * Longer lines are reported and skipped.
 */
export const MAX_LOG_LINE_BYTES = 16 * 1024 * 1024;

/** @unit bytes read from the file per `read(2)` */
const CHUNK_BYTES = 64 * 1024;
/** @unit bytes of an over-long line kept to report it */
const HEAD_BYTES = 256;

/** A line the reader skipped because it was longer than `maxLineBytes`. */
export interface OversizeLine {
  /** 1-based line number. */
  line: number;
  /** @unit bytes from the start of the file to the start of the line */
  offset: number;
  /** @unit bytes in the line, without its `\n` */
  bytes: number;
  /** Whether a `\n` ends the line (the last line of a torn write has none). */
  terminated: boolean;
  /** The line's first bytes (up to 256), decoded: enough to tell what it was. */
  head: string;
}

/** Options of {@link readLines}. */
export interface ReadLinesOptions {
  /**
   * @unit bytes: the longest line yielded (without its `\n`); longer ones go to `onOversize`
   * @defaultValue {@link MAX_LOG_LINE_BYTES}
   */
  maxLineBytes?: number;
  /** Called for every line longer than `maxLineBytes` (it is skipped). */
  onOversize?: (line: OversizeLine) => void;
  /**
   * @unit bytes from the start of the file where reading starts: the start of a line (an offset a
   * {@link LogLine.end} gave), so a reader resumes where it stopped without reading the file again
   * @defaultValue 0
   */
  from?: number;
}

/** One line {@link readLogLines} yields, with where it lies in the file. */
export interface LogLine {
  /** The line, decoded as UTF-8, without its `\n`. */
  text: string;
  /** @unit bytes from the start of the file to the start of the line */
  offset: number;
  /** @unit bytes from the start of the file to the start of the next line (past the `\n`) */
  end: number;
  /** Whether a `\n` ends the line: the last line of a file may be a torn (or unfinished) write. */
  terminated: boolean;
}

/**
 * Yields each line of the file open at `fd` (read from offset `from`, 0 by default, decoded as
 * UTF-8, without its `\n`), including a last line with no `\n` (a torn write). Empty lines are
 * yielded too. Holds at most one 64 KiB buffer and one line of up to `maxLineBytes`.
 */
export function* readLines(fd: number, options: ReadLinesOptions = {}): Generator<string, void, undefined> {
  for (const line of readLogLines(fd, options)) yield line.text;
}

/**
 * {@link readLines}, with where each line lies: its offset, the offset of the line after it (where
 * a later read resumes, with `from`), and whether a `\n` ends it. Line numbers given to
 * `onOversize` count from the line at `from`.
 */
export function* readLogLines(fd: number, options: ReadLinesOptions = {}): Generator<LogLine, void, undefined> {
  const max = options.maxLineBytes ?? MAX_LOG_LINE_BYTES;
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Copies of the current line's bytes from earlier chunks (the chunk buffer is reused). */
  let parts: Buffer[] = [];
  let partBytes = 0;
  /** The first bytes of an over-long line, kept once its other bytes are dropped. */
  let head = "";
  /** True while inside a line already known to be too long: its bytes are counted, not kept. */
  let skipping = false;
  let lineNumber = 1;
  const from = options.from ?? 0;
  let lineStart = from;
  let position = from;
  const headOf = (start: number, end: number): string => {
    const first: Buffer[] = [];
    let bytes = 0;
    for (const part of [...parts, chunk.subarray(start, end)]) {
      if (bytes >= HEAD_BYTES) break;
      first.push(part.subarray(0, HEAD_BYTES - bytes));
      bytes += Math.min(part.length, HEAD_BYTES - bytes);
    }
    return Buffer.concat(first).toString("utf8");
  };
  const lineOf = (start: number, end: number, terminated: boolean): LogLine | undefined => {
    const bytes = partBytes + (end - start);
    if (skipping || bytes > max) {
      options.onOversize?.({ line: lineNumber, offset: lineStart, bytes, terminated, head: skipping ? head : headOf(start, end) });
      return undefined;
    }
    const text = parts.length === 0 ? chunk.toString("utf8", start, end) : Buffer.concat([...parts, chunk.subarray(start, end)], bytes).toString("utf8");
    return { text, offset: lineStart, end: lineStart + bytes + (terminated ? 1 : 0), terminated };
  };
  const reset = (nextStart: number) => {
    parts = [];
    partBytes = 0;
    skipping = false;
    head = "";
    lineNumber += 1;
    lineStart = nextStart;
  };
  for (;;) {
    const n = readSync(fd, chunk, 0, CHUNK_BYTES, position);
    if (n === 0) break;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1 || nl >= n) break;
      const line = lineOf(start, nl, true);
      reset(position + nl + 1);
      start = nl + 1;
      if (line !== undefined) yield line;
    }
    if (start < n) {
      const tail = n - start;
      if (skipping || partBytes + tail > max) {
        if (!skipping) head = headOf(start, n);
        skipping = true;
        parts = [];
        partBytes += tail;
      } else {
        parts.push(Buffer.from(chunk.subarray(start, n)));
        partBytes += tail;
      }
    }
    position += n;
  }
  if (partBytes > 0) {
    const line = lineOf(0, 0, false);
    if (line !== undefined) yield line;
  }
}
