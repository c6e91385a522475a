/**
 * The session's model against the real reference host over real WebSockets (a child process with
 * two scripted models, a TCP proxy in front to drop the connection): `openSession({ model })`
 * creates the session with it, `setModel` is sent now or kept across a drop and a reload and sent
 * once, and a model the host does not know shows as refused.
 */
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { memoryStorage, openSession, type KeyValueStorage, type SessionOptions } from "../../src/session/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";

const SMALL = join(repoRoot, "recipes/models/scripted-small.json");
const LARGE = join(repoRoot, "recipes/models/scripted-large.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hostAndProxy(): Promise<{ h: WsHost; p: TcpProxy }> {
  const h = await startWsHost(SMALL, { args: ["--model", `small=${SMALL}`, "--model", `large=${LARGE}`, "--default-model", "small"] });
  cleanups.push(() => h.stop());
  const p = await startProxy(() => h.port);
  cleanups.push(() => p.close());
  return { h, p };
}

async function open(port: number, token: string, extra: Partial<SessionOptions> = {}) {
  const warnings: string[] = [];
  const session = await openSession({
    connect: () => connectWebSocket(`ws://127.0.0.1:${port}/msp`, { token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 10_000 }),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 50 },
    onWarning: (message) => warnings.push(message),
    ...extra,
  });
  cleanups.push(() => session.close());
  return { session, warnings };
}

/** The host's log records of a model switch (one per `session/setModel` it ran; a retried commandId runs once). */
const switches = (h: WsHost) => h.logRecords().filter((r) => r["type"] === "model");

describe("the session's model", () => {
  it("openSession({ model }) creates the session with it; setModel switches it on the live connection", async () => {
    const { h, p } = await hostAndProxy();
    const { session } = await open(p.port, h.token, { model: "large" });
    expect(session.getSnapshot().model).toEqual({ current: "large", requested: undefined });
    session.setModel("small");
    expect(session.getSnapshot().model.requested).toBe("small");
    const switched = await untilSnapshot(session, (s) => s.model.current === "small", "the host's answer", 15_000);
    expect(switched.model.requested).toBeUndefined();
    expect(switches(h).map((r) => [r["previousModel"], r["model"]])).toEqual([["large", "small"]]);
  }, 40_000);

  it("a setModel pressed while disconnected is kept, survives a reload, and is sent once after the resume", async () => {
    const { h, p } = await hostAndProxy();
    const storage: KeyValueStorage = memoryStorage();
    const first = await open(p.port, h.token, { storage });
    expect(first.session.getSnapshot().model.current).toBe("small");
    p.refuse(true);
    p.cut();
    await untilSnapshot(first.session, (s) => s.connection.state === "reconnecting", "reconnecting", 15_000);
    first.session.setModel("large");
    expect(first.session.getSnapshot().model).toEqual({ current: "small", requested: "large" });
    await first.session.close();
    const second = await open(p.port, h.token, { storage, reconnect: { initialDelayMs: 50, maxDelayMs: 100, maxAttempts: 200 } });
    expect(second.session.getSnapshot().model).toEqual({ current: "small", requested: "large" });
    p.refuse(false);
    const back = await untilSnapshot(second.session, (s) => s.model.current === "large", "the kept switch accepted", 20_000);
    expect(back.model.requested).toBeUndefined();
    expect(back.sessionId).toBe(first.session.getSnapshot().sessionId);
    expect(switches(h).map((r) => [r["previousModel"], r["model"]])).toEqual([["small", "large"]]);
  }, 60_000);

  it("a model the host does not know shows as refused with the host's words; the current one stays", async () => {
    const { h, p } = await hostAndProxy();
    const { session } = await open(p.port, h.token);
    session.setModel("no-such-model");
    const refused = await untilSnapshot(session, (s) => s.model.refused !== undefined, "the refusal", 15_000);
    expect(refused.model.refused?.model).toBe("no-such-model");
    expect(refused.model.refused?.message).toMatch(/unknown_model/);
    expect(refused.model.current).toBe("small");
    expect(refused.model.requested).toBeUndefined();
  }, 40_000);

  it("bad names are refused with a TypeError before anything is sent", async () => {
    const { h, p } = await hostAndProxy();
    await expect(open(p.port, h.token, { model: "" })).rejects.toThrow(TypeError);
    const { session } = await open(p.port, h.token);
    expect(() => session.setModel("")).toThrow(TypeError);
    expect(() => session.setModel(42 as unknown as string)).toThrow(/non-empty string/);
  }, 40_000);
});
