/** In-process tests of the host core and agent loop over an in-memory transport. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHost, sessionAgentOf, type MuseHost } from "../../packages/host/src/server/museHost.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { checkTranscript, formatTranscriptEntry } from "../../src/testing/index.js";
import { grownTo } from "../helpers/foldedWire.js";
import { fixture, type WireMessage } from "./hostProcess.js";

interface Harness {
  host: MuseHost;
  wire: WireMessage[];
  /** Both directions as transcript lines, for checkTranscript. */
  transcript: string[];
  request(method: string, params: Record<string, unknown>): WireMessage;
  /** Sends a request and waits for its answer (a `turn/cancel` is answered once its record is durable). */
  ask(method: string, params: Record<string, unknown>): Promise<WireMessage>;
  waitFor(predicate: (m: WireMessage) => boolean, timeoutMs?: number): Promise<WireMessage>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function harness(models: Record<string, string>, options: { killGraceMs?: number; commandCacheCapacity?: number; maxLiveSessions?: number } = {}): Harness {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-host-unit-"));
  const host = createHost({
    models: new Map(Object.entries(models).map(([name, file]) => [name, loadScriptedModel(fixture(file), name)])),
    defaultModel: Object.keys(models)[0]!,
    dataDir,
    ...options,
  });
  const wire: WireMessage[] = [];
  const transcript: string[] = [];
  let onMessage: (text: string) => void = () => {};
  const transport: MessageTransport = {
    onMessage: (cb) => (onMessage = cb),
    onClose: () => {},
    send: (m) => {
      const raw = JSON.stringify(m);
      transcript.push(formatTranscriptEntry({ dir: "server", raw }));
      wire.push(JSON.parse(raw) as WireMessage);
    },
    close: () => {},
  };
  host.connect(transport);
  cleanups.push(async () => {
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });
  let id = 0;
  return {
    host,
    wire,
    transcript,
    request(method, params) {
      const myId = ++id;
      const raw = JSON.stringify({ jsonrpc: "2.0", id: myId, method, params });
      transcript.push(formatTranscriptEntry({ dir: "client", raw }));
      onMessage(raw);
      const response = wire.find((m) => m.id === myId);
      if (response === undefined) throw new Error(`no synchronous response to ${method}`);
      return response;
    },
    async ask(method, params) {
      const myId = ++id;
      const raw = JSON.stringify({ jsonrpc: "2.0", id: myId, method, params });
      transcript.push(formatTranscriptEntry({ dir: "client", raw }));
      onMessage(raw);
      return this.waitFor((m) => m.id === myId);
    },
    async waitFor(predicate, timeoutMs = 4000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = wire.find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error("timed out waiting for a message");
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}

const completedOf = (turnId: string) => (m: WireMessage) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;
const itemsOf = (wire: WireMessage[], method: string, turnId: string) =>
  wire
    .filter((m) => m.method === method && (m.params?.["item"] as { turnId: string }).turnId === turnId)
    .map((m) => m.params?.["item"] as Record<string, unknown>);

describe("MuseHost agent loop", () => {
  it("salvages an interrupted stream as a cancelled, interrupted message and drops its tool calls", async () => {
    const h = harness({ slow: "slow-text.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(grownTo(h.wire, /^.{8}/s));
    await h.ask("turn/cancel", { sessionId, turnId });
    const done = await h.waitFor(completedOf(turnId));
    expect(done.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during model stream", cause: { kind: "user" } });
    const completed = itemsOf(h.wire, "item/completed", turnId);
    expect(completed).toHaveLength(1);
    const message = completed[0]!;
    expect(message).toMatchObject({ kind: "message", status: "cancelled", interrupted: true });
    const full = "This answer streams slowly, one small chunk at a time, so it can be interrupted.";
    const text = String(message["text"]);
    expect(text.length).toBeGreaterThanOrEqual(8);
    expect(text.length).toBeLessThan(full.length);
    expect(full.startsWith(text)).toBe(true);
    expect(itemsOf(h.wire, "item/started", turnId).map((i) => i["kind"])).toEqual(["message"]); // no toolCall
    expect(checkTranscript(h.transcript).problems).toEqual([]);
  });

  it("gives undispatched tool calls a synthetic cancelled result and drains the in-flight one", async () => {
    const h = harness({ stubborn: "shell-stubborn.json" }, { killGraceMs: 300 });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(grownTo(h.wire, /stubborn/));
    const t0 = Date.now();
    await h.ask("turn/cancel", { sessionId, turnId });
    const done = await h.waitFor(completedOf(turnId));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280); // drained through the SIGKILL grace
    expect(done.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution" });
    const [ran, skipped] = itemsOf(h.wire, "item/completed", turnId);
    expect(ran).toMatchObject({ kind: "toolCall", status: "cancelled", failureReason: "turn cancelled" });
    expect(String(ran?.["visibleOutput"])).toMatch(/^stubborn \d+\n$/);
    expect(skipped).toMatchObject({
      kind: "toolCall",
      status: "cancelled",
      args: JSON.stringify({ command: "echo never runs" }),
      failureReason: "tool call aborted before dispatch",
      error: { name: "AbortError", code: "TOOL_ABORTED_BEFORE_DISPATCH" },
    });
    expect(checkTranscript(h.transcript).problems).toEqual([]);
  });

  it("a failing tool (non-zero exit) fails its item and the turn continues to completion", async () => {
    const h = harness({ two: "two-tools.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    const done = await h.waitFor(completedOf(turnId));
    expect(done.params).toMatchObject({ terminal: "completed", reason: "completed" });
    const completed = itemsOf(h.wire, "item/completed", turnId);
    expect(completed.map((i) => [i["kind"], i["status"]])).toEqual([
      ["message", "completed"],
      ["toolCall", "completed"],
      ["toolCall", "failed"],
      ["reasoning", "completed"],
      ["message", "completed"],
    ]);
    expect(completed[1]).toMatchObject({ visibleOutput: "one\n" });
    expect(completed[2]).toMatchObject({ visibleOutput: "two\n", failureReason: "exit code 3" });
    for (const item of completed) expect(item["revision"]).toBeGreaterThanOrEqual(2);
    expect(checkTranscript(h.transcript).problems).toEqual([]);
  });

  it("setModel takes effect from the next turn; unknown models are rejected", async () => {
    const h = harness({ default: "hello.json", two: "two-tools.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    expect(h.request("session/setModel", { sessionId, model: "nope" }).error).toMatchObject({ code: -32001, data: { reason: "unknown_model" } });
    const t1 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    expect(h.request("session/setModel", { sessionId, model: "two" }).result).toMatchObject({ model: "two", previousModel: "default" });
    await h.waitFor(completedOf(t1));
    expect(itemsOf(h.wire, "item/completed", t1).map((i) => i["text"])).toContain("Hello there, friend!");
    const t2 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(t2));
    expect(itemsOf(h.wire, "item/completed", t2).map((i) => i["text"])).toContain("All done.");
  });

  it("repeats the identical rejection for a repeated commandId, and rejects commands while shutting down", async () => {
    const h = harness({ default: "hello.json" });
    const first = await h.ask("turn/cancel", { sessionId: "missing", turnId: "t", commandId: "c-1" });
    const second = await h.ask("turn/cancel", { sessionId: "missing", turnId: "t", commandId: "c-1" });
    expect(first.error).toEqual({
      code: -32001,
      message: "unknown session missing",
      data: { commandId: "c-1", reason: "unknown_session", sessionId: "missing" },
    });
    expect(second.error).toEqual(first.error);
    const generated = h.request("host/info", {});
    expect(generated.result?.["commandId"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    await h.host.shutdown();
    expect(h.request("session/create", {}).error).toMatchObject({ code: -32001, data: { reason: "shutting_down" } });
  });

  it("cancelling a queued turn closes only that turn; session/resume replays after a cursor, in order", async () => {
    const h = harness({ slow: "slow-text.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const t1 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    const t2 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.ask("turn/cancel", { sessionId, turnId: t2 });
    expect(h.wire.find(completedOf(t2))?.params).toMatchObject({ terminal: "cancelled", reason: "cancelled before start", cause: { kind: "user" } });
    await h.waitFor(completedOf(t1), 8000);
    expect(h.wire.find(completedOf(t1))?.params).toMatchObject({ terminal: "completed" });
    const live = h.wire.filter((m) => m.method !== undefined);
    const cursorAt = String(live[2]?.params?.["viewCursor"]);
    const before = h.wire.length;
    const liveTranscript = [...h.transcript]; // the resume's replay repeats cursors on purpose
    const resumed = h.request("session/resume", { sessionId, afterCursor: cursorAt });
    const replay = h.wire.slice(before + 1);
    expect(resumed.result?.["replayed"]).toBe(live.length - 3);
    expect(replay).toEqual(live.slice(3));
    expect(h.request("session/resume", { sessionId, afterCursor: "v:other:1" }).error?.code).toBe(-32602);
    expect(checkTranscript(liveTranscript).problems).toEqual([]);
  }, 10_000);
});

describe("MuseHost retries, caching and parameter checks", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a turn/start retried after its cache entry was evicted starts nothing; commands without a commandId are not cached", async () => {
    const h = harness({ default: "hello.json" }, { commandCacheCapacity: 2 });
    const sessionId = h.request("session/create", { commandId: "create-1" }).result?.["sessionId"] as string;
    const params = { sessionId, commandId: "0198f0aa-0000-7000-8000-0000000000bb", input: [] };
    const ack = h.request("turn/start", params);
    await h.waitFor(completedOf(params.commandId));
    for (let i = 0; i < 5; i++) h.request("host/info", {}); // no commandId: nothing to retry, nothing cached
    expect(h.request("session/create", { commandId: "create-1" }).result?.["sessionId"]).toBe(sessionId);
    for (let i = 0; i < 3; i++) h.request("host/info", { commandId: `info-${i}` }); // evicts the turn/start
    const retried = h.request("turn/start", params);
    expect(retried.result).toEqual(ack.result);
    await sleep(100);
    expect(h.wire.filter((m) => m.method === "turn/started")).toHaveLength(1);
    expect(h.wire.filter(completedOf(params.commandId))).toHaveLength(1);
  });

  it("does not cache an internal error: a retry runs the command again", () => {
    const h = harness({ default: "hello.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const agent = sessionAgentOf(h.host, sessionId)!;
    const original = agent.startTurn.bind(agent);
    let calls = 0;
    agent.startTurn = (turnId, input) => {
      if (calls++ === 0) throw new Error("transient");
      return original(turnId, input);
    };
    const params = { sessionId, commandId: "0198f0aa-0000-7000-8000-0000000000cc", input: [] };
    expect(h.request("turn/start", params).error?.code).toBe(-32603);
    expect(h.request("turn/start", params).result).toMatchObject({ turnId: params.commandId, disposition: "started" });
  });

  it("a retried session/resume re-sends the same range it answered", async () => {
    const h = harness({ default: "hello.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const t1 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(t1));
    const live = h.wire.filter((m) => m.method !== undefined);
    const afterCursor = String(live[1]?.params?.["viewCursor"]);
    const params = { sessionId, afterCursor, commandId: "resume-1" };
    let before = h.wire.length;
    const first = h.request("session/resume", params);
    const firstReplay = h.wire.slice(before + 1);
    expect(first.result?.["replayed"]).toBe(live.length - 2);
    expect(firstReplay).toEqual(live.slice(2));
    // A later turn adds notifications; the retry still answers and re-sends the original range.
    const t2 = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(t2));
    before = h.wire.length;
    const retry = h.request("session/resume", params);
    expect(retry.result).toEqual(first.result);
    expect(h.wire.slice(before + 1)).toEqual(firstReplay);
  });

  it("rejects with -32602: a commandId reused for another method, params null, malformed cursors", () => {
    const h = harness({ default: "hello.json" });
    const sessionId = h.request("session/create", { commandId: "shared" }).result?.["sessionId"] as string;
    expect(h.request("host/info", { commandId: "shared" }).error).toMatchObject({ code: -32602, message: expect.stringContaining("session/create") });
    expect(h.request("session/create", { commandId: "shared" }).result?.["sessionId"]).toBe(sessionId);
    const id = 9_999;
    let answer: WireMessage | undefined;
    h.host.handleText(JSON.stringify({ jsonrpc: "2.0", id, method: "host/info", params: null }), (m) => (answer = m as WireMessage));
    expect(answer?.error?.code).toBe(-32602);
    for (const bad of [`v:${sessionId}:`, `v:${sessionId}:0x10`, `v:${sessionId}:01`, `v:${sessionId}:1e3`, `v:${sessionId}: 1`, `v:${sessionId}:-1`]) {
      expect(h.request("session/resume", { sessionId, afterCursor: bad }).error?.code, bad).toBe(-32602);
    }
    expect(h.request("session/resume", { sessionId, afterCursor: `v:${sessionId}:0` }).result).toMatchObject({ replayed: 0 });
    // The strict parser's word for it: the message names the cursor and the session.
    expect(h.request("session/resume", { sessionId, afterCursor: `v:${sessionId}:01` }).error?.message).toBe(
      `afterCursor v:${sessionId}:01 is not a cursor of session ${sessionId}`,
    );
  });

  it("logs cancelRequested only for the cause that won", async () => {
    const h = harness({ slow: "slow-text.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor((m) => m.method === "item/delta");
    const first = h.ask("turn/cancel", { sessionId, turnId });
    const second = h.ask("turn/cancel", { sessionId, turnId }); // sent before the first is answered
    expect((await first).result).toMatchObject({ turnId });
    expect((await second).result).toMatchObject({ turnId }); // still running: accepted, changes nothing
    await h.waitFor(completedOf(turnId));
    const log = readFileSync(sessionAgentOf(h.host, sessionId)!.logPath, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(log.filter((r) => r.type === "cancelRequested")).toHaveLength(1);
  });

  it("an interrupted stream does not salvage a whitespace-only item", async () => {
    const h = harness({ ws: "slow-whitespace.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor((m) => m.method === "turn/started");
    await sleep(150); // two or three chunks of spaces have streamed
    await h.ask("turn/cancel", { sessionId, turnId });
    const done = await h.waitFor(completedOf(turnId));
    expect(done.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during model stream" });
    expect(itemsOf(h.wire, "item/started", turnId)).toEqual([]);
    expect(itemsOf(h.wire, "item/completed", turnId)).toEqual([]);
  });

  it("a whitespace-led stream that completes announces its item once it has content", async () => {
    const h = harness({ ws: "slow-whitespace.json" });
    const sessionId = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(turnId), 6000);
    const [started] = itemsOf(h.wire, "item/started", turnId);
    expect(started).toMatchObject({ kind: "message", revision: 1, text: "" });
    const deltas = h.wire.filter((m) => m.method === "item/delta" && m.params?.["turnId"] === turnId).map((m) => m.params ?? {});
    expect(deltas.length).toBeGreaterThan(0);
    expect(String(deltas[0]?.["append"]).trim()).not.toBe(""); // the held-back whitespace goes with the first content
    expect(deltas.map((d) => d["revision"])).toEqual(deltas.map((_, i) => i + 2));
    expect(itemsOf(h.wire, "item/completed", turnId)).toEqual([
      expect.objectContaining({ status: "completed", text: "            Hello after a long pause." }),
    ]);
    expect(checkTranscript(h.transcript).problems).toEqual([]);
  }, 10_000);
});

describe("MuseHost keeps at most maxLiveSessions idle sessions loaded", () => {
  const cursorN = (m: WireMessage) => Number(String(m.params?.["viewCursor"]).split(":").at(-1));
  const notificationsOf = (h: Harness, sessionId: string) => h.wire.filter((m) => m.method !== undefined && m.params?.["sessionId"] === sessionId);

  it("unloads the least recently named idle session and loads it again from its log when named: same terminals, cursors go on", async () => {
    const h = harness({ default: "hello.json" }, { maxLiveSessions: 2 });
    const a = h.request("session/create", {}).result?.["sessionId"] as string;
    const t1 = h.request("turn/start", { sessionId: a, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(t1));
    const b = h.request("session/create", {}).result?.["sessionId"] as string;
    expect(sessionAgentOf(h.host, a)).toBeDefined(); // two loaded: none to unload yet
    const c = h.request("session/create", {}).result?.["sessionId"] as string;
    expect(sessionAgentOf(h.host, a)).toBeUndefined(); // the least recently named, idle: unloaded
    expect(sessionAgentOf(h.host, b)).toBeDefined();
    expect(sessionAgentOf(h.host, c)).toBeDefined();
    const lastOfA = Math.max(...notificationsOf(h, a).map(cursorN));

    // Named again: loaded from its log, with what it knew.
    const again = h.request("turn/cancel", { sessionId: a, turnId: t1 });
    expect(again.error).toMatchObject({ code: -32001, data: { reason: "already_terminal", terminal: "completed" } });
    expect(sessionAgentOf(h.host, a)).toBeDefined();
    expect(sessionAgentOf(h.host, b)).toBeUndefined(); // now b is the least recently named
    const t2 = h.request("turn/start", { sessionId: a, input: [] }).result?.["turnId"] as string;
    await h.waitFor(completedOf(t2));
    const afterReload = notificationsOf(h, a).filter(
      (m) => m.params?.["turnId"] === t2 || (m.params?.["item"] as { turnId?: string } | undefined)?.turnId === t2,
    );
    expect(afterReload.length).toBeGreaterThan(0);
    expect(Math.min(...afterReload.map(cursorN))).toBe(lastOfA + 1);
    const resumed = h.request("session/resume", { sessionId: b });
    expect(resumed.result).toMatchObject({ sessionId: b, replayed: 0 });
    expect(checkTranscript(h.transcript).problems).toEqual([]);
  }, 10_000);

  it("never unloads a session with a turn running, even beyond the bound", async () => {
    const h = harness({ default: "shell-sleep.json" }, { maxLiveSessions: 1, killGraceMs: 300 });
    const busy = h.request("session/create", {}).result?.["sessionId"] as string;
    const turnId = h.request("turn/start", { sessionId: busy, input: [] }).result?.["turnId"] as string;
    const idle = h.request("session/create", {}).result?.["sessionId"] as string;
    const third = h.request("session/create", {}).result?.["sessionId"] as string;
    expect(sessionAgentOf(h.host, busy)).toBeDefined();
    expect(sessionAgentOf(h.host, idle)).toBeUndefined();
    expect(sessionAgentOf(h.host, third)).toBeDefined();
    await h.ask("turn/cancel", { sessionId: busy, turnId });
    await h.waitFor(completedOf(turnId), 8000);
    expect(h.wire.find(completedOf(turnId))?.params).toMatchObject({ terminal: "cancelled" });
  }, 10_000);

  it("rejects a bound below 1", () => {
    const models = new Map([["default", loadScriptedModel(fixture("hello.json"), "default")]]);
    expect(() => createHost({ models, defaultModel: "default", maxLiveSessions: 0 })).toThrow(RangeError);
  });
});
