/**
 * Approvals across connections, on the real host core (MuseHost, the real agent loop and shell
 * tool) with in-memory transports: a stdio host has one connection, so asking again on another
 * one is exercised here. A `session/resume` asks an open question again on the resuming
 * connection, after the replay that shows it pending; a closed connection's question moves to the
 * session's next open connection; the first answer decides and the others are ignored.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { approvalModel } from "./approvalModel.js";
import type { WireMessage } from "./hostProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Conn {
  wire: WireMessage[];
  request(method: string, params: Record<string, unknown>): WireMessage;
  /** Sends a request whose answer may come later (a `turn/cancel` is answered once its record is durable). */
  ask(method: string, params: Record<string, unknown>): Promise<WireMessage>;
  answer(id: unknown, result: unknown): void;
  close(): void;
  waitFor(predicate: (m: WireMessage) => boolean, what: string, timeoutMs?: number): Promise<WireMessage>;
  asks(): WireMessage[];
}

function setup(): { host: MuseHost; marker: string; connect(): Conn } {
  const dir = mkdtempSync(join(tmpdir(), "muse-approval-resume-"));
  const { model, marker } = approvalModel(dir);
  const host = createHost({
    models: new Map([["default", loadScriptedModel(model, "default")]]),
    defaultModel: "default",
    dataDir: join(dir, "data"),
  });
  cleanups.push(async () => {
    await host.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });
  let ids = 0;
  const connect = (): Conn => {
    const wire: WireMessage[] = [];
    let onMessage: (text: string) => void = () => {};
    const onClose: Array<() => void> = [];
    let closed = false;
    const transport: MessageTransport = {
      onMessage: (cb) => (onMessage = cb),
      onClose: (cb) => onClose.push(cb),
      send: (m) => {
        if (!closed) wire.push(JSON.parse(JSON.stringify(m)) as WireMessage);
      },
      close: () => {},
    };
    host.connect(transport);
    return {
      wire,
      request(method, params) {
        const id = ++ids;
        onMessage(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
        const response = wire.find((m) => m.id === id && m.method === undefined);
        if (response === undefined) throw new Error(`no synchronous response to ${method}`);
        return response;
      },
      ask(method, params) {
        const id = ++ids;
        onMessage(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
        return this.waitFor((m) => m.id === id && m.method === undefined, `the answer to ${method}`);
      },
      answer(id, result) {
        onMessage(JSON.stringify({ jsonrpc: "2.0", id, result }));
      },
      close() {
        closed = true;
        for (const cb of onClose) cb();
      },
      async waitFor(predicate, what, timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const found = wire.find(predicate);
          if (found !== undefined) return found;
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 5));
        }
      },
      asks: () => wire.filter((m) => m.method === "tool/approve"),
    };
  };
  return { host, marker, connect };
}

const isAsk = (m: WireMessage) => m.method === "tool/approve";
const terminalOf = (turnId: string) => (m: WireMessage) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;
const toolItem = (m: WireMessage) => m.params?.["item"] as { kind?: string; approval?: string; status?: string; failureReason?: string } | undefined;

async function askedOn(conn: Conn): Promise<{ sessionId: string; turnId: string; ask: WireMessage }> {
  const sessionId = conn.request("session/create", {}).result?.["sessionId"] as string;
  const turnId = conn.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] }).result?.["turnId"] as string;
  const ask = await conn.waitFor(isAsk, "tool/approve");
  return { sessionId, turnId, ask };
}

