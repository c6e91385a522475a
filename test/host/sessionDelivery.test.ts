/**
 * Who hears what, over stdio: one host, two stdio transports (NDJSON over in-process streams). A
 * connection receives the notifications of the sessions it created or resumed, and no others; two
 * connections on one session see the same stream, cursor for cursor.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { createStdioTransport } from "../../packages/host/src/transport/stdioTransport.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { fixture, type WireMessage } from "./hostProcess.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One stdio-like connection to `host`: NDJSON written to its input, read from its output. */
class StdioPeer {
  readonly wire: WireMessage[] = [];
  readonly transport: MessageTransport;
  readonly #input = new PassThrough();
  #id = 0;

  constructor(host: MuseHost) {
    const output = new PassThrough();
    const lines = new LineSplitter((line) => this.wire.push(JSON.parse(line) as WireMessage));
    output.on("data", (chunk: Buffer) => lines.push(chunk));
    this.transport = createStdioTransport(this.#input, output);
    host.connect(this.transport);
  }

  async request(method: string, params: Record<string, unknown>): Promise<WireMessage> {
    const id = ++this.#id;
    this.#input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return this.waitFor((m) => m.id === id, `response to ${method}`);
  }

  async waitFor(predicate: (m: WireMessage) => boolean, what: string, timeoutMs = 5_000): Promise<WireMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.wire.find(predicate);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** The notifications this peer heard (method, session, cursor), in wire order. */
  heard(sessionId?: string): Array<[string, string, string]> {
    return this.wire
      .filter((m) => m.method !== undefined && (sessionId === undefined || m.params?.["sessionId"] === sessionId))
      .map((m) => [m.method ?? "", String(m.params?.["sessionId"]), String(m.params?.["viewCursor"])]);
  }
}

function newHost(): MuseHost {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-delivery-"));
  const host = createHost({
    models: new Map([
      ["default", loadScriptedModel(fixture("hello.json"), "default")],
      ["slow", loadScriptedModel(fixture("slow-text.json"), "slow")],
    ]),
    defaultModel: "default",
    dataDir,
  });
  cleanups.push(async () => {
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return host;
}

const completed = (turnId: unknown) => (m: WireMessage) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;

async function runTurn(peer: StdioPeer, sessionId: string): Promise<string> {
  const started = await peer.request("turn/start", { sessionId, input });
  const turnId = started.result?.["turnId"] as string;
  await peer.waitFor(completed(turnId), `turn/completed of ${turnId}`);
  return turnId;
}

describe("per-connection delivery over stdio", () => {
  it("a connection hears only the sessions it created", async () => {
    const host = newHost();
    const a = new StdioPeer(host);
    const b = new StdioPeer(host);
    const sa = (await a.request("session/create", {})).result?.["sessionId"] as string;
    const sb = (await b.request("session/create", {})).result?.["sessionId"] as string;
    await Promise.all([runTurn(a, sa), runTurn(b, sb)]);
    expect(a.heard(sa).length).toBeGreaterThan(3);
    expect(b.heard(sb).length).toBeGreaterThan(3);
    expect(a.heard().every(([, session]) => session === sa)).toBe(true);
    expect(b.heard().every(([, session]) => session === sb)).toBe(true);
  });

  it("knowing a sessionId is not enough: commands on it are answered, its stream is not sent, until a resume", async () => {
    const host = newHost();
    const a = new StdioPeer(host);
    const b = new StdioPeer(host);
    const sa = (await a.request("session/create", {})).result?.["sessionId"] as string;
    // b starts a turn on a's session: b gets the answer, a (the creator) hears the turn, b does not.
    const turnId = (await b.request("turn/start", { sessionId: sa, input })).result?.["turnId"];
    await a.waitFor(completed(turnId), "a hears the turn b started");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(b.heard()).toEqual([]);
    // b resumes: the replay brings the whole turn, in order.
    const resumed = await b.request("session/resume", { sessionId: sa });
    expect(resumed.result?.["replayed"]).toBe(a.heard(sa).length);
    await b.waitFor(completed(turnId), "the replayed terminal");
    expect(b.heard(sa)).toEqual(a.heard(sa));
  });

  it("two connections on one session (two tabs) see the same turn and the same terminal, cursor for cursor", async () => {
    const host = newHost();
    const a = new StdioPeer(host);
    const b = new StdioPeer(host);
    const c = new StdioPeer(host);
    const s = (await a.request("session/create", { model: "slow" })).result?.["sessionId"] as string;
    const before = a.heard(s).length;
    await b.request("session/resume", { sessionId: s });
    const started = await a.request("turn/start", { sessionId: s, input });
    const turnId = started.result?.["turnId"];
    // Cancel from the other tab: both see the cancelled terminal.
    await b.waitFor((m) => m.method === "item/delta", "a streamed chunk in the second tab");
    const cancel = await b.request("turn/cancel", { sessionId: s, turnId });
    expect(cancel.result).toMatchObject({ turnId });
    const [ta, tb] = await Promise.all([a.waitFor(completed(turnId), "a's terminal"), b.waitFor(completed(turnId), "b's terminal")]);
    expect(ta.params).toMatchObject({ terminal: "cancelled" });
    expect(tb.params).toEqual(ta.params);
    expect(b.heard(s)).toEqual(a.heard(s).slice(before));
    expect(c.heard()).toEqual([]);
  });

  it("a disconnected connection hears nothing more; the session goes on for the others", async () => {
    const host = newHost();
    const a = new StdioPeer(host);
    const b = new StdioPeer(host);
    const s = (await a.request("session/create", {})).result?.["sessionId"] as string;
    await b.request("session/resume", { sessionId: s });
    host.disconnect(b.transport);
    expect(host.connectionCount).toBe(1);
    const turnId = await runTurn(a, s);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(b.heard()).toEqual([]);
    expect(a.wire.some(completed(turnId))).toBe(true);
  });

  it("a resume retried with the same commandId on a new connection subscribes it and replays up to now", async () => {
    const host = newHost();
    const a = new StdioPeer(host);
    const b = new StdioPeer(host);
    const s = (await a.request("session/create", {})).result?.["sessionId"] as string;
    const commandId = "0198f0aa-3333-7000-8000-000000000001";
    await a.request("session/resume", { sessionId: s, commandId });
    const turnId = await runTurn(a, s);
    // The same resume again, from b: the cached answer, a replay that covers the turn run since, then live.
    const again = await b.request("session/resume", { sessionId: s, commandId });
    expect(again.result).toMatchObject({ commandId, sessionId: s });
    await b.waitFor(completed(turnId), "the turn run after the first answer");
    expect(b.heard(s)).toEqual(a.heard(s));
    const next = await runTurn(a, s);
    await b.waitFor(completed(next), "the next turn, live");
  });
});
