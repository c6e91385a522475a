/** A session's wire out: each notification gets the next cursor, is logged, and is published once its record is durable. */
import type { Item, NotificationMethod } from "@muse-code/protocol";
import { formatViewCursor } from "@muse-code/protocol/cursor.js";
import type { HostOrder } from "../log/hostOrder.js";
import type { NotificationRecord } from "../log/notificationEncoder.js";
import { traceMark, tracing } from "../server/traceMarks.js";
import type { AgentLog } from "./agentLog.js";
import type { SessionAgentOptions } from "./sessionAgentOptions.js";

/** What a {@link SessionWire} writes through. */
export interface SessionWireOptions {
  sessionId: string;
  records: AgentLog;
  publish: SessionAgentOptions["publish"];
  /** The host-wide sequence stamped on each notification record. */
  hostOrder: HostOrder | undefined;
  /** The cursor number of the last notification already logged (0 for a new session). */
  cursor: number;
}

/** Numbers, logs and publishes one session's notifications, in order. */
export class SessionWire {
  readonly #options: SessionWireOptions;
  #cursor: number;

  constructor(options: SessionWireOptions) {
    this.#options = options;
    this.#cursor = options.cursor;
  }

  /** The cursor number of the last notification logged (it may not be durable yet). */
  get cursor(): number {
    return this.#cursor;
  }

  /**
   * Logs one notification and publishes it once its record is durable (group commit); returns its
   * params, or `undefined` when it could not be logged (then nothing is ever sent). `hold` is handed
   * the publishing instead: the caller sends it later, in order (a steer's answer goes first).
   */
  emit(method: NotificationMethod, body: Record<string, unknown>, hold?: (publish: () => void) => void): Record<string, unknown> | undefined {
    const { sessionId, records, hostOrder } = this.#options;
    if (records.failure !== undefined) return undefined;
    const n = this.#cursor + 1;
    const emittedAtMs = Date.now();
    const params = { sessionId, viewCursor: formatViewCursor(sessionId, n), emittedAtMs, ...body };
    const traced = tracing && (method === "item/completed" || method === "turn/completed");
    if (traced) traceMark(`${method}.write`, sessionId);
    const publish = traced
      ? (json?: string) => {
          traceMark(`${method}.durable`, sessionId);
          this.#options.publish(method, params, json);
          traceMark(`${method}.sent`, sessionId);
        }
      : (json?: string) => this.#options.publish(method, params, json);
    const onDurable = hold === undefined ? publish : (json?: string) => hold(() => publish(json));
    const record: NotificationRecord =
      hostOrder === undefined
        ? { type: "notification", at: emittedAtMs, n, method, params }
        : { type: "notification", at: emittedAtMs, n, h: hostOrder.next(), method, params };
    if (!records.write(record, onDurable)) return undefined;
    this.#cursor = n;
    return params;
  }

  /** {@link SessionWire.emit} of an item notification, the item copied as it is now. */
  emitItem(method: "item/started" | "item/completed", item: Item): void {
    this.emit(method, { item: { ...item } });
  }
}
