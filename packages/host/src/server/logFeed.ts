/**
 * The log feed: how one peer that is behind on one session (a slow reader, or a resume's replay)
 * is sent that session's notifications from its log, after its cursor, in cursor order, a batch
 * at a time, without holding more than its transport's bound.
 */
import { notificationMessage, withJson } from "./jsonRpc.js";
import { copyPosition, logStart, type SessionLogPosition } from "../log/sessionLogReader.js";
import type { SessionLogRecord, SkippedRecord } from "../log/sessionLogRecord.js";
import { firstInHostOrder } from "../log/hostOrder.js";
import type { ReplayScan } from "./resumePoint.js";

/**
 * Reads a session's log from a position (advancing it) up to a cursor: `readSessionLog` with
 * `from` and `upTo`, bound to the session's path.
 */
export type LogRead = (from: SessionLogPosition, upTo: number) => Iterable<SessionLogRecord | SkippedRecord>;

/**
 * One peer's catch-up on one session: it is sent the session's notifications from the log, from
 * `position`, until it has every one up to `upTo` and every one published live.
 */
export interface LogFeed {
  readonly sessionId: string;
  /** Where the log reader stands (advanced in place as records are read). */
  position: SessionLogPosition;
  /** A replay's last cursor number: the feed goes at least this far, published live or not (0 when not a replay). */
  upTo: number;
  /**
   * The first live notification held back because the peer was behind (`undefined`: none yet).
   * The feed goes on to everything published only then; the records between `upTo` and it were
   * sent live before (a replay does not send them again, as a replay never did).
   */
  deferredFrom?: number;
  /**
   * Host requests (`tool/approve`) for this session asked while the peer was behind, each with
   * the cursor number published when it was asked: it goes out once the peer has been sent that
   * far, so it follows the `item/updated` that shows its question pending.
   */
  requests: Array<{ at: number; message: unknown }>;
  /** The tree replay this feed is a member of: its sessions are fed together, merged in host order. */
  group?: TreeReplay;
}

/**
 * A resume's replay of a tree: the feeds of these sessions (the resumed one first) are
 * fed as one, each record sent in host order (`h`), until every one has caught up.
 */
export interface TreeReplay {
  readonly sessions: string[];
}

/** One member of a {@link feedTreeBatch}: a session's feed and how it is fed. */
export interface TreeFeedMember {
  feed: LogFeed;
  step: FeedStep;
}

/**
 * What one batch of {@link feedBatch} ended on: `caughtUp` (everything up to the target is sent:
 * the peer can go back to live), `full` (the transport holds its bound: wait for it to drain),
 * `budget` (it read its share of the log for now: go on soon).
 */
export type FeedOutcome = "caughtUp" | "full" | "budget";

/** How one batch is fed: what to read, how far, and where it goes. */
export interface FeedStep {
  read: LogRead;
  /** The last cursor number to feed now: the most published live, or the replay's `upTo`. */
  target: number;
  /** The highest cursor number the peer has been sent (records at or below it are not sent again). */
  cursor: () => number;
  /** Whether handing `message` now keeps the transport within its bound. */
  fits: (message: unknown) => boolean;
  /** Sends a notification (it updates the cursor and the terminals sent). */
  send: (message: unknown, record: Extract<SessionLogRecord, { type: "notification" }>) => void;
  /** @unit bytes of log read in one batch before it yields (`undefined`: no limit, the whole feed at once) */
  budgetBytes: number | undefined;
}

/**
 * Feeds one batch: reads the log from the feed's position and sends each notification after the
 * peer's cursor, up to `step.target`, while `step.fits` says it may; a record that does not fit
 * stays unread for the next batch. Holds one record at a time, never a list of them. Sends the
 * feed's waiting host requests as soon as the cursor they wait for is sent. Throws what reading
 * the log throws.
 */
export function feedBatch(feed: LogFeed, step: FeedStep, sendRequest: (message: unknown) => void): FeedOutcome {
  sendDueRequests(feed, step.cursor(), sendRequest);
  if (step.cursor() >= step.target) return "caughtUp";
  const start = feed.position.offset;
  for (const record of step.read(feed.position, step.target)) {
    if (step.budgetBytes !== undefined && feed.position.offset - start >= step.budgetBytes) return "budget";
    if (record.type !== "notification" || record.n <= step.cursor()) continue;
    if (record.n > feed.upTo && feed.deferredFrom !== undefined && record.n < feed.deferredFrom) continue; // sent live already
    const message = notificationMessage(record.method, record.params);
    withJson(message, JSON.stringify(message));
    if (!step.fits(message)) return "full";
    step.send(message, record);
    sendDueRequests(feed, step.cursor(), sendRequest);
  }
  // The log has nothing more up to the target (a record that could not be read is not waited for).
  return "caughtUp";
}

