/** Delivery: what each of the host's peers is sent (answers, replays, live notifications), in cursor order, fed from the log when it is behind. */
import { Commands, isObject, type NotificationMethod, type TurnCompletedParams } from "@muse-code/protocol";
import type { CommandOutcome } from "./commandCache.js";
import { notificationMessage, withJson, type JsonRpcId } from "./jsonRpc.js";
import { replayStart, type LogFeed, type TreeReplay } from "./logFeed.js";
import { LogFeeder } from "./logFeeder.js";
import { transportTakes, type MessageTransport } from "../transport/messageTransport.js";
import { logStart, type SessionLogPosition } from "../log/sessionLogReader.js";
import type { SessionLogRecord, SkippedRecord } from "../log/sessionLogRecord.js";
import { DEFAULT_MAX_SUBAGENT_LINKS, SessionRoutes } from "./sessionRoutes.js";
import { createSubscriber, cursorOf, type Subscriber } from "./subscriber.js";

/**
 * Options of a {@link Delivery}.
 *
 * @example
 * ```ts
 * const delivery = new Delivery(source, { maxLinks: 1000 });
 * ```
 */
export interface DeliveryOptions {
  /** The host's routing table (who hears what, and the tree), shared with its approval gate; a table of its own when not given. */
  routes?: SessionRoutes<Subscriber>;
  /**
   * @unit links: parent→child session links remembered in a table of its own (no `routes`)
   * @defaultValue {@link DEFAULT_MAX_SUBAGENT_LINKS}
   */
  maxLinks?: number;
}

/** A transport attached with `MuseHost.connect`, and its subscriber. */
interface Peer {
  transport: MessageTransport;
  subscriber: Subscriber;
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
  /** Who hears each session, who answers its questions, and the subagent tree. */
  readonly #routes: SessionRoutes<Subscriber>;
  /** The highest cursor number published live, per session with subscribers: a feed sends no further. */
  readonly #published = new Map<string, number>();
  /** The subscriber of each `handleText` reply function. */
  readonly #replies = new WeakMap<(message: unknown) => void, Subscriber>();
  /** Feeds subscribers what they are behind on, from the logs. */
  readonly #feeder: LogFeeder;
  /** Waiters of {@link Delivery.fed}. */
  #fedWaiters: Array<() => void> = [];

