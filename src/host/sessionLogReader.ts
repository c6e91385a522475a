/**
 * The session log's reader: streams a log line by line, so memory never depends on a log's size,
 * and rebuilds every notification exactly as the wire carried it (deltas put back whole).
 */
import { closeSync } from "node:fs";
import type { LogFilePool } from "./logFilePool.js";
import { MAX_LOG_LINE_BYTES, readLines } from "./logLines.js";
import { growingField, itemOf } from "./notificationEncoder.js";
import { openLogFile } from "./safeFiles.js";
import type { SessionLogRecord, SkippedRecord } from "./sessionLogRecord.js";

/**
 * Options of {@link readSessionLog}.
 *
 * @example
 * ```ts
 * const options: ReadSessionLogOptions = { onProblem: (line) => console.error(line) };
 * ```
 */
export interface ReadSessionLogOptions {
  /** Told (one line each) about lines skipped as too long, or deltas whose base was lost. */
  onProblem?: (message: string) => void;
  /** Open through this cache's retry: out of descriptors, it closes idle logs and tries once more. */
  pool?: LogFilePool;
  /**
   * @unit bytes: the longest line read back
   * @defaultValue {@link MAX_LOG_LINE_BYTES}
   */
  maxLineBytes?: number;
}

/** The `"n":` of a record from the first bytes of its line (records start with type, at, n). */
function cursorInHead(head: string): number | undefined {
  const match = /^\{"type":"notification","at":[0-9.e+-]+,"n":([0-9]+),/.exec(head);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Streams the well-formed records of a session log, one line at a time: memory holds one line
 * and the text of the items still open at that point, never the whole log. Unparseable lines (a
 * torn write) are skipped; over-long lines and deltas whose base is gone come out as
 * {@link SkippedRecord}s (and go to `onProblem`). Every `item/updated` comes out whole, as the wire
 * carried it. A missing file yields nothing; a file that is not a regular file throws
 * `UnsafeFileError`. Break out of the loop early and the file is closed.
 *
 * @example
 * ```ts
 * for (const record of readSessionLog(sessionLogPath("/var/muse", sessionId))) {
 *   if (record.type === "notification") console.log(record.n, record.method);
 * }
 * ```
 */
export function* readSessionLog(path: string, options: ReadSessionLogOptions = {}): Generator<SessionLogRecord | SkippedRecord, void, undefined> {
  let fd: number;
  try {
    fd = options.pool === undefined ? openLogFile(path, "read").fd : options.pool.open(path, () => openLogFile(path, "read")).fd;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const skipped: SkippedRecord[] = [];
  const report = (why: string, n?: number) => {
    options.onProblem?.(`${path}: ${why}`);
    skipped.push(n === undefined ? { type: "skipped", why } : { type: "skipped", n, why });
  };
  /** The current value of each open item's growing field, to rebuild deltas. */
  const items = new Map<string, string>();
  try {
    const lines = readLines(fd, {
      maxLineBytes: options.maxLineBytes ?? MAX_LOG_LINE_BYTES,
      onOversize: ({ line, bytes, head }) =>
        report(`line ${line} is ${bytes} bytes, over the ${options.maxLineBytes ?? MAX_LOG_LINE_BYTES}-byte limit: skipped`, cursorInHead(head)),
    });
    for (const line of lines) {
      while (skipped.length > 0) yield skipped.shift() as SkippedRecord;
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // a torn line from a crash mid-write
      }
      if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") continue;
      const record = value as SessionLogRecord;
      if (record.type === "notification" && typeof record.params === "object" && record.params !== null) {
        const item = itemOf(record.params);
        if (item !== undefined) {
          const itemId = item["itemId"] as string;
          const field = growingField(item);
          if (record.delta !== undefined) {
            const base = items.get(itemId);
            const suffix = item[record.delta.field];
            if (base === undefined || base.length !== record.delta.from || typeof suffix !== "string") {
              report(`item/updated ${record.n} of item ${itemId} extends a state that could not be read: skipped`, record.n);
              items.delete(itemId);
              yield skipped.shift() as SkippedRecord;
              continue;
            }
            item[record.delta.field] = base + suffix; // same key, same place: the params serialize as sent
            delete record.delta;
          }
          if (record.method === "item/completed") items.delete(itemId);
          else if (typeof item[field] === "string") items.set(itemId, item[field] as string);
        }
      }
      yield record;
    }
    while (skipped.length > 0) yield skipped.shift() as SkippedRecord;
  } finally {
    closeSync(fd);
  }
}
