/**
 * The session layer hears the subagent tree below its turns (issue 23), against the real reference
 * host over real WebSockets (a TCP proxy in front of it to drop the connection): the snapshot
 * shows each turn's subagent turns with their states and terminals; a Stop of the session's turn
 * settles only once every descendant has its terminal in the tree; a subagent's question reaches
 * the app on the session's turn, saying which subagent asks, and its answer runs the tool; each
 * descendant session's cursor is kept in storage and sent as `session/resume.childCursors`, and a
 * host that ignores them (the reference host, for now) still resumes the tree.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { memoryStorage, openSession, type KeyValueStorage, type SessionSnapshot, type SessionTurn } from "../../src/session/index.js";
import { formatTranscriptEntry, recordingWebSocket } from "../../src/testing/index.js";
import { describeTreeProgress } from "../../src/ui/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";

const TREE = join(repoRoot, "test/fixtures/models/subagents-tree.json");
const APPROVAL = join(repoRoot, "test/fixtures/models/subagents-approval.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function host(model: string, env?: NodeJS.ProcessEnv): Promise<WsHost> {
  const h = await startWsHost(model, env === undefined ? {} : { env });
  cleanups.push(() => h.stop());
  return h;
}

async function proxy(h: WsHost): Promise<TcpProxy> {
  const p = await startProxy(() => h.port);
  cleanups.push(() => p.close());
  return p;
}

/** Open a session to `port`; every frame of every connection is recorded in `wire`. */
async function open(port: number, token: string, storage: KeyValueStorage = memoryStorage()) {
  const wire: string[] = [];
  const warnings: string[] = [];
  const Recording = recordingWebSocket(WebSocket as unknown as WebSocketConstructor, (e) => wire.push(formatTranscriptEntry(e)));
  const session = await openSession({
    connect: () => connectWebSocket(`ws://127.0.0.1:${port}/`, { token, WebSocket: Recording, defaultTimeoutMs: 15_000 }),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 100 },
    storage,
    onWarning: (w) => warnings.push(w),
  });
  cleanups.push(() => session.close());
  return { session, wire, warnings };
}

const turnOf = (s: SessionSnapshot, turnId: string) => s.turns.find((t) => t.turnId === turnId);
/** The turn shows all three subagents of the tree model (two children, one grandchild) running. */
const treeRunning = (turnId: string) => (s: SessionSnapshot) => {
  const subagents = turnOf(s, turnId)?.subagents ?? [];
  return subagents.length === 3 && subagents.every((t) => t.state === "running");
};

/** The client's messages of one method on the recorded wire. */
function sent(wire: readonly string[], method: string): Array<Record<string, unknown>> {
  return wire
    .map((line) => JSON.parse(line) as { dir: string; raw: string })
    .filter((entry) => entry.dir === "client")
    .map((entry) => JSON.parse(entry.raw) as { method?: string; params?: Record<string, unknown> })
    .filter((message) => message.method === method)
    .map((message) => message.params ?? {});
}

/** The last viewCursor the host sent of each session, from the recorded wire. */
function lastCursors(wire: readonly string[]): Map<string, string> {
  const cursors = new Map<string, string>();
  for (const line of wire) {
    const entry = JSON.parse(line) as { dir: string; raw: string };
    if (entry.dir !== "server") continue;
    const message = JSON.parse(entry.raw) as { method?: string; id?: unknown; params?: Record<string, unknown> };
    const params = message.params;
    if (message.id === undefined && typeof params?.["sessionId"] === "string" && typeof params["viewCursor"] === "string")
      cursors.set(params["sessionId"], params["viewCursor"]);
  }
  return cursors;
}

