/** Delivery: what each of the host's peers is sent (answers, replays, live notifications), in cursor order, fed from the log when it is behind. */
import { Commands, isObject, type NotificationMethod, type TurnCompletedParams } from "@muse-code/protocol";
import { parseViewCursor } from "@muse-code/protocol/cursor.js";
import type { CommandOutcome } from "./commandCache.js";
import { notificationMessage, withJson, type JsonRpcId } from "./jsonRpc.js";
import {
  feedBatch,
  feedTreeBatch,
  replayStart,
  sendDueRequests,
  type FeedOutcome,
  type FeedStep,
  type LogFeed,
  type LogRead,
  type TreeReplay,
} from "./logFeed.js";
import { transportTakes, type MessageTransport } from "../transport/messageTransport.js";
import { logStart, type SessionLogPosition } from "../log/sessionLogReader.js";
import type { SessionLogRecord, SkippedRecord } from "../log/sessionLogRecord.js";
import { DEFAULT_MAX_SUBAGENT_LINKS, SessionLinks } from "./sessionLinks.js";

/** @unit bytes of session log one batch of a feed reads before it lets other work run (it goes on at once after). */
const FEED_BATCH_READ_BYTES = 4 * 1024 * 1024;

/**
 * A per-client subscriber: where one peer's answers go, the turns whose terminal it has been
 * sent, and the sessions whose notifications it hears (those it created or resumed).
 *
 * @example
 * ```ts
 * const subscriber = delivery.attach(transport);
 * subscriber.send({ jsonrpc: "2.0", id: 1, result: {} }); // an answer: at once
 * ```
 */
export interface Subscriber {
  /** Sends a message: a notification in cursor order, a host request after what it is behind on, anything else at once. */
  send: (message: unknown) => void;
  /**
   * Sends a notification of `sessionId` whose cursor number is `n` (`params` are its wire
   * params) now: what `send` does, without reading the message again.
   */
  sendNotification: (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => void;
  /** Hands a message to the transport now, whatever it is behind on. */
  sendNow: (message: unknown) => void;
  terminalsSent: Set<string>;
  /** The sessions this subscriber hears; `undefined` for a `handleText` reply, which hears only its answers and replays. */
  sessions: Set<string> | undefined;
  /** Set by `disconnect`: a closed subscriber is never subscribed again. */
  closed: boolean;
  /**
   * The highest cursor number sent to this subscriber, per session (a resume's replay starts it
   * again at its `afterCursor`). A live notification at or below it is not sent: a replay and a
   * live notification whose send waited on its log sync can cover the same records, and each
   * reaches the peer once, in cursor order (invariant 5).
   */
  cursors: Map<string, number>;
  /** Its transport when that has flow control (`heldBytes`, `maxHeldBytes`): then it can fall behind. */
  readonly flow: MessageTransport | undefined;
  /** The sessions it is behind on (or being replayed): sent from the log, not live, until caught up. */
  readonly feeds: Map<string, LogFeed>;
  /** Where the log reader of each session stood when its last feed caught up: the next one goes on from there. */
  readonly kept: Map<string, SessionLogPosition>;
}

/**
 * Options of a {@link Delivery}.
 *
 * @example
 * ```ts
 * const delivery = new Delivery(source, { maxLinks: 1000 });
 * ```
 */
export interface DeliveryOptions {
  /**
   * @unit links: parent→child session links remembered, the oldest forgotten first
   * @defaultValue {@link DEFAULT_MAX_SUBAGENT_LINKS}
   */
  maxLinks?: number;
}

/** A transport attached with `MuseHost.connect`, and its subscriber. */
interface Peer {
  transport: MessageTransport;
  subscriber: Subscriber;
}

/** The cursor number of a notification's params, read with the strict parser (the host wrote it: `v:<sessionId>:<n>`). */
function cursorOf(params: Record<string, unknown>, sessionId: string): number | undefined {
  const cursor = params["viewCursor"];
  return typeof cursor === "string" ? parseViewCursor(cursor, sessionId) : undefined;
}

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

/**
 * What delivery reads of the sessions: their logs (for replays and feeds), cursors and terminals.
 *
 * @example
 * ```ts
 * const source: DeliverySource = {
 *   read: (sessionId, from, upTo) => readSessionLog(sessionLogPath(dataDir, sessionId), { from, upTo }),
 *   lastCursor: () => undefined,
 *   terminal: () => undefined,
 *   log: (line) => console.error(line),
 * };
 * ```
 */
export interface DeliverySource {
  /** The session's log records from `from` (advanced in place) up to cursor `upTo`, streamed. */
  read(sessionId: string, from: SessionLogPosition, upTo: number): Iterable<SessionLogRecord | SkippedRecord>;
  /** The session's last cursor number, or `undefined` when it cannot be loaded. */
  lastCursor(sessionId: string): number | undefined;
  /** The terminal of a turn of the session, or `undefined` when it is not terminal (or cannot be loaded). */
  terminal(sessionId: string, turnId: string): TurnCompletedParams | undefined;
  /** Diagnostics sink. */
  log(line: string): void;
}

/**
 * The host's peers and who hears what: each peer hears the sessions it created or resumed, an
 * answer goes to the subscriber that asked, and every peer receives a session's notifications once
 * each, in cursor order. A peer whose transport holds its bound falls behind on a session: its live
 * notifications stop (they are in the log), and as the transport drains below half its bound it is
 * fed the log after its cursor, a batch at a time, until it has everything published; then it is
 * live again. A resume's replay is fed the same way. Bounds come from each transport
 * (`maxHeldBytes`, in bytes; the low-water mark is half of it).
 *
 * @example
 * ```ts
 * const delivery = new Delivery(source);
 * const subscriber = delivery.attach(transport);
 * delivery.publish("turn/started", { sessionId, viewCursor: `v:${sessionId}:1`, emittedAtMs: Date.now(), turnId });
 * await delivery.fed(); // before closing the transports at shutdown
 * ```
 */
export class Delivery {
  readonly #source: DeliverySource;
  readonly #peers = new Set<Peer>();
  /** Who hears each session: the subscribers that created or resumed it. An entry goes when its last subscriber does. */
  readonly #subscribers = new Map<string, Set<Subscriber>>();
  /** The highest cursor number published live, per session with subscribers: a feed sends no further. */
  readonly #published = new Map<string, number>();
  /** The subscriber of each `handleText` reply function. */
  readonly #replies = new WeakMap<(message: unknown) => void, Subscriber>();
  /** Subscribers whose feed is running now (a send never starts another run inside it). */
  readonly #pumping = new Set<Subscriber>();
  /** Subscribers with a batch scheduled for the next turn of the event loop. */
  readonly #scheduled = new Set<Subscriber>();
  /** The subagent tree: whoever hears a session hears the sessions linked below it. */
  readonly #links: SessionLinks;
  /** Waiters of {@link Delivery.fed}. */
  #fedWaiters: Array<() => void> = [];

