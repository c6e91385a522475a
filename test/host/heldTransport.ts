/**
 * A transport double for the host's delivery tests: it holds every byte sent until the test
 * drains it, so a test controls when the peer is "behind".
 */
import { messageJson } from "../../packages/host/src/server/jsonRpc.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";

/** Holds every byte sent until the test drains it. */
export class HeldTransport implements MessageTransport {
  readonly maxHeldBytes = 600;
  readonly writable = true;
  readonly sent: Array<Record<string, unknown>> = [];
  held = 0;
  #onDrain: () => void = () => {};
  onMessage(): void {}
  onClose(): void {}
  close(): void {}
  onDrain(listener: () => void): void {
    this.#onDrain = listener;
  }
  heldBytes(): number {
    return this.held;
  }
  send(message: unknown): void {
    const raw = messageJson(message);
    this.sent.push(JSON.parse(raw) as Record<string, unknown>);
    this.held += Buffer.byteLength(raw);
  }
  drain(): void {
    this.held = 0;
    this.#onDrain();
  }
  /** The notifications sent, as `[sessionId, n, h]`. */
  notes(upTo = this.sent.length): Array<[string, number, number]> {
    return this.sent
      .slice(0, upTo)
      .filter((m) => m["method"] !== undefined && m["id"] === undefined)
      .map((m) => {
        const p = m["params"] as { sessionId: string; viewCursor: string; order: number };
        return [p.sessionId, Number(p.viewCursor.split(":").at(-1)), p.order];
      });
  }
}
