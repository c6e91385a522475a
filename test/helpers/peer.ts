/**
 * A scripted host for tests: the far end of a linked pair that records what the client sends
 * and writes whatever raw messages a test tells it to.
 */
import { connect, type ConnectOptions, type MspClient } from "../../src/index.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { createLinkedPair, type LinkedChannel } from "../../src/testing/index.js";

export interface Peer {
  client: MspClient;
  channel: LinkedChannel;
  /** Messages the client sent, parsed. */
  received: Array<Record<string, unknown>>;
  /** Wait for the n-th (1-based) client message. */
  nth(n: number): Promise<Record<string, unknown>>;
  send(message: unknown): void;
  sendRaw(text: string): void;
}

const encoder = new TextEncoder();

export function makePeer(options: ConnectOptions = {}): Peer {
  const [clientSide, hostSide] = createLinkedPair();
  const received: Array<Record<string, unknown>> = [];
  const waiting: Array<{ n: number; resolve: (m: Record<string, unknown>) => void }> = [];
  const lines = new LineSplitter((line) => received.push(JSON.parse(line) as Record<string, unknown>));
  hostSide.onData((chunk) => {
    lines.push(chunk);
    for (const w of [...waiting]) {
      const m = received[w.n - 1];
      if (m !== undefined) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const client = connect(clientSide, options);
  return {
    client,
    channel: hostSide,
    received,
    nth(n) {
      const m = received[n - 1];
      if (m !== undefined) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        waiting.push({ n, resolve });
        setTimeout(() => reject(new Error(`peer: no client message #${n} within 2 s`)), 2_000).unref();
      });
    },
    send(message) {
      hostSide.write(encoder.encode(`${JSON.stringify(message)}\n`));
    },
    sendRaw(text) {
      hostSide.write(encoder.encode(text));
    },
  };
}

export const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";

export function notification(method: string, params: Record<string, unknown>, cursor: number) {
  return { jsonrpc: "2.0", method, params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${cursor}`, ...params }, emittedAtMs: 1 };
}

export function terminal(turnId: string, cursor: number, terminalKind = "completed", reason = "completed") {
  return notification("turn/completed", { turnId, terminal: terminalKind, reason, durationMs: 5 }, cursor);
}

export function result(id: unknown, fields: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, result: { status: "accepted", ...fields } };
}

export function rejection(id: unknown, data: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, error: { code: -32001, message: `rejected: ${String(data["reason"])}`, data } };
}
