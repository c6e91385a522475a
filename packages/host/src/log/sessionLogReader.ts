/**
 * The session log's reader: streams a log line by line, so memory never depends on a log's size,
 * and rebuilds every notification exactly as the wire carried it (deltas put back whole). A read
 * can start where an earlier one stopped ({@link SessionLogPosition}), so a reader fed a batch at a
 * time never reads the log from its start again.
 */
import { closeSync } from "node:fs";
import type { LogFilePool } from "./logFilePool.js";
import { MAX_LOG_LINE_BYTES, readLogLines } from "./logLines.js";
import { growingField } from "@muse-code/protocol/itemFold.js";
import { itemOf } from "./notificationEncoder.js";
import { openLogFile } from "./safeFiles.js";
import type { SessionLogRecord, SkippedRecord } from "./sessionLogRecord.js";

/**
 * Where a resumable read of a session log stands: the byte offset of the next unread line, and
 * what rebuilding the records after it needs (the growing text of the items open there: a
 * logged `item/updated` delta extends a text logged on an earlier line). A read given it as
 * `from` advances it in place.
 */
export interface SessionLogPosition {
  /** @unit bytes from the start of the file to the next unread line */
  offset: number;
  /** The growing field's text of each item open at `offset`, by `itemId` (its memory is those items' text). */
  readonly items: Map<string, string>;
  /** The highest notification cursor number read before `offset` (0 when none). */
  n: number;
}

/** A position at the start of a log: nothing read yet. */
export function logStart(): SessionLogPosition {
  return { offset: 0, items: new Map(), n: 0 };
}

/** A copy of `position` that reads on independently (the items' texts are shared, not copied). */
export function copyPosition(position: SessionLogPosition): SessionLogPosition {
  return { offset: position.offset, items: new Map(position.items), n: position.n };
}

/** Options of {@link readSessionLog}. */
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
  /**
   * Read from this position, and advance it in place: a record counts as read once the loop asks
   * for the one after it (or runs to the end), so a loop that breaks leaves the record it broke on
   * unread. A resumed read never reads a last line that has no `\n` yet.
   */
  from?: SessionLogPosition;
  /** Stop before the first notification whose cursor number is above this (it stays unread). */
  upTo?: number;
}