  constructor(source: DeliverySource, options: DeliveryOptions = {}) {
    this.#source = source;
    this.#links = new SessionLinks(options.maxLinks ?? DEFAULT_MAX_SUBAGENT_LINKS);
  }

  /** How many parent→child links are remembered (at most {@link DeliveryOptions.maxLinks}). */
  get linkCount(): number {
    return this.#links.size;
  }

  #newSubscriber(write: (message: unknown) => void, subscribes: boolean, transport?: MessageTransport): Subscriber {
    const terminalsSent = new Set<string>();
    const cursors = new Map<string, number>();
    const feeds = new Map<string, LogFeed>();
    const sendNotification = (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => {
      if (method === "turn/completed") terminalsSent.add(String(params["turnId"]));
      if (n !== undefined && n > (cursors.get(sessionId) ?? 0)) cursors.set(sessionId, n);
      write(message);
    };
    const flow = transport?.heldBytes !== undefined && transport.maxHeldBytes !== undefined ? transport : undefined;
    const subscriber: Subscriber = {
      terminalsSent,
      sessions: subscribes ? new Set() : undefined,
      closed: false,
      cursors,
      flow,
      feeds,
      kept: new Map(),
      send: (message) => {
        if (isObject(message) && isObject(message["params"]) && typeof message["method"] === "string") {
          const params = message["params"];
          const sessionId = String(params["sessionId"]);
          // A host request (tool/approve) follows what its session's feed has not sent yet.
          if (message["id"] !== undefined) {
            const feed = feeds.get(sessionId);
            if (feed === undefined) return write(message);
            feed.requests.push({ at: this.#targetOf(feed, subscriber.sessions?.has(sessionId) === true), message });
            return;
          }
          return sendNotification(message, message["method"], params, sessionId, cursorOf(params, sessionId));
        }
        write(message);
      },
      sendNotification,
      sendNow: write,
    };
    return subscriber;
  }

  /** Attaches `transport` as a peer; returns its subscriber. */
  attach(transport: MessageTransport): Subscriber {
    const subscriber = this.#newSubscriber((message) => transport.send(message), true, transport);
    this.#peers.add({ transport, subscriber });
    transport.onDrain?.(() => this.#pump(subscriber));
    return subscriber;
  }

  /** The subscriber of a `handleText` reply function: hears its answers and replays only. */
  replyOnly(reply: (message: unknown) => void): Subscriber {
    let subscriber = this.#replies.get(reply);
    if (subscriber === undefined) {
      subscriber = this.#newSubscriber(reply, false);
      this.#replies.set(reply, subscriber);
    }
    return subscriber;
  }

  /** The subscribers of `transport` (none once it is detached). */
  subscribersOf(transport: MessageTransport): Subscriber[] {
    return [...this.#peers].filter((p) => p.transport === transport).map((p) => p.subscriber);
  }

  /** Whether `subscriber` is a peer's (still attached), not a `handleText` reply's. */
  isPeer(subscriber: Subscriber): boolean {
    return [...this.#peers].some((p) => p.subscriber === subscriber);
  }

  /** Stops sending to `transport`: it hears no session any more, and what it was behind on is dropped. */
  detach(transport: MessageTransport): void {
    for (const p of this.#peers) {
      if (p.transport !== transport) continue;
      this.#peers.delete(p);
      p.subscriber.closed = true;
      p.subscriber.feeds.clear();
      p.subscriber.kept.clear();
      for (const sessionId of p.subscriber.sessions ?? []) {
        const set = this.#subscribers.get(sessionId);
        set?.delete(p.subscriber);
        if (set?.size === 0) {
          this.#subscribers.delete(sessionId);
          this.#published.delete(sessionId);
        }
      }
      p.subscriber.sessions?.clear();
    }
    this.#checkFed();
  }

  /** How many peers are attached. */
  get peerCount(): number {
    return this.#peers.size;
  }

  /** The transports of every attached peer. */
  transports(): MessageTransport[] {
    return [...this.#peers].map((p) => p.transport);
  }

  /**
   * Resolves once no attached peer is behind on any session (each has been sent everything
   * published, or is gone): what a shutdown waits for before it closes the transports.
   */
  fed(): Promise<void> {
    return new Promise((resolve) => {
      this.#fedWaiters.push(resolve);
      this.#checkFed();
    });
  }

  /** Sends one notification to the subscribers that hear its session (those behind on it get it from the log). */
  publish(method: NotificationMethod, params: Record<string, unknown>, json?: string): void {
    const sessionId = String(params["sessionId"]);
    const subscribers = this.#subscribers.get(sessionId);
    if (subscribers === undefined) return;
    const message = notificationMessage(method, params);
    withJson(message, json ?? JSON.stringify(message)); // serialized once, whatever the number of peers
    const n = cursorOf(params, sessionId);
    if (n !== undefined && n > (this.#published.get(sessionId) ?? 0)) this.#published.set(sessionId, n);
    const wire = message.params as Record<string, unknown>;
    if (subscribers.size === 1) {
      for (const subscriber of subscribers) this.#sendLive(subscriber, method, sessionId, wire, n, message);
      return;
    }
    // A copy: a send may disconnect a peer, which edits the set.
    for (const subscriber of [...subscribers]) this.#sendLive(subscriber, method, sessionId, wire, n, message);
  }

  /** Sends live notification `message` (cursor number `n`) to `subscriber`, unless it has it, or is (or now falls) behind on its session. */
  #sendLive(subscriber: Subscriber, method: string, sessionId: string, params: Record<string, unknown>, n: number | undefined, message: unknown): void {
    if (n === undefined) return subscriber.sendNotification(message, method, params, sessionId, n);
    if (n <= (subscriber.cursors.get(sessionId) ?? 0)) return;
    const feed = subscriber.feeds.get(sessionId);
    if (feed !== undefined) {
      feed.deferredFrom ??= n; // it is in the log: the feed sends it
      return;
    }
    // A child of a session it is behind on waits for its parent's feed: the parent's
    // `subagent` link, still queued, is sent before anything of the child.
    const parentFeed = this.#parentFeed(subscriber, sessionId);
    if (parentFeed === undefined && transportTakes(subscriber.flow, message)) return subscriber.sendNotification(message, method, params, sessionId, n);
    // Behind: from its cursor on, it is fed this session from the log as its transport drains.
    let position = subscriber.kept.get(sessionId);
    subscriber.kept.delete(sessionId);
    if (position === undefined || position.n > (subscriber.cursors.get(sessionId) ?? 0)) position = logStart();
    const behind: LogFeed = { sessionId, position, upTo: 0, deferredFrom: n, requests: [] };
    if (parentFeed !== undefined) this.#joinGroup(parentFeed, behind);
    subscriber.feeds.set(sessionId, behind);
  }

  /** The feed of `subscriber` on the parent of `sessionId`, when it is behind on it. */
  #parentFeed(subscriber: Subscriber, sessionId: string): LogFeed | undefined {
    const parent = this.#links.parentOf(sessionId);
    return parent === undefined ? undefined : subscriber.feeds.get(parent);
  }

  /** `feed` is fed with `parentFeed` from now on, merged in host order: they become (or join) one tree replay. */
  #joinGroup(parentFeed: LogFeed, feed: LogFeed): void {
    const group = (parentFeed.group ??= { sessions: [parentFeed.sessionId] });
    if (!group.sessions.includes(feed.sessionId)) group.sessions.push(feed.sessionId);
    feed.group = group;
  }

  /**
   * How far a feed goes now: its replay's end, and (for a subscriber that hears the session,
   * once a live notification was held back for it) everything published.
   */
  #targetOf(feed: LogFeed, hears: boolean): number {
    return hears && feed.deferredFrom !== undefined ? Math.max(feed.upTo, this.#published.get(feed.sessionId) ?? 0) : feed.upTo;
  }

  /**
   * Feeds `subscriber` what it is behind on, a batch per session, while its transport takes it
   * (at once and whole for a transport without flow control). Runs when the transport drained
   * below half its bound, and when a replay starts.
   */
  #pump(subscriber: Subscriber): void {
    if (subscriber.feeds.size === 0 || this.#pumping.has(subscriber)) return;
    const flow = subscriber.flow;
    if (subscriber.closed || flow?.writable === false) {
      subscriber.feeds.clear();
      return this.#checkFed();
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
        this.#pump(subscriber);
      });
    }
    this.#checkFed();
  }

  /** How one batch of `feed` is fed to `subscriber` (up to `upTo`, or its target). */
  #stepOf(subscriber: Subscriber, feed: LogFeed, budgetBytes: number | undefined, upTo?: number): FeedStep {
    const { sessionId } = feed;
    return {
      read: this.#reader(sessionId),
      target: upTo ?? this.#targetOf(feed, subscriber.sessions?.has(sessionId) === true),
      cursor: () => subscriber.cursors.get(sessionId) ?? 0,
      fits: (message) => budgetBytes === undefined || transportTakes(subscriber.flow, message),
      send: (message, record) => subscriber.sendNotification(message, record.method, record.params, sessionId, record.n),
      budgetBytes,
    };
  }

  /** Runs one batch of `feed`; a feed that caught up ends, and its subscriber hears the session live again. */
  #feed(subscriber: Subscriber, feed: LogFeed, budgetBytes: number | undefined, upTo?: number): FeedOutcome {
    const { sessionId } = feed;
    const target = this.#targetOf(feed, subscriber.sessions?.has(sessionId) === true);
    let outcome: FeedOutcome;
    try {
      outcome = feedBatch(feed, this.#stepOf(subscriber, feed, budgetBytes, upTo), subscriber.sendNow);
    } catch (error) {
      this.#source.log(`feeding session ${sessionId} from its log stopped: ${(error as Error).message}`);
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
    if (subscriber.sessions?.has(sessionId) === true && subscriber.flow !== undefined) subscriber.kept.set(sessionId, feed.position);
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
      this.#source.log(`replay of the tree of session ${group.sessions[0] ?? ""} stopped: ${(error as Error).message}`);
      outcome = "caughtUp";
    }
    for (const [feed, error] of failed) {
      this.#source.log(`feeding session ${feed.sessionId} from its log stopped: ${error.message}`);
      this.#caughtUp(subscriber, feed);
    }
    if (outcome !== "caughtUp") return outcome;
    for (const feed of feeds) if (!failed.has(feed)) this.#caughtUp(subscriber, feed);
    return outcome;
  }

  #reader(sessionId: string): LogRead {
    return (from, upTo) => this.#source.read(sessionId, from, upTo);
  }

  #checkFed(): void {
    if (this.#fedWaiters.length === 0) return;
    for (const p of this.#peers) if (p.subscriber.feeds.size > 0) return;
    const waiters = this.#fedWaiters;
    this.#fedWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Child session `child` was created below `parent`: every subscriber that hears
   * `parent` hears `child` from now on (before anything of it is published), and so does every
   * later subscriber of `parent`.
   */
  linkChild(parent: string, child: string): void {
    if (!this.#links.link(parent, child)) return;
    for (const subscriber of [...(this.#subscribers.get(parent) ?? [])]) {
      // A subscriber behind on `parent` (a slow reader's feed, a replay) is fed the new child with
      // it, in host order: the parent's `subagent` link, still queued, goes before anything of the child.
      const parentFeed = subscriber.feeds.get(parent);
      if (parentFeed !== undefined && !subscriber.feeds.has(child) && this.#subscribe(subscriber, child)) {
        subscriber.cursors.set(child, 0);
        const feed: LogFeed = { sessionId: child, position: logStart(), upTo: 0, deferredFrom: 1, requests: [] };
        this.#joinGroup(parentFeed, feed);
        subscriber.feeds.set(child, feed);
        continue;
      }
      this.#subscribe(subscriber, child);
    }
  }

  /** The session `child` is linked below, if it is linked. */
  parentOf(child: string): string | undefined {
    return this.#links.parentOf(child);
  }

  /** The sessions linked below `sessionId` in this host's run, children before grandchildren. */
  descendantsOf(sessionId: string): string[] {
    return this.#links.descendantsOf(sessionId);
  }

  /** From now on `subscriber` hears `sessionId` (and the sessions linked below it); answers whether it did not before. */
  #subscribe(subscriber: Subscriber, sessionId: string): boolean {
    if (subscriber.sessions === undefined || subscriber.closed || subscriber.sessions.has(sessionId)) return false;
    subscriber.sessions.add(sessionId);
    let set = this.#subscribers.get(sessionId);
    if (set === undefined) this.#subscribers.set(sessionId, (set = new Set()));
    set.add(subscriber);
    for (const child of this.descendantsOf(sessionId)) this.#subscribe(subscriber, child);
    return true;
  }

  /** Sends an outcome to `subscriber`: the turn's terminal first if needed, the response, then any replay (fed from the log). */
  deliver(subscriber: Subscriber, id: JsonRpcId, outcome: CommandOutcome, sentBefore?: number): void {
    if (outcome.kind === "error") {
      if (outcome.terminalOf !== undefined) this.#sendTerminalIfUnseen(subscriber, outcome.terminalOf.sessionId, outcome.terminalOf.turnId);
      subscriber.send({ jsonrpc: "2.0", id, error: outcome.error });
      return;
    }
    // A session/create or session/resume (answered now, or again from the cache on a retry)
    // subscribes the subscriber it answers: from here on it hears the session live.
    const result = outcome.result;
    const subscribes = (outcome.method === Commands.sessionCreate || outcome.method === Commands.sessionResume) && isObject(result);
    const sessionId = subscribes && typeof result["sessionId"] === "string" ? result["sessionId"] : undefined;
    // The last cursor of each session a replay may read, taken before the subscriber hears them:
    // taking it makes every record logged so far durable and publishes it, which after the
    // subscription would send it live first, then again in the replay.
    const last = new Map<string, number>();
    if (outcome.replay !== undefined) {
      const replayOf = outcome.replay.sessionId;
      last.set(replayOf, this.#source.lastCursor(replayOf) ?? 0); // its tree as it stands once that is published
      for (const id of this.descendantsOf(replayOf)) last.set(id, this.#source.lastCursor(id) ?? 0);
    }
    const newlySubscribed = sessionId !== undefined && this.#subscribe(subscriber, sessionId);
    if (outcome.replay === undefined) {
      subscriber.send({ jsonrpc: "2.0", id, result: outcome.result });
      return;
    }
    const { after } = outcome.replay;
    const replayOf = outcome.replay.sessionId;
    // A retried resume answered from the cache to a subscriber that did not hear the session yet:
    // its replay runs up to now, so nothing between the first answer and this one is missed.
    const upToNow = (sessionId: string, upTo: number) => (newlySubscribed ? Math.max(upTo, last.get(sessionId) ?? 0) : upTo);
    // A client caught up with what it had been sent gets only what is new to it: records sent live
    // while its resume was handled (their log sync finished) are not sent twice. A client that
    // asks for records it already saw gets them again: the replay starts the subscriber's cursor at
    // `after`. Either way a live notification the replay covered is not sent a second time.
    const from = sentBefore !== undefined && after >= sentBefore ? Math.max(after, subscriber.cursors.get(replayOf) ?? 0) : after;
    // The sessions replayed: the resumed one, then each session of its tree after its own cursor.
    const ranges = [
      { sessionId: replayOf, from, upTo: upToNow(replayOf, outcome.replay.upTo) },
      ...(outcome.replay.children ?? []).map((c) => ({ sessionId: c.sessionId, from: c.after, upTo: upToNow(c.sessionId, c.upTo) })),
    ];
    // A session linked below it since the resume was handled (before this answer, or before this
    // retry of it): the client cannot have heard of it, so it is replayed whole, up to now.
    const known = outcome.replay.tree;
    if (known !== undefined) {
      for (const child of this.descendantsOf(replayOf)) {
        if (!known.includes(child)) ranges.push({ sessionId: child, from: 0, upTo: last.get(child) ?? this.#source.lastCursor(child) ?? 0 });
      }
    }
    // One scan of each log counts its replay and finds where it starts; the records are then fed from the logs.
    const starts = ranges.map(({ sessionId, from: after, upTo }) => {
      try {
        return replayStart(this.#reader(sessionId), after, upTo);
      } catch (error) {
        this.#source.log(`replay of session ${sessionId} stopped: ${(error as Error).message}`);
        return undefined;
      }
    });
    const replayed = starts.reduce((sum, start) => sum + (start?.replayed ?? 0), 0);
    // `replayed` is what this subscriber is sent now (the cached answer counted the log when the
    // resume was accepted: a retry, or a subscriber already sent some of it, gets another number).
    const answered = isObject(result) && result["replayed"] !== replayed ? { ...result, replayed } : outcome.result;
    subscriber.send({ jsonrpc: "2.0", id, result: answered });
    const group: TreeReplay | undefined = ranges.length > 1 ? { sessions: ranges.map((r) => r.sessionId) } : undefined;
    ranges.forEach(({ sessionId, from: after, upTo }, i) => {
      const start = starts[i];
      subscriber.cursors.set(sessionId, after);
      subscriber.kept.delete(sessionId);
      // A feed it was behind on gives way to the replay, keeping what it held back: its requests,
      // and where live notifications stopped being sent (those after it are fed too).
      const behind = subscriber.feeds.get(sessionId);
      const requests = behind?.requests ?? [];
      if (start === undefined) {
        subscriber.feeds.delete(sessionId);
        for (const request of requests) subscriber.sendNow(request.message);
        return;
      }
      const feed: LogFeed = { sessionId, position: start.position, upTo, requests };
      if (behind?.deferredFrom !== undefined) feed.deferredFrom = behind.deferredFrom;
      if (group !== undefined) feed.group = group;
      subscriber.feeds.set(sessionId, feed);
    });
    this.#pump(subscriber);
    this.#checkFed();
  }

  /**
   * Invariant 4 on every wire: an `already_terminal` rejection follows that turn's `turn/completed`.
   * A subscriber that never got it (a new peer, a restarted host) is sent the logged terminal,
   * with its original cursor, first; one behind on the session is first fed up to it, at once.
   */
  #sendTerminalIfUnseen(subscriber: Subscriber, sessionId: string, turnId: string): void {
    if (subscriber.terminalsSent.has(turnId)) return;
    const params = this.#source.terminal(sessionId, turnId);
    if (params === undefined) return;
    const feed = subscriber.feeds.get(sessionId);
    const n = cursorOf(params as unknown as Record<string, unknown>, sessionId);
    if (feed !== undefined && n !== undefined && !this.#pumping.has(subscriber)) {
      // A member of a tree replay: the tree is fed up to it, in host order.
      if (feed.group !== undefined) this.#feedGroup(subscriber, feed.group, undefined, { sessionId, n });
      else this.#feed(subscriber, feed, undefined, n);
      this.#checkFed();
      if (subscriber.terminalsSent.has(turnId)) return;
    }
    subscriber.send(notificationMessage("turn/completed", params as unknown as Record<string, unknown>));
  }
}