/** Whether `record` is one `feed` sends: a notification after the cursor, not already sent live. */
function feedSends(feed: LogFeed, step: FeedStep, record: SessionLogRecord | SkippedRecord): record is NotificationRecord {
  if (record.type !== "notification" || record.n <= step.cursor()) return false;
  return !(record.n > feed.upTo && feed.deferredFrom !== undefined && record.n < feed.deferredFrom); // sent live already
}

type NotificationRecord = Extract<SessionLogRecord, { type: "notification" }>;

/**
 * Feeds one batch of a tree replay: reads each member's log from its position, and
 * sends the notifications every member's {@link feedBatch} would send, merged: always the one first
 * in host order (`h`, see `firstInHostOrder`) among the members' next ones. Holds one record per
 * member. Stops as {@link feedBatch} does: `full` when the next one does not fit (it stays unread),
 * `budget` after `budgetBytes` of log read (all members together), `caughtUp` only once every
 * member has sent everything up to its target. Throws what reading a log throws.
 */
export function feedTreeBatch(members: readonly TreeFeedMember[], budgetBytes: number | undefined, sendRequest: (message: unknown) => void): FeedOutcome {
  const iterators: Array<Iterator<SessionLogRecord | SkippedRecord> | undefined> = [];
  const heads: Array<NotificationRecord | undefined> = [];
  const starts = members.map((m) => m.feed.position.offset);
  const readBytes = () => members.reduce((sum, m, i) => sum + m.feed.position.offset - (starts[i] ?? 0), 0);
  /** The member's next record to send, or `undefined` when it has none up to its target. */
  const next = (i: number): NotificationRecord | undefined => {
    const { feed, step } = members[i] as TreeFeedMember;
    const iterator = iterators[i];
    if (iterator === undefined) return undefined;
    for (let r = iterator.next(); r.done !== true; r = iterator.next()) if (feedSends(feed, step, r.value)) return r.value;
    iterators[i] = undefined;
    return undefined;
  };
  try {
    members.forEach(({ feed, step }, i) => {
      sendDueRequests(feed, step.cursor(), sendRequest);
      iterators[i] = step.cursor() >= step.target ? undefined : step.read(feed.position, step.target)[Symbol.iterator]();
      heads[i] = next(i);
    });
    for (;;) {
      if (budgetBytes !== undefined && readBytes() >= budgetBytes) return "budget";
      const k = firstInHostOrder(heads);
      const record = heads[k];
      if (record === undefined) return "caughtUp"; // every member is sent up to its target
      const { feed, step } = members[k] as TreeFeedMember;
      const message = notificationMessage(record.method, record.params);
      withJson(message, JSON.stringify(message));
      if (!step.fits(message)) return "full";
      step.send(message, record);
      sendDueRequests(feed, step.cursor(), sendRequest);
      heads[k] = next(k);
    }
  } finally {
    // A record not sent stays unread: each position stands before its member's next record.
    for (const iterator of iterators) iterator?.return?.();
  }
}

/** Sends (in order) the feed's host requests whose cursor the peer has been sent. */
export function sendDueRequests(feed: LogFeed, cursor: number, sendRequest: (message: unknown) => void): void {
  while (feed.requests.length > 0 && (feed.requests[0]?.at ?? 0) <= cursor) sendRequest(feed.requests.shift()?.message);
}

/**
 * Where a replay after cursor `after` starts, and how many notifications it has up to `upTo`:
 * one scan of the log, counting without holding any record. The position is just before the
 * first notification after `after` (the end of the log when there is none). Given the resume
 * plan's `planned` scan of the same replay, only what was logged after that scan is read.
 */
export function replayStart(read: LogRead, after: number, upTo: number, planned?: ReplayScan): { replayed: number; position: SessionLogPosition } {
  const known = planned !== undefined && planned.after === after && planned.upTo <= upTo ? planned : undefined;
  const scan = known === undefined ? logStart() : copyPosition(known.end);
  let start = known?.start === undefined ? undefined : copyPosition(known.start);
  let replayed = known?.replayed ?? 0;
  if (known !== undefined && known.upTo === upTo) return { replayed, position: start ?? scan };
  for (const record of read(scan, upTo)) {
    if (record.type !== "notification" || record.n <= after || record.n <= (known?.upTo ?? 0)) continue;
    // `scan` stands before this record until the loop asks for the next one.
    start ??= copyPosition(scan);
    replayed += 1;
  }
  return { replayed, position: start ?? scan };
}
