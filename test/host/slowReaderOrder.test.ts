/**
 * Issue 19 part 3, what a peer that is behind is sent and when, on the host core with a transport
 * double whose held bytes the test controls (it "reads" only when told to): live notifications stop
 * at the bound and come from the log as it drains; a `tool/approve` asked meanwhile follows the
 * `item/updated` that shows it pending; an `already_terminal` rejection follows the logged terminal.
 * Every exchange passes checkTranscript (invariants 1–6).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { messageJson } from "../../packages/host/src/server/jsonRpc.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { parseViewCursor } from "../../packages/protocol/src/cursor.js";
import { checkTranscript, formatTranscriptEntry } from "../../src/testing/index.js";
import { approvalModel } from "./approvalModel.js";
import { fixture, type WireMessage } from "./hostProcess.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A transport whose peer reads only when the test says: until then, every byte sent stays held. */
class HeldTransport implements MessageTransport {
  readonly maxHeldBytes = 1_500;
  readonly wire: WireMessage[] = [];
  readonly transcript: string[] = [];
  held = 0;
  heldBytesHighWater = 0;
  reading = true;
  #onMessage: (text: string) => void = () => {};
  #onDrain: () => void = () => {};
  #nextId = 1;
  readonly writable = true;

  onMessage(callback: (text: string) => void): void {
    this.#onMessage = callback;
  }
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
    this.transcript.push(formatTranscriptEntry({ dir: "server", raw }));
    this.wire.push(JSON.parse(raw) as WireMessage);
    if (!this.reading) this.held += Buffer.byteLength(raw);
    this.heldBytesHighWater = Math.max(this.heldBytesHighWater, this.held);
  }
  /** The peer reads everything held; the host hears it drained. */
  drain(): void {
    this.held = 0;
    this.#onDrain();
  }
  write(message: Record<string, unknown>): void {
    const raw = JSON.stringify(message);
    this.transcript.push(formatTranscriptEntry({ dir: "client", raw }));
    this.#onMessage(raw);
  }
  request(method: string, params: Record<string, unknown>): number {
    const id = this.#nextId++;
    this.write({ jsonrpc: "2.0", id, method, params });
    return id;
  }
  /** Drains until `predicate` holds for a message read (bounded). */
  async drainUntil(predicate: (m: WireMessage) => boolean, what: string): Promise<WireMessage> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = this.wire.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no ${what} after 20 s (${this.wire.length} messages)`);
      this.drain();
      await sleep(10);
    }
  }
}

function start(models: Record<string, string>): { host: MuseHost; transport: HeldTransport; dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-slow-order-"));
  const host = createHost({
    models: new Map(Object.entries(models).map(([name, path]) => [name, loadScriptedModel(path, name)])),
    defaultModel: Object.keys(models)[0]!,
    dataDir,
  });
  const transport = new HeldTransport();
  host.connect(transport);
  cleanups.push(async () => {
    // A shutdown feeds a peer what it is behind on before closing: this one reads from now on.
    transport.reading = true;
    transport.drain();
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { host, transport, dataDir };
}

/** Waits (bounded) until the session's log holds `text`. */
async function logged(dataDir: string, sessionId: string, text: RegExp): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!text.test(readFileSync(sessionLogPath(dataDir, sessionId), "utf8"))) {
    if (Date.now() > deadline) throw new Error(`the log never held ${String(text)}`);
    await sleep(10);
  }
}

/** The session's cursors in wire order: each once, from 1, none missing. */
function expectEveryCursor(wire: WireMessage[], sessionId: string): number[] {
  const ns = wire.filter((m) => m.method !== undefined && m.id === undefined).map((m) => parseViewCursor(String(m.params?.["viewCursor"]), sessionId));
  expect(ns).toEqual(Array.from({ length: ns.length }, (_, i) => i + 1));
  return ns as number[];
}

describe("a peer that is behind", () => {
  it("is asked tool/approve only after the item/updated that shows the question pending, fed from the log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-slow-approval-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { model } = approvalModel(dir);
    const { transport, dataDir } = start({ approval: model });
    transport.request("session/create", {});
    const sessionId = String(transport.wire[0]?.result?.["sessionId"]);
    transport.reading = false;
    transport.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] });
    // The question is asked (logged pending) while the peer holds its bound and reads nothing.
    await logged(dataDir, sessionId, /"type":"approval".*"state":"pending"/);
    await sleep(200);
    expect(transport.held).toBeGreaterThan(transport.maxHeldBytes / 2);
    expect(transport.wire.some((m) => m.method === "tool/approve")).toBe(false);
    const ask = await transport.drainUntil((m) => m.method === "tool/approve", "tool/approve");
    const askAt = transport.wire.indexOf(ask);
    const pendingAt = transport.wire.findIndex(
      (m) => m.method === "item/updated" && (m.params?.["item"] as { approval?: string } | undefined)?.approval === "pending",
    );
    expect(pendingAt).toBeGreaterThanOrEqual(0);
    expect(pendingAt).toBeLessThan(askAt);
    transport.write({ jsonrpc: "2.0", id: ask.id, result: { decision: "approve" } });
    await transport.drainUntil((m) => m.method === "turn/completed", "turn/completed");
    expectEveryCursor(transport.wire, sessionId);
    expect(transport.heldBytesHighWater).toBeLessThanOrEqual(transport.maxHeldBytes + Math.max(...transport.wire.map((m) => JSON.stringify(m).length)) + 64);
    const verdict = checkTranscript(transport.transcript);
    expect(verdict.problems).toEqual([]);
  }, 60_000);

  it("gets the logged turn/completed before an already_terminal rejection of that turn, and everything before it once", async () => {
    const { transport, dataDir } = start({ default: fixture("hello.json") });
    transport.request("session/create", {});
    const sessionId = String(transport.wire[0]?.result?.["sessionId"]);
    transport.reading = false;
    const turnId = "01890000-0000-7000-8000-000000000001";
    transport.write({ jsonrpc: "2.0", id: 2, method: "turn/start", params: { sessionId, input: [{ type: "text", text: "go" }], commandId: turnId } });
    await logged(dataDir, sessionId, /"type":"turnCompleted"/);
    await sleep(200);
    // Behind: the terminal is in the log, not on the wire.
    expect(transport.wire.some((m) => m.method === "turn/completed")).toBe(false);
    transport.write({ jsonrpc: "2.0", id: 3, method: "turn/cancel", params: { sessionId, turnId } });
    const rejection = transport.wire.findIndex((m) => m.id === 3);
    const terminal = transport.wire.findIndex((m) => m.method === "turn/completed");
    expect(transport.wire[rejection]?.error?.data?.["reason"]).toBe("already_terminal");
    expect(terminal).toBeGreaterThan(0);
    expect(terminal).toBeLessThan(rejection);
    transport.reading = true;
    transport.drain();
    expectEveryCursor(transport.wire, sessionId);
    expect(transport.wire.filter((m) => m.method === "turn/completed")).toHaveLength(1);
    expect(checkTranscript(transport.transcript).problems).toEqual([]);
  }, 60_000);
});
