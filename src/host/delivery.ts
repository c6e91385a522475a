/** Delivery: what each of the host's peers is sent (answers, replays, live notifications), in cursor order. */
import { Commands, isObject, type NotificationMethod, type TurnCompletedParams } from "../protocol/index.js";
import { parseViewCursor } from "../protocol/cursor.js";
import type { CommandOutcome } from "./commandCache.js";
import { notificationMessage, withJson, type JsonRpcId, type JsonRpcNotification } from "./jsonRpc.js";
import type { MessageTransport } from "./messageTransport.js";
import type { SessionLogRecord, SkippedRecord } from "./sessionLogRecord.js";

/**
 * A per-client subscriber: where one peer's answers go, the turns whose terminal it has been
 * sent, and the sessions whose notifications it hears (those it created or resumed).
 */
export interface Subscriber {
  send: (message: unknown) => void;
  /**
   * Sends a live notification of `sessionId` whose cursor number is `n` (`params` are its wire
   * params): what `send` does, without reading the message again.
   */
  sendNotification: (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => void;
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

/** Sends live notification `message` (cursor number `n`) to `subscriber` unless it already has its cursor. */
function sendInOrder(
  subscriber: Subscriber,
  method: string,
  sessionId: string,
  params: Record<string, unknown>,
  n: number | undefined,
  message: unknown,
): void {
  if (n !== undefined && n <= (subscriber.cursors.get(sessionId) ?? 0)) return;
  subscriber.sendNotification(message, method, params, sessionId, n);
}

function newSubscriber(write: (message: unknown) => void, subscribes: boolean): Subscriber {
  const terminalsSent = new Set<string>();
  const cursors = new Map<string, number>();
  const sendNotification = (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => {
    if (method === "turn/completed") terminalsSent.add(String(params["turnId"]));
    if (n !== undefined && n > (cursors.get(sessionId) ?? 0)) cursors.set(sessionId, n);
    write(message);
  };
  return {
    terminalsSent,
    sessions: subscribes ? new Set() : undefined,
    closed: false,
    cursors,
    send(message) {
      if (isObject(message) && isObject(message["params"]) && typeof message["method"] === "string") {
        const params = message["params"];
        const sessionId = String(params["sessionId"]);
        sendNotification(message, message["method"], params, sessionId, cursorOf(params, sessionId));
        return;
      }
      write(message);
    },
    sendNotification,
  };
}

/** What delivery reads of the sessions: their logs (for replays), cursors and terminals. */
export interface DeliverySource {
  /** The session's log records, streamed (a replay reads them). */
  records(sessionId: string): Iterable<SessionLogRecord | SkippedRecord>;
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
 * each, in cursor order.
 */
export class Delivery {
  readonly #source: DeliverySource;
  readonly #peers = new Set<Peer>();
  /** Who hears each session: the subscribers that created or resumed it. An entry goes when its last subscriber does. */
  readonly #subscribers = new Map<string, Set<Subscriber>>();
  /** The subscriber of each `handleText` reply function. */
  readonly #replies = new WeakMap<(message: unknown) => void, Subscriber>();

  constructor(source: DeliverySource) {
    this.#source = source;
  }

  /** Attaches `transport` as a peer; returns its subscriber. */
  attach(transport: MessageTransport): Subscriber {
    const subscriber = newSubscriber((message) => transport.send(message), true);
    this.#peers.add({ transport, subscriber });
    return subscriber;
  }

  /** The subscriber of a `handleText` reply function: hears its answers and replays only. */
  replyOnly(reply: (message: unknown) => void): Subscriber {
    let subscriber = this.#replies.get(reply);
    if (subscriber === undefined) {
      subscriber = newSubscriber(reply, false);
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

  /** Stops sending to `transport`: it hears no session any more. */
  detach(transport: MessageTransport): void {
    for (const p of this.#peers) {
      if (p.transport !== transport) continue;
      this.#peers.delete(p);
      p.subscriber.closed = true;
      for (const sessionId of p.subscriber.sessions ?? []) {
        const set = this.#subscribers.get(sessionId);
        set?.delete(p.subscriber);
        if (set?.size === 0) this.#subscribers.delete(sessionId);
      }
      p.subscriber.sessions?.clear();
    }
  }

  /** How many peers are attached. */
  get peerCount(): number {
    return this.#peers.size;
  }

  /** The transports of every attached peer. */
  transports(): MessageTransport[] {
    return [...this.#peers].map((p) => p.transport);
  }

  /** Sends one notification to the subscribers that hear its session. */
  publish(method: NotificationMethod, params: Record<string, unknown>, json?: string): void {
    const sessionId = String(params["sessionId"]);
    const subscribers = this.#subscribers.get(sessionId);
    if (subscribers === undefined) return;
    const message = notificationMessage(method, params);
    withJson(message, json ?? JSON.stringify(message)); // serialized once, whatever the number of peers
    const n = cursorOf(params, sessionId);
    const wire = message.params as Record<string, unknown>;
    if (subscribers.size === 1) {
      for (const subscriber of subscribers) sendInOrder(subscriber, method, sessionId, wire, n, message);
      return;
    }
    // A copy: a send that overflows a peer's queue disconnects it, which edits the set.
    for (const subscriber of [...subscribers]) sendInOrder(subscriber, method, sessionId, wire, n, message);
  }

  /** From now on `subscriber` hears `sessionId`; answers whether it did not before. */
  #subscribe(subscriber: Subscriber, sessionId: string): boolean {
    if (subscriber.sessions === undefined || subscriber.closed || subscriber.sessions.has(sessionId)) return false;
    subscriber.sessions.add(sessionId);
    let set = this.#subscribers.get(sessionId);
    if (set === undefined) this.#subscribers.set(sessionId, (set = new Set()));
    set.add(subscriber);
    return true;
  }

  /** Sends an outcome to `subscriber`: the turn's terminal first if needed, the response, then any replay. */
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
    const newlySubscribed = sessionId !== undefined && this.#subscribe(subscriber, sessionId);
    if (outcome.replay === undefined) {
      subscriber.send({ jsonrpc: "2.0", id, result: outcome.result });
      return;
    }
    const { after } = outcome.replay;
    const replayOf = outcome.replay.sessionId;
    // A retried resume answered from the cache to a subscriber that did not hear the session yet:
    // its replay runs up to now, so nothing between the first answer and this one is missed.
    const upTo = newlySubscribed ? Math.max(outcome.replay.upTo, this.#source.lastCursor(replayOf) ?? 0) : outcome.replay.upTo;
    // A client caught up with what it had been sent gets only what is new to it: records sent live
    // while its resume was handled (their log sync finished) are not sent twice. A client that
    // asks for records it already saw gets them again: the replay starts the subscriber's cursor at
    // `after`. Either way a live notification the replay covered is not sent a second time.
    const from = sentBefore !== undefined && after >= sentBefore ? Math.max(after, subscriber.cursors.get(replayOf) ?? 0) : after;
    const replay: JsonRpcNotification[] = [];
    try {
      for (const record of this.#source.records(replayOf)) {
        if (record.type === "notification" && record.n > from && record.n <= upTo) replay.push(notificationMessage(record.method, record.params));
      }
    } catch (error) {
      this.#source.log(`replay of session ${replayOf} stopped: ${(error as Error).message}`);
    }
    // `replayed` is what this subscriber is sent now (the cached answer counted the log when the
    // resume was accepted: a retry, or a subscriber already sent some of it, gets another number).
    const answered = isObject(result) && result["replayed"] !== replay.length ? { ...result, replayed: replay.length } : outcome.result;
    subscriber.send({ jsonrpc: "2.0", id, result: answered });
    subscriber.cursors.set(replayOf, from);
    for (const message of replay) subscriber.send(message);
  }

  /**
   * Invariant 4 on every wire: an `already_terminal` rejection follows that turn's `turn/completed`.
   * A subscriber that never got it (a new peer, a restarted host) is sent the logged terminal,
   * with its original cursor, first.
   */
  #sendTerminalIfUnseen(subscriber: Subscriber, sessionId: string, turnId: string): void {
    if (subscriber.terminalsSent.has(turnId)) return;
    const params = this.#source.terminal(sessionId, turnId);
    if (params === undefined) return;
    subscriber.send(notificationMessage("turn/completed", params as unknown as Record<string, unknown>));
  }
}