/** The `"n":` of a record from the first bytes of its line (records start with type, at, n). */
function cursorInHead(head: string): number | undefined {
  const match = /^\{"type":"notification","at":[0-9.e+-]+,"n":([0-9]+),/.exec(head);
  return match === null ? undefined : Number(match[1]);
}

/** A record ready to be yielded, and what reading it does to the position. */
interface Pending {
  record: SessionLogRecord | SkippedRecord;
  /** @unit bytes: the offset of the line after it */
  end: number;
  /** Its cursor number, when it is (or was) a notification. */
  n: number | undefined;
  /** The growing text its item has after it (`undefined`: forget the item), for an item notification. */
  item?: { itemId: string; text: string | undefined };
}

/**
 * Streams the well-formed records of a session log, one line at a time: memory holds one line
 * and the text of the items still open at that point, never the whole log. Unparseable lines (a
 * torn write) are skipped; over-long lines and deltas whose base is gone come out as
 * {@link SkippedRecord}s (and go to `onProblem`). Every `item/updated` comes out whole, as the wire
 * carried it; other notifications (an `item/delta`, a patch) come out as logged. A missing file
 * yields nothing; a file that is not a regular file throws `UnsafeFileError`. Break out of the
 * loop early and the file is closed. With `from`, it starts there and moves `from` along (see
 * {@link ReadSessionLogOptions.from}); with `upTo`, it stops before the first later cursor.
 */
export function* readSessionLog(path: string, options: ReadSessionLogOptions = {}): Generator<SessionLogRecord | SkippedRecord, void, undefined> {
  let fd: number;
  try {
    fd = options.pool === undefined ? openLogFile(path, "read").fd : options.pool.open(path, () => openLogFile(path, "read")).fd;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const position = options.from;
  const resumed = position !== undefined;
  const upTo = options.upTo ?? Infinity;
  const maxLineBytes = options.maxLineBytes ?? MAX_LOG_LINE_BYTES;
  /** The current value of each open item's growing field, to rebuild deltas. */
  const items = position?.items ?? new Map<string, string>();
  /** Over-long lines met while reading the next line: they come first. */
  const oversize: Array<Pending & { terminated: boolean }> = [];
  const skip = (why: string, end: number, n: number | undefined): Pending => {
    options.onProblem?.(`${path}: ${why}`);
    return { record: n === undefined ? { type: "skipped", why } : { type: "skipped", n, why }, end, n };
  };
  /** What reading `pending` does: the item's text noted, the position moved past it. */
  const read = (pending: Pending) => {
    if (pending.item !== undefined) {
      if (pending.item.text === undefined) items.delete(pending.item.itemId);
      else items.set(pending.item.itemId, pending.item.text);
    }
    if (position === undefined) return;
    position.offset = pending.end;
    if (pending.n !== undefined && pending.n > position.n) position.n = pending.n;
  };
  try {
    const lines = readLogLines(fd, {
      maxLineBytes,
      ...(resumed ? { from: position.offset } : {}),
      onOversize: ({ line, offset, bytes, head, terminated }) =>
        oversize.push({
          ...skip(`line ${line} is ${bytes} bytes, over the ${maxLineBytes}-byte limit: skipped`, offset + bytes + (terminated ? 1 : 0), cursorInHead(head)),
          terminated,
        }),
    });
    for (const line of lines) {
      while (oversize.length > 0) {
        const pending = oversize.shift() as Pending & { terminated: boolean };
        if ((resumed && !pending.terminated) || (pending.n ?? 0) > upTo) return;
        yield pending.record;
        read(pending);
      }
      if (resumed && !line.terminated) return; // not whole yet: read it once its `\n` is there
      const pending = decode(line.text, line.end);
      if (pending === undefined) {
        read({ record: { type: "skipped", why: "" }, end: line.end, n: undefined });
        continue;
      }
      if (pending.n !== undefined && pending.n > upTo) return;
      yield pending.record;
      read(pending);
    }
    while (oversize.length > 0) {
      const pending = oversize.shift() as Pending & { terminated: boolean };
      if ((resumed && !pending.terminated) || (pending.n ?? 0) > upTo) return;
      yield pending.record;
      read(pending);
    }
  } finally {
    closeSync(fd);
  }

  /** The record of one line, rebuilt, or `undefined` for a line that is no record (blank, torn). */
  function decode(text: string, end: number): Pending | undefined {
    if (text.trim() === "") return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined; // a torn line from a crash mid-write
    }
    if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") return undefined;
    const record = value as SessionLogRecord;
    if (record.type !== "notification") return { record, end, n: undefined };
    if (typeof record.params !== "object" || record.params === null) return { record, end, n: record.n };
    const item = itemOf(record.params);
    if (item === undefined) return { record, end, n: record.n };
    const itemId = item["itemId"] as string;
    const field = growingField(item);
    if (record.delta !== undefined) {
      const base = items.get(itemId);
      const suffix = item[record.delta.field];
      if (base === undefined || base.length !== record.delta.from || typeof suffix !== "string") {
        return {
          ...skip(`item/updated ${record.n} of item ${itemId} extends a state that could not be read: skipped`, end, record.n),
          item: { itemId, text: undefined },
        };
      }
      item[record.delta.field] = base + suffix; // same key, same place: the params serialize as sent
      delete record.delta;
    }
    if (record.method === "item/completed") return { record, end, n: record.n, item: { itemId, text: undefined } };
    const grown = item[field];
    return typeof grown === "string" ? { record, end, n: record.n, item: { itemId, text: grown } } : { record, end, n: record.n };
  }
}
