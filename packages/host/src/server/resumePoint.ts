/** The resume point of a `session/resume`: what its replay covers, and the items in progress at its cursor. */
import { foldItem, isObject, type Item } from "@muse-code/protocol";
import type { SessionLogRecord, SkippedRecord } from "../log/sessionLogRecord.js";
import { copyPosition, type SessionLogPosition } from "../log/sessionLogReader.js";

/**
 * What a `session/resume` after cursor number `after` answers with: how many notifications its
 * replay holds (`replayed`), the last of their cursor numbers (`upTo`, `after` when none), and
 * every item in progress at `after` (started at or before it, not completed by then), whole, at
 * its revision there: the base the replay's deltas and patches apply to.
 *
 * @example
 * ```ts
 * const { replayed, upTo, items } = resumePoint(readSessionLog(session.logPath), 12);
 * ```
 */
export interface ResumePoint {
  replayed: number;
  upTo: number;
  items: Item[];
  /** The cursor number of the first notification linking each child session (an item's `subagent`), by child sessionId. */
  links: Map<string, number>;
  /** With a `scan` position: where the replay starts (before its first record; none when it is empty) and where the scan ended. */
  scan?: ReplayScan;
}

/**
 * What one scan of a log found of a replay after `after`: how many notifications (`replayed`, the
 * last `upTo`), and where they start and the scan ended, so the replay is fed (and any records
 * logged since are counted) without reading the log from its start again.
 */
export interface ReplayScan {
  after: number;
  upTo: number;
  replayed: number;
  /** Before the first notification after `after`; `undefined` when there was none. */
  start: SessionLogPosition | undefined;
  /** Where the scan stopped: the end of the log as it was read. */
  end: SessionLogPosition;
}

/**
 * Scans a session's log records once (streamed: memory holds the items open at `after`, not the
 * records) and returns the {@link ResumePoint} after cursor number `after`. Items are folded by
 * `foldItem`, the rule a client folds by, so they equal what a client that watched live holds.
 *
 * @example
 * ```ts
 * const point = resumePoint(readSessionLog(sessionLogPath(dataDir, sessionId)), after);
 * answer({ sessionId, replayed: point.replayed, items: point.items });
 * ```
 */
export function resumePoint(records: Iterable<SessionLogRecord | SkippedRecord>, after: number): ResumePoint;
/** The same, with the position `records` is read from (advanced in place): the point's `scan` says where the replay starts. */
export function resumePoint(records: Iterable<SessionLogRecord | SkippedRecord>, after: number, scan: SessionLogPosition): ResumePoint & { scan: ReplayScan };
export function resumePoint(records: Iterable<SessionLogRecord | SkippedRecord>, after: number, scan?: SessionLogPosition): ResumePoint {
  let replayed = 0;
  let start: SessionLogPosition | undefined;
  let upTo = after;
  const open = new Map<string, Item>();
  const links = new Map<string, number>();
  for (const record of records) {
    if (record.type !== "notification") continue;
    const child = linkedChild(record.params);
    if (child !== undefined && !links.has(child)) links.set(child, record.n);
    if (record.n > after) {
      // `scan` stands before this record until the loop asks for the next one.
      if (replayed === 0 && scan !== undefined) start = copyPosition(scan);
      replayed += 1;
      upTo = Math.max(upTo, record.n);
      continue;
    }
    const { method, params } = record;
    if (method === "item/completed") {
      open.delete((params["item"] as Item).itemId);
    } else if (method === "item/started" || method === "item/delta" || method === "item/updated") {
      const itemId = method === "item/delta" ? String(params["itemId"]) : (params["item"] as Item).itemId;
      const folded = foldItem(open.get(itemId), method, params);
      if (typeof folded === "object") open.set(itemId, folded);
    }
  }
  const point: ResumePoint = { replayed, upTo, items: [...open.values()], links };
  if (scan !== undefined) point.scan = { after, upTo, replayed, start, end: scan };
  return point;
}

/** The child session an item notification links (its item's `subagent.sessionId`), if any. */
function linkedChild(params: Record<string, unknown>): string | undefined {
  const item = params["item"];
  if (!isObject(item) || !isObject(item["subagent"])) return undefined;
  const sessionId = item["subagent"]["sessionId"];
  return typeof sessionId === "string" ? sessionId : undefined;
}
