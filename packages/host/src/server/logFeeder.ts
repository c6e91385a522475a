/** The log feeder: sends each subscriber, from the session logs, what it is behind on or is being replayed, a batch at a time as its transport drains. */
import { transportTakes } from "../transport/messageTransport.js";
import type { SessionLogPosition } from "../log/sessionLogReader.js";
import type { SessionLogRecord, SkippedRecord } from "../log/sessionLogRecord.js";
import { feedBatch, feedTreeBatch, sendDueRequests, type FeedOutcome, type FeedStep, type LogFeed, type LogRead, type TreeReplay } from "./logFeed.js";
import type { Subscriber } from "./subscriber.js";

/** @unit bytes of session log one batch of a feed reads before it lets other work run (it goes on at once after). */
const FEED_BATCH_READ_BYTES = 4 * 1024 * 1024;

/** `read`, except that a log that throws ends there: `onError` is told, and the records stop. */
function readOrLeave(read: LogRead, onError: (error: Error) => void): LogRead {
  return function* (from, upTo) {
    try {
      yield* read(from, upTo);
    } catch (error) {
      onError(error as Error);
    }
  };
}

/** What a {@link LogFeeder} reads of its delivery. */
export interface LogFeederOptions {
  /** The session's log records from `from` (advanced in place) up to cursor `upTo`, streamed. */
  read(sessionId: string, from: SessionLogPosition, upTo: number): Iterable<SessionLogRecord | SkippedRecord>;
  /** Diagnostics sink. */
  log(line: string): void;
  /** Whether `subscriber` hears `sessionId` live (then a feed goes on up to what is published). */
  hears(subscriber: Subscriber, sessionId: string): boolean;
  /** The highest cursor number of `sessionId` published live (0 when none). */
  published(sessionId: string): number;
  /** A run of feeds ended: delivery checks whether every peer is fed. */
  onIdle(): void;
}

/** Feeds subscribers from the logs; see the module header. */
export class LogFeeder {
  readonly #options: LogFeederOptions;
  /** Subscribers whose feed is running now (a send never starts another run inside it). */
  readonly #pumping = new Set<Subscriber>();
  /** Subscribers with a batch scheduled for the next turn of the event loop. */
  readonly #scheduled = new Set<Subscriber>();

  constructor(options: LogFeederOptions) {
    this.#options = options;
  }

  /** Whether a feed of `subscriber` is running now. */
  isPumping(subscriber: Subscriber): boolean {
    return this.#pumping.has(subscriber);
  }

  /** Feeds `feed` of `subscriber` at once up to cursor `n` (a member of a tree replay: the tree, in host order). */
  feedUpTo(subscriber: Subscriber, feed: LogFeed, n: number): void {
    if (feed.group !== undefined) this.#feedGroup(subscriber, feed.group, undefined, { sessionId: feed.sessionId, n });
    else this.#feed(subscriber, feed, undefined, n);
  }

  /** `feed` is fed with `parentFeed` from now on, merged in host order: they become (or join) one tree replay. */
  joinGroup(parentFeed: LogFeed, feed: LogFeed): void {
    const group = (parentFeed.group ??= { sessions: [parentFeed.sessionId] });
    if (!group.sessions.includes(feed.sessionId)) group.sessions.push(feed.sessionId);
    feed.group = group;
  }

  /** The cursor after which a host request `subscriber`'s `feed` held back goes out: once the feed has sent that far. */
  requestAt(subscriber: Subscriber, feed: LogFeed): number {
    return this.#targetOf(feed, this.#options.hears(subscriber, feed.sessionId));
  }

  /**
   * How far a feed goes now: its replay's end, and (for a subscriber that hears the session,
   * once a live notification was held back for it) everything published.
   */
  #targetOf(feed: LogFeed, hears: boolean): number {
    return hears && feed.deferredFrom !== undefined ? Math.max(feed.upTo, this.#options.published(feed.sessionId)) : feed.upTo;
  }

