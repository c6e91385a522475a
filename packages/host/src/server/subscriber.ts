/** A subscriber: one peer's (or one `handleText` reply's) way back to its client, and what it has been sent. */
import { isObject } from "@muse-code/protocol";
import { parseViewCursor } from "@muse-code/protocol/cursor.js";
import type { LogFeed } from "./logFeed.js";
import type { MessageTransport } from "../transport/messageTransport.js";
import type { SessionLogPosition } from "../log/sessionLogReader.js";

/**
 * A per-client subscriber: where one peer's answers go, and how far it has been sent each session
 * it hears (a table bounded by those sessions: see "Bounds" in docs/protocol.md).
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
  /** Whether it can hear sessions (a peer's); false for a `handleText` reply, which hears only its answers and replays. */
  readonly listens: boolean;
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

/** The cursor number of a notification's params, read with the strict parser (the host wrote it: `v:<sessionId>:<n>`). */
export function cursorOf(params: Record<string, unknown>, sessionId: string): number | undefined {
  const cursor = params["viewCursor"];
  return typeof cursor === "string" ? parseViewCursor(cursor, sessionId) : undefined;
}

/**
 * A new subscriber writing through `write`. `listens`: a peer's, which can hear sessions (a
 * `handleText` reply's cannot). `requestAt` says after which cursor a host request held back by a
 * feed goes out.
 */
export function createSubscriber(
  write: (message: unknown) => void,
  listens: boolean,
  transport: MessageTransport | undefined,
  requestAt: (subscriber: Subscriber, feed: LogFeed) => number,
): Subscriber {
  const cursors = new Map<string, number>();
  const feeds = new Map<string, LogFeed>();
  const sendNotification: Subscriber["sendNotification"] = (message, _method, _params, sessionId, n) => {
    if (n !== undefined && n > (cursors.get(sessionId) ?? 0)) cursors.set(sessionId, n);
    write(message);
  };
  const flow = transport?.heldBytes !== undefined && transport.maxHeldBytes !== undefined ? transport : undefined;
  const subscriber: Subscriber = {
    listens,
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
          feed.requests.push({ at: requestAt(subscriber, feed), message });
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