function expectWholeTreeEnded(turn: SessionTurn): void {
  expect(turn.phase).toBe("ended");
  expect(turn.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
  expect(turn.subagents.map((t) => t.depth).sort()).toEqual([1, 1, 2]);
  for (const t of turn.subagents) {
    expect(t.state).toBe("ended");
    expect(t.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
  }
  expect(turn.subagentProgress).toEqual({ started: 3, ended: 3, running: 0 });
  expect(describeTreeProgress(turn.subagentProgress)).toBe("all 3 subagents ended");
}

it("a Stop of the session's turn settles once the whole tree has ended: every descendant's terminal is in the snapshot; each subagent session's cursor is kept", async () => {
  const h = await host(TREE);
  const storage = memoryStorage();
  const { session, wire } = await open(h.port, h.token, storage);
  const started = session.startTurn("go");
  const running = await untilSnapshot(session, treeRunning(started.turnId), "three subagents running");
  const shown = turnOf(running, started.turnId) as SessionTurn;
  // The tree as a UI renders it: two children of the turn, a grandchild below the second.
  const children = shown.subagents.filter((t) => t.parent?.turnId === started.turnId);
  expect(children).toHaveLength(2);
  const grandchild = shown.subagents.find((t) => t.depth === 2);
  expect(children.map((c) => c.turnId)).toContain(grandchild?.parent?.turnId);
  expect(describeTreeProgress(shown.subagentProgress, { stopping: true })).toBe("stopping 3 of 3 subagents…");
  expect(Object.isFrozen(shown.subagents)).toBe(true);

  started.stop();
  const ended = await started.settled({ timeoutMs: 60_000 });
  expectWholeTreeEnded(ended);
  // The snapshot agrees with what settled() gave.
  expect(turnOf(session.getSnapshot(), started.turnId)?.subagents.map((t) => t.terminal?.cause?.kind)).toEqual(["parent", "parent", "parent"]);

  // One cursor per subagent session, the last one the host sent of it, kept with the main cursor.
  await session.close();
  const kept = JSON.parse(storage.getItem("muse-code:session") as string) as { childCursors?: Record<string, string>; tree?: unknown[] };
  const cursors = lastCursors(wire);
  const childSessions = [...new Set(ended.subagents.map((t) => t.sessionId as string))];
  expect(childSessions).toHaveLength(3);
  expect(kept.childCursors).toEqual(Object.fromEntries(childSessions.map((id) => [id, cursors.get(id)])));
  expect(kept.tree).toHaveLength(3);
}, 90_000);

it("after a drop mid-tree the resume sends childCursors; a host that ignores them still resumes the tree, and a Stop then ends it whole", async () => {
  const h = await host(TREE);
  const p = await proxy(h);
  const { session, wire } = await open(p.port, h.token);
  const started = session.startTurn("go");
  await untilSnapshot(session, treeRunning(started.turnId), "three subagents running");
  const before = lastCursors(wire);
  p.cut();
  await untilSnapshot(session, (s) => s.connection.state === "reconnecting", "the drop");
  await untilSnapshot(session, (s) => s.connection.state === "open", "the reconnect");
  const resumes = sent(wire, "session/resume");
  expect(resumes).toHaveLength(1);
  const { sessionId } = session.getSnapshot();
  const children = (turnOf(session.getSnapshot(), started.turnId) as SessionTurn).subagents;
  const childSessions = children.map((t) => t.sessionId as string);
  expect(resumes[0]).toMatchObject({ sessionId, afterCursor: before.get(sessionId as string) });
  expect(resumes[0]?.["childCursors"]).toEqual(Object.fromEntries(childSessions.map((id) => [id, before.get(id)])));
  // The tree kept across the connections; the Stop reaches it whole.
  started.stop();
  expectWholeTreeEnded(await started.settled({ timeoutMs: 60_000 }));
}, 90_000);

it("a reload restores the tree from storage and resumes each subagent session from its kept cursor", async () => {
  const h = await host(TREE);
  const storage = memoryStorage();
  const first = await open(h.port, h.token, storage);
  const started = first.session.startTurn("go");
  await untilSnapshot(first.session, treeRunning(started.turnId), "three subagents running");
  first.session.stop(started.turnId);
  const ended = await started.settled({ timeoutMs: 60_000 });
  await first.session.close();
  const kept = JSON.parse(storage.getItem("muse-code:session") as string) as { childCursors: Record<string, string> };

  const second = await open(h.port, h.token, storage);
  expect(second.session.getSnapshot().connection.state).toBe("open");
  expect(sent(second.wire, "session/resume")[0]?.["childCursors"]).toEqual(kept.childCursors);
  const restored = turnOf(second.session.getSnapshot(), started.turnId) as SessionTurn;
  expectWholeTreeEnded(restored);
  expect(restored.subagents.map((t) => [t.turnId, t.terminal?.terminal])).toEqual(ended.subagents.map((t) => [t.turnId, t.terminal?.terminal]));
  expect(second.warnings).toEqual([]);
}, 90_000);

it("a subagent's question reaches the app on the session's turn, saying which subagent asks; its answer runs the tool", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muse-session-subagent-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const marker = join(dir, "marker");
  const h = await host(APPROVAL, { ...process.env, MUSE_MARKER: marker });
  const { session } = await open(h.port, h.token);
  const started = session.startTurn("go");
  const asking = await untilSnapshot(session, (s) => (turnOf(s, started.turnId)?.approvals.length ?? 0) > 0, "the subagent's question");
  const turn = turnOf(asking, started.turnId) as SessionTurn;
  const [question] = turn.approvals;
  const [child] = turn.subagents;
  expect(child).toMatchObject({ depth: 1, state: "running" });
  expect(question).toMatchObject({ tool: "shell", turnId: child?.turnId, live: true, subagent: { sessionId: child?.sessionId, depth: 1 } });
  expect(asking.sessionId).not.toBe(child?.sessionId);
  session.answerApproval(question?.itemId as string, "approve");
  const done = await started.settled({ timeoutMs: 60_000 });
  expect(done.terminal?.terminal).toBe("completed");
  expect(done.approvals).toEqual([]);
  expect(done.subagents[0]?.terminal?.terminal).toBe("completed");
  expect(existsSync(marker)).toBe(true);
}, 90_000);