  constructor(source: DeliverySource, options: DeliveryOptions = {}) {
    this.#source = source;
    this.#routes = options.routes ?? new SessionRoutes({ maxLinks: options.maxLinks ?? DEFAULT_MAX_SUBAGENT_LINKS });
    this.#routes.onUnheard((subscriber, sessionId) => this.#unheard(subscriber, sessionId));
    this.#feeder = new LogFeeder({
      read: (sessionId, from, upTo) => source.read(sessionId, from, upTo),
      log: (line) => source.log(line),
      hears: (subscriber, sessionId) => this.#routes.hears(subscriber, sessionId),
      published: (sessionId) => this.#published.get(sessionId) ?? 0,
      onIdle: () => this.#checkFed(),
    });
  }

  /** How many parent→child links are remembered (at most {@link DeliveryOptions.maxLinks}). */
  get linkCount(): number {
    return this.#routes.linkCount;
  }

  /** `subscriber` stopped hearing `sessionId` (its link was forgotten): what it kept of it goes, unless a feed still runs. */
  #unheard(subscriber: Subscriber, sessionId: string): void {
    if (!this.#routes.hearersOf(sessionId)) this.#published.delete(sessionId);
    if (subscriber.feeds.has(sessionId)) return;
    subscriber.cursors.delete(sessionId);
    subscriber.kept.delete(sessionId);
  }

  /** Attaches `transport` as a peer; returns its subscriber. */
  attach(transport: MessageTransport): Subscriber {
    const subscriber = createSubscriber(
      (message) => transport.send(message),
      true,
      transport,
      (subscriber, feed) => this.#feeder.requestAt(subscriber, feed),
    );
    this.#peers.add({ transport, subscriber });
    transport.onDrain?.(() => this.#feeder.pump(subscriber));
    return subscriber;
  }

  /** The subscriber of a `handleText` reply function: hears its answers and replays only. */
  replyOnly(reply: (message: unknown) => void): Subscriber {
    let subscriber = this.#replies.get(reply);
    if (subscriber === undefined) {
      subscriber = createSubscriber(reply, false, undefined, (subscriber, feed) => this.#feeder.requestAt(subscriber, feed));
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
      for (const sessionId of this.#routes.leave(p.subscriber)) this.#published.delete(sessionId);
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
    const subscribers = this.#routes.hearersOf(sessionId);
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
    if (parentFeed !== undefined) this.#feeder.joinGroup(parentFeed, behind);
    subscriber.feeds.set(sessionId, behind);
  }

  /** The feed of `subscriber` on the parent of `sessionId`, when it is behind on it. */
  #parentFeed(subscriber: Subscriber, sessionId: string): LogFeed | undefined {
    const parent = this.#routes.parentOf(sessionId);
    return parent === undefined ? undefined : subscriber.feeds.get(parent);
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
    for (const subscriber of this.#routes.link(parent, child)) {
      // A subscriber behind on `parent` (a slow reader's feed, a replay) is fed the new child with
      // it, in host order: the parent's `subagent` link, still queued, goes before anything of the child.
      const parentFeed = subscriber.feeds.get(parent);
      if (parentFeed === undefined || subscriber.feeds.has(child)) continue;
      subscriber.cursors.set(child, 0);
      const feed: LogFeed = { sessionId: child, position: logStart(), upTo: 0, deferredFrom: 1, requests: [] };
      this.#feeder.joinGroup(parentFeed, feed);
      subscriber.feeds.set(child, feed);
    }
  }

  /** The session `child` is linked below, if it is linked. */
  parentOf(child: string): string | undefined {
    return this.#routes.parentOf(child);
  }

  /** The sessions linked below `sessionId` in this host's run, children before grandchildren. */
  descendantsOf(sessionId: string): string[] {
    return this.#routes.descendantsOf(sessionId);
  }

  /** From now on `subscriber` hears `sessionId` (and the sessions linked below it); answers whether it did not before. */
  #subscribe(subscriber: Subscriber, sessionId: string): boolean {
    if (!subscriber.listens || subscriber.closed) return false;
    return this.#routes.hear(subscriber, sessionId);
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
    // The resume plan's scan of each log counted its replay and found where it starts: only what
    // was logged since is read here (a retry, or another start, scans again). The records are then
    // fed from the logs.
    const scans = outcome.replay.scans;
    delete outcome.replay.scans; // the first delivery's alone: the cache keeps no log position
    const starts = ranges.map(({ sessionId, from: after, upTo }) => {
      try {
        return replayStart(this.#feeder.reader(sessionId), after, upTo, scans?.get(sessionId));
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
    this.#feeder.pump(subscriber);
    this.#checkFed();
  }

  /**
   * Invariant 4 on every wire: an `already_terminal` rejection follows that turn's `turn/completed`.
   * A subscriber that never got it (a new peer, a restarted host) is sent the logged terminal,
   * with its original cursor, first; one behind on the session is first fed up to it, at once.
   */
  #sendTerminalIfUnseen(subscriber: Subscriber, sessionId: string, turnId: string): void {
    const params = this.#source.terminal(sessionId, turnId);
    if (params === undefined) return;
    const n = cursorOf(params as unknown as Record<string, unknown>, sessionId);
    // Sent already: the subscriber's cursor on the session is at or past the terminal's.
    const sent = () => n !== undefined && (subscriber.cursors.get(sessionId) ?? 0) >= n;
    if (sent()) return;
    const feed = subscriber.feeds.get(sessionId);
    if (feed !== undefined && n !== undefined && !this.#feeder.isPumping(subscriber)) {
      this.#feeder.feedUpTo(subscriber, feed, n);
      this.#checkFed();
      if (sent()) return;
    }
    subscriber.send(notificationMessage("turn/completed", params as unknown as Record<string, unknown>));
  }
}
