/**
 * The group-committed host keeps its durability promise on the wire: every notification, and the
 * answer to a `turn/cancel`, is sent only once its record is in the session log, and a cancel's
 * answer waits for its sync without holding up the tool's SIGTERM.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { fixture, type WireMessage } from "./hostProcess.js";
import { grownTo } from "../helpers/foldedWire.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** The log's records, as written so far. */
function records(dataDir: string, sessionId: string): Array<{ type: string; n?: number; turnId?: string }> {
  return readFileSync(sessionLogPath(dataDir, sessionId), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; n?: number; turnId?: string });
}

function start(model: string): { host: MuseHost; dataDir: string; wire: WireMessage[]; problems: string[]; send(text: string): void } {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-cancel-durable-"));
  const host = createHost({ models: new Map([["m", loadScriptedModel(fixture(model), "m")]]), defaultModel: "m", dataDir, killGraceMs: 500 });
  const wire: WireMessage[] = [];
  const problems: string[] = [];
  let onMessage: (text: string) => void = () => {};
  const transport: MessageTransport = {
    onMessage: (cb) => (onMessage = cb),
    onClose: () => {},
    send: (m) => {
      const message = JSON.parse(JSON.stringify(m)) as WireMessage & { params?: { sessionId?: string; viewCursor?: string } };
      // The promise, checked at the moment of sending: the record is already in the log.
      if (message.method !== undefined && message.params?.viewCursor !== undefined) {
        const n = Number(message.params.viewCursor.slice(message.params.viewCursor.lastIndexOf(":") + 1));
        const logged = records(dataDir, message.params.sessionId as string).some((r) => r.type === "notification" && r.n === n);
        if (!logged) problems.push(`${message.method} ${n} was sent before its record was written`);
      }
      wire.push(message);
    },
    close: () => {},
  };
  host.connect(transport);
  cleanups.push(async () => {
    await host.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { host, dataDir, wire, problems, send: (text) => onMessage(text) };
}

async function until<T>(find: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("durable answers with group commit", () => {
  it("a turn/cancel is answered only once its cancelRequested record is logged; every notification is logged before it is sent", async () => {
    const h = start("shell-sleep.json");
    h.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} }));
    const created = await until(() => h.wire.find((m) => m.id === 1), "session/create");
    const sessionId = (created.result as { sessionId: string }).sessionId;
    h.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "turn/start", params: { sessionId, commandId: "turn-1", input: [{ type: "text", text: "go" }] } }));
    await until(() => h.wire.find(grownTo(h.wire, /grandchild/)), "the tool's output");
    let answeredBeforeLogged = false;
    const answered = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (!h.wire.some((m) => m.id === 3)) return;
        clearInterval(check);
        resolve();
      }, 1);
    });
    h.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "turn/cancel", params: { sessionId, turnId: "turn-1" } }));
    // Not answered in the same call: the answer waits for the sync, which runs off the event loop.
    if (h.wire.some((m) => m.id === 3)) answeredBeforeLogged = !records(h.dataDir, sessionId).some((r) => r.type === "cancelRequested");
    await answered;
    expect(answeredBeforeLogged).toBe(false);
    expect(records(h.dataDir, sessionId).some((r) => r.type === "cancelRequested" && r.turnId === "turn-1")).toBe(true);
    expect(h.wire.find((m) => m.id === 3)?.result).toMatchObject({ status: "accepted", turnId: "turn-1" });
    const terminal = await until(() => h.wire.find((m) => m.method === "turn/completed"), "the terminal");
    expect(terminal.params).toMatchObject({ turnId: "turn-1", terminal: "cancelled" });
    // A second cancel of the terminal turn: already_terminal, after the terminal (invariant 4).
    h.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "turn/cancel", params: { sessionId, turnId: "turn-1" } }));
    const rejected = await until(() => h.wire.find((m) => m.id === 4), "the rejection");
    expect(rejected.error?.data?.["reason"]).toBe("already_terminal");
    expect(h.wire.filter((m) => m.method === "turn/completed")).toHaveLength(1);
    expect(h.problems).toEqual([]);
  });
});