describe("tool/approve across connections", () => {
  it("the asked connection closes; session/resume on a new one replays the pending item, then asks again there", async () => {
    const { marker, connect } = setup();
    const first = connect();
    const { sessionId, turnId, ask } = await askedOn(first);
    first.close();
    const second = connect();
    const resumed = second.request("session/resume", { sessionId });
    expect(resumed.result).toMatchObject({ status: "accepted" });
    const again = await second.waitFor(isAsk, "tool/approve on the resuming connection");
    expect(again.params).toEqual(ask.params);
    // After the replay that shows the question pending:
    const pendingAt = second.wire.findIndex((m) => m.method === "item/updated" && toolItem(m)?.approval === "pending");
    expect(pendingAt).toBeGreaterThan(second.wire.indexOf(resumed));
    expect(second.wire.indexOf(again)).toBeGreaterThan(pendingAt);
    second.answer(again.id, { decision: "approve" });
    const terminal = await second.waitFor(terminalOf(turnId), "the terminal");
    expect(terminal.params).toMatchObject({ terminal: "completed" });
    const done = second.wire.filter((m) => m.method === "item/completed" && toolItem(m)?.kind === "toolCall").map(toolItem);
    expect(done).toEqual([expect.objectContaining({ status: "completed", approval: "approved" })]);
    expect(existsSync(marker)).toBe(true);
  });

  it("a resume on the connection that has the question outstanding does not ask it twice", async () => {
    const { connect } = setup();
    const conn = connect();
    const { sessionId, turnId, ask } = await askedOn(conn);
    conn.request("session/resume", { sessionId });
    await new Promise((r) => setTimeout(r, 50));
    expect(conn.asks()).toEqual([ask]);
    conn.answer(ask.id, { decision: "deny" });
    await conn.waitFor(terminalOf(turnId), "the terminal");
  });

  it("two connections on a session: the first answer decides, the other connection's answer is ignored", async () => {
    const { marker, connect } = setup();
    const a = connect();
    const { sessionId, turnId, ask } = await askedOn(a);
    const b = connect();
    b.request("session/resume", { sessionId });
    const askB = await b.waitFor(isAsk, "tool/approve on b");
    b.answer(askB.id, { decision: "deny", reason: "b said no" });
    a.answer(ask.id, { decision: "approve" }); // too late: b decided
    const terminal = await b.waitFor(terminalOf(turnId), "the terminal");
    expect(terminal.params).toMatchObject({ terminal: "completed" });
    const done = b.wire.filter((m) => m.method === "item/completed" && toolItem(m)?.kind === "toolCall").map(toolItem);
    expect(done).toEqual([expect.objectContaining({ status: "failed", approval: "denied", failureReason: "denied by the user" })]);
    expect(existsSync(marker)).toBe(false);
  });

  it("when the asked connection closes, the question moves to the session's other open connection", async () => {
    const { connect } = setup();
    const a = connect();
    const sessionId = a.request("session/create", {}).result?.["sessionId"] as string;
    const b = connect();
    b.request("session/resume", { sessionId });
    const turnId = a.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] }).result?.["turnId"] as string;
    const onB = await b.waitFor(isAsk, "tool/approve on b (the most recent)");
    expect(a.asks()).toEqual([]);
    b.close();
    const onA = await a.waitFor(isAsk, "tool/approve moved to a");
    expect(onA.params).toEqual(onB.params);
    a.answer(onA.id, { decision: "approve" });
    const terminal = await a.waitFor(terminalOf(turnId), "the terminal");
    expect(terminal.params).toMatchObject({ terminal: "completed" });
  });

  it("with no connection left, the question waits (the turn stays running) until a resume asks it", async () => {
    const { host, connect } = setup();
    const a = connect();
    const { sessionId, turnId } = await askedOn(a);
    a.close();
    await new Promise((r) => setTimeout(r, 200));
    const b = connect();
    const resumed = b.request("session/resume", { sessionId });
    expect(b.wire.some(terminalOf(turnId))).toBe(false); // still running
    expect(resumed.result?.["replayed"]).toBeGreaterThan(0);
    const ask = await b.waitFor(isAsk, "tool/approve after the resume");
    await b.ask("turn/cancel", { sessionId, turnId });
    const terminal = await b.waitFor(terminalOf(turnId), "the terminal");
    expect(terminal.params).toMatchObject({ terminal: "cancelled", reason: "cancelled while awaiting approval" });
    b.answer(ask.id, { decision: "approve" }); // late: accepted and ignored
    await host.shutdown();
  });
});