  /**
   * Feeds `subscriber` what it is behind on, a batch per session, while its transport takes it
   * (at once and whole for a transport without flow control). Runs when the transport drained
   * below half its bound, and when a replay starts.
   */
  pump(subscriber: Subscriber): void {
    if (subscriber.feeds.size === 0 || this.#pumping.has(subscriber)) return;
    const flow = subscriber.flow;
    if (subscriber.closed || flow?.writable === false) {
      subscriber.feeds.clear();
      return this.#options.onIdle();
    }
    if (flow !== undefined && (flow.heldBytes?.() ?? 0) >= (flow.maxHeldBytes ?? 0) / 2) return;
    this.#pumping.add(subscriber);
    let outcome: FeedOutcome = "caughtUp";
    try {
      const groups = new Set<TreeReplay>();
      for (const feed of [...subscriber.feeds.values()]) {
        const budget = flow === undefined ? undefined : FEED_BATCH_READ_BYTES;
        if (feed.group !== undefined && groups.has(feed.group)) continue;
        if (feed.group !== undefined) groups.add(feed.group);
        outcome = feed.group === undefined ? this.#feed(subscriber, feed, budget) : this.#feedGroup(subscriber, feed.group, budget);
        if (outcome === "caughtUp") continue;
        // The next run starts with another session: one long feed does not starve the others.
        subscriber.feeds.delete(feed.sessionId);
        subscriber.feeds.set(feed.sessionId, feed);
        break;
      }
    } finally {
      this.#pumping.delete(subscriber);
    }
    if (outcome === "budget" && !this.#scheduled.has(subscriber)) {
      this.#scheduled.add(subscriber);
      setImmediate(() => {
        this.#scheduled.delete(subscriber);
        this.pump(subscriber);
      });
    }
    this.#options.onIdle();
  }

  /** How one batch of `feed` is fed to `subscriber` (up to `upTo`, or its target). */
  #stepOf(subscriber: Subscriber, feed: LogFeed, budgetBytes: number | undefined, upTo?: number): FeedStep {
    const { sessionId } = feed;
    return {
      read: this.reader(sessionId),
      target: upTo ?? this.#targetOf(feed, this.#options.hears(subscriber, sessionId)),
      cursor: () => subscriber.cursors.get(sessionId) ?? 0,
      fits: (message) => budgetBytes === undefined || transportTakes(subscriber.flow, message),
      send: (message, record) => subscriber.sendNotification(message, record.method, record.params, sessionId, record.n),
      budgetBytes,
    };
  }

  /** Runs one batch of `feed`; a feed that caught up ends, and its subscriber hears the session live again. */
  #feed(subscriber: Subscriber, feed: LogFeed, budgetBytes: number | undefined, upTo?: number): FeedOutcome {
    const { sessionId } = feed;
    const target = this.#targetOf(feed, this.#options.hears(subscriber, sessionId));
    let outcome: FeedOutcome;
    try {
      outcome = feedBatch(feed, this.#stepOf(subscriber, feed, budgetBytes, upTo), subscriber.sendNow);
    } catch (error) {
      this.#options.log(`feeding session ${sessionId} from its log stopped: ${(error as Error).message}`);
      outcome = "caughtUp";
    }
    if (outcome !== "caughtUp" || (upTo !== undefined && upTo < target)) return outcome;
    this.#caughtUp(subscriber, feed);
    return outcome;
  }

  /** `feed` has sent everything: it ends, and its subscriber hears the session live again. */
  #caughtUp(subscriber: Subscriber, feed: LogFeed): void {
    const { sessionId } = feed;
    subscriber.feeds.delete(sessionId);
    sendDueRequests(feed, Infinity, subscriber.sendNow);
    const hears = this.#options.hears(subscriber, sessionId);
    if (hears && subscriber.flow !== undefined) subscriber.kept.set(sessionId, feed.position);
    else if (!hears && subscriber.listens) subscriber.cursors.delete(sessionId); // a forgotten child's feed ended
  }

  /** Runs one batch of a tree replay; once every member caught up, they all end at once. */
  #feedGroup(subscriber: Subscriber, group: TreeReplay, budgetBytes: number | undefined, until?: { sessionId: string; n: number }): FeedOutcome {
    const feeds = group.sessions.map((id) => subscriber.feeds.get(id)).filter((f): f is LogFeed => f?.group === group);
    // A member whose log cannot be read leaves the group alone (reported); the others go on.
    const failed = new Map<LogFeed, Error>();
    // With `until`, the batch stops once that record is sent (what goes after it in host order stays unread).
    let reached = false;
    const members = feeds.map((feed) => {
      const step = this.#stepOf(subscriber, feed, budgetBytes);
      return {
        feed,
        step: {
          ...step,
          read: readOrLeave(step.read, (error) => failed.set(feed, error)),
          fits: (message: unknown) => !reached && step.fits(message),
          send: (message: unknown, record: Parameters<FeedStep["send"]>[1]) => {
            step.send(message, record);
            if (until !== undefined && feed.sessionId === until.sessionId && record.n >= until.n) reached = true;
          },
        },
      };
    });
    let outcome: FeedOutcome;
    try {
      outcome = feedTreeBatch(members, budgetBytes, subscriber.sendNow);
    } catch (error) {
      // Not a log read (those end their member): the whole group stops, as a lone feed would.
      this.#options.log(`replay of the tree of session ${group.sessions[0] ?? ""} stopped: ${(error as Error).message}`);
      outcome = "caughtUp";
    }
    for (const [feed, error] of failed) {
      this.#options.log(`feeding session ${feed.sessionId} from its log stopped: ${error.message}`);
      this.#caughtUp(subscriber, feed);
    }
    if (outcome !== "caughtUp") return outcome;
    for (const feed of feeds) if (!failed.has(feed)) this.#caughtUp(subscriber, feed);
    return outcome;
  }

  reader(sessionId: string): LogRead {
    return (from, upTo) => this.#options.read(sessionId, from, upTo);
  }
}
