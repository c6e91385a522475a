/**
 * The session's subagent tree across resumes (issue 23), against the real reference host over a
 * real WebSocket (a TCP proxy in front of it to drop the connection, and to point it at another
 * host): an in-progress item of a subagent turn the tree no longer holds is never put as a turn of
 * the session; after `unknown_session` the new session starts with an empty tree (no old
 * subagent shown running, no old `childCursors` sent).
 */
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { memoryStorage, openSession, type SessionLimits } from "../../src/session/index.js";
import { formatTranscriptEntry, recordingWebSocket } from "../../src/testing/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { join } from "node:path";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";

const TREE = join(repoRoot, "test/fixtures/models/subagents-tree.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function host(): Promise<WsHost> {
  const h = await startWsHost(TREE);
  cleanups.push(() => h.stop());
  return h;
}

async function proxy(target: () => number): Promise<TcpProxy> {
  const p = await startProxy(target);
  cleanups.push(() => p.close());
  return p;
}

async function open(port: number, token: string, limits?: Partial<SessionLimits>) {
  const wire: string[] = [];
  const warnings: string[] = [];
  const Recording = recordingWebSocket(WebSocket as unknown as WebSocketConstructor, (e) => wire.push(formatTranscriptEntry(e)));
  const session = await openSession({
    connect: () => connectWebSocket(`ws://127.0.0.1:${port}/`, { token, WebSocket: Recording, defaultTimeoutMs: 15_000 }),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 100 },
    storage: memoryStorage(),
    onWarning: (w) => warnings.push(w),
    ...(limits === undefined ? {} : { limits }),
  });
  cleanups.push(() => session.close());
  return { session, wire, warnings };
}

function frames(wire: readonly string[], dir: "client" | "server"): Array<{ method?: string; params?: Record<string, unknown> }> {
  return wire
    .map((line) => JSON.parse(line) as { dir: string; raw: string })
    .filter((entry) => entry.dir === dir)
    .map((entry) => JSON.parse(entry.raw) as { method?: string; params?: Record<string, unknown> });
}

/** Sessions whose shell tool (the tree model's sleeping `exec sleep 60`) has started, from the wire. */
function sleepingSessions(wire: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const f of frames(wire, "server")) {
    const item = f.params?.["item"] as Record<string, unknown> | undefined;
    if (item?.["tool"] === "shell" && typeof f.params?.["sessionId"] === "string") out.add(f.params["sessionId"]);
  }
  return out;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it("an in-progress item of a subagent turn the tree does not hold is never put as a turn of the session", async () => {
  const h = await host();
  const p = await proxy(() => h.port);
  // A tree of 1 + 3 turns, bounds that hold only part of it: the grandchild's turn is not in the tree, its session's cursor is.
  const { session, wire } = await open(p.port, h.token, { turns: 1, subagentSessions: 2 });
  const started = session.startTurn("go");
  await waitFor(() => sleepingSessions(wire).size === 4, "every turn of the tree running its tool");
  p.cut();
  await untilSnapshot(session, (s) => s.connection.state === "reconnecting", "the drop");
  await untilSnapshot(session, (s) => s.connection.state === "open", "the reconnect");
  const resumes = frames(wire, "client").filter((f) => f.method === "session/resume");
  expect(resumes).toHaveLength(1);
  expect(Object.keys((resumes[0]?.params?.["childCursors"] as object | undefined) ?? {}).length).toBeGreaterThan(0);
  // Only the session's own turn shows: no phantom turn made of a subagent's item.
  expect(session.getSnapshot().turns.map((t) => t.turnId)).toEqual([started.turnId]);
  started.stop();
  const ended = await started.settled({ timeoutMs: 60_000 });
  expect(ended.terminal?.terminal).toBe("cancelled");
  expect(session.getSnapshot().turns.map((t) => t.turnId)).toEqual([started.turnId]);
}, 120_000);

it("after unknown_session the new session starts with an empty tree: no old subagent shows running, no old childCursors are sent", async () => {
  const first = await host();
  let current = first;
  const p = await proxy(() => current.port);
  const { session, wire } = await open(p.port, first.token);
  const started = session.startTurn("go");
  await untilSnapshot(session, (s) => (s.turns.find((t) => t.turnId === started.turnId)?.subagents.length ?? 0) === 3, "three subagents");
  const oldSession = session.getSnapshot().sessionId;
  // The host is gone with its data: a fresh one (same token) behind the proxy does not know the session.
  current = await host();
  await first.crash();
  p.cut();
  const renewed = await untilSnapshot(session, (s) => s.connection.state === "open" && s.sessionId !== oldSession, "a new session");
  const old = renewed.turns.find((t) => t.turnId === started.turnId);
  expect(old?.phase).toBe("unknown");
  expect(old?.subagentProgress.running).toBe(0);
  // A later resume of the new session names none of the old session's subagents.
  const before = frames(wire, "client").filter((f) => f.method === "session/resume").length;
  p.cut();
  await untilSnapshot(session, (s) => s.connection.state === "reconnecting", "the drop");
  await untilSnapshot(session, (s) => s.connection.state === "open", "the reconnect");
  const resumes = frames(wire, "client")
    .filter((f) => f.method === "session/resume")
    .slice(before);
  expect(resumes).toHaveLength(1);
  expect(resumes[0]?.params).toMatchObject({ sessionId: renewed.sessionId });
  expect(resumes[0]?.params?.["childCursors"]).toBeUndefined();
}, 120_000);
