/**
 * The session layer's rules, against the real reference host over real WebSockets (a child
 * process; a TCP proxy in front of it to drop connections): only the host ends a turn; Stop
 * survives a drop and a reload and is sent once; resume without loss or duplicates; polite
 * reconnects that give up with a typed reason; close codes that tell the truth.
 */
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { connectWebSocket } from "../../src/websocket/index.js";
import { memoryStorage, openSession, type MspSession, type SessionSnapshot, type SessionTurn } from "../../src/session/index.js";
import type { WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";

const BUILD = join(repoRoot, "test/fixtures/models/session-build.json");
const APPROVE = join(repoRoot, "recipes/models/approve-tool.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function host(model = BUILD): Promise<WsHost> {
  const h = await startWsHost(model);
  cleanups.push(() => h.stop());
  return h;
}

async function proxy(h: WsHost): Promise<TcpProxy> {
  const p = await startProxy(() => h.port);
  cleanups.push(() => p.close());
  return p;
}

/** Open a session to `port` (a host, or a proxy in front of it); every snapshot it shows is kept in `seen`. */
async function open(port: number, token: string, extra: Partial<Parameters<typeof openSession>[0]> = {}) {
  const seen: SessionSnapshot[] = [];
  const warnings: string[] = [];
  let connects = 0;
  const session = await openSession({
    connect: () => {
      connects++;
      return connectWebSocket(`ws://127.0.0.1:${port}/`, { token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 10_000 });
    },
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 50 },
    onWarning: (message) => warnings.push(message),
    ...extra,
  });
  seen.push(session.getSnapshot());
  session.subscribe(() => seen.push(session.getSnapshot()));
  cleanups.push(() => session.close());
  return { session, seen, warnings, connects: () => connects };
}

/** Resolves when `predicate` holds on the session's snapshot (checked on every change), bounded. */
function until(session: MspSession, predicate: (s: SessionSnapshot) => boolean, what: string, timeoutMs = 15_000): Promise<SessionSnapshot> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const snapshot = session.getSnapshot();
      if (!predicate(snapshot)) return false;
      clearTimeout(timer);
      stop();
      resolve(snapshot);
      return true;
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out waiting for ${what}; last snapshot: ${JSON.stringify(session.getSnapshot()).slice(0, 2000)}`));
    }, timeoutMs);
    const stop = session.subscribe(() => void check());
    check();
  });
}

const turnOf = (s: SessionSnapshot, turnId: string) => s.turns.find((t) => t.turnId === turnId) as SessionTurn;
const toolRunning = (turnId: string) => (s: SessionSnapshot) =>
  turnOf(s, turnId)?.items.some((item) => item.kind === "toolCall" && item.visibleOutput.includes("step 3")) === true;
/** The phases the turn went through, in order, each change once. */
const phasesOf = (seen: SessionSnapshot[], turnId: string) =>
  seen.map((s) => s.turns.find((t) => t.turnId === turnId)?.phase).filter((phase, i, all) => phase !== undefined && phase !== all[i - 1]);

describe("only the host ends a turn", () => {
  it("a drop makes a running turn reconnecting, never failed; after the reconnect it shows the host's own terminal", async () => {
    const h = await host();
    const p = await proxy(h);
    const { session, seen } = await open(p.port, h.token);
    expect(session.getSnapshot().connection.state).toBe("open");
    const turn = session.startTurn("build it");
    await until(session, toolRunning(turn.turnId), "the tool running");
    p.cut();
    const down = await until(session, (s) => s.connection.state === "reconnecting", "reconnecting");
    expect(down.connection.reason?.kind).toBe("lost");
    expect(turnOf(down, turn.turnId).phase).toBe("reconnecting");
    const ended = await turn.settled({ timeoutMs: 20_000 });
    expect(ended.phase).toBe("ended");
    expect(ended.terminal?.terminal).toBe("completed");
    const logged = h.logRecords().find((r) => r["type"] === "turnCompleted" && r["turnId"] === turn.turnId);
    expect(logged?.["terminal"]).toBe("completed");
    expect(phasesOf(seen, turn.turnId)).toEqual(["starting", "running", "reconnecting", "running", "ended"]);
    // Replayed items merged by revision: one copy of each, the tool's output whole.
    const ids = ended.items.map((item) => item.itemId);
    expect(new Set(ids).size).toBe(ids.length);
    const tool = ended.items.find((item) => item.kind === "toolCall");
    expect(tool?.kind === "toolCall" && tool.visibleOutput.endsWith("step 60\nbuilt\n")).toBe(true);
  }, 40_000);

  it("a host SIGKILLed and restarted on the same data, port and token file: the turn shows the host's 'host restarted' terminal", async () => {
    const h = await host();
    const { session, seen } = await open(h.port, h.token);
    const turn = session.startTurn("build it");
    await until(session, toolRunning(turn.turnId), "the tool running");
    await h.crash();
    await until(session, (s) => s.connection.state === "reconnecting", "reconnecting");
    await h.restart();
    const ended = await turn.settled({ timeoutMs: 20_000 });
    expect(ended.terminal?.terminal).toBe("failed");
    expect(ended.terminal?.reason).toMatch(/host restarted/);
    expect(phasesOf(seen, turn.turnId)).not.toContain("unknown");
  }, 40_000);

  it("when the attempts are spent, unended turns become unknown with the reason, never failed", async () => {
    const h = await host();
    const p = await proxy(h);
    const { session } = await open(p.port, h.token, { reconnect: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 3 } });
    const turn = session.startTurn("build it");
    await until(session, toolRunning(turn.turnId), "the tool running");
    p.refuse(true);
    p.cut();
    const gone = await until(session, (s) => s.connection.state === "closed", "giving up");
    expect(gone.connection.reason?.kind).toBe("unreachable");
    expect(gone.connection.reason?.message).toMatch(/refused or is unreachable: 3 failed attempts in a row/);
    const shown = turnOf(gone, turn.turnId);
    expect(shown.phase).toBe("unknown");
    expect(shown.terminal).toBeUndefined();
    expect(shown.unknownReason).toMatch(/stopped reconnecting/);
    // The host has the last word: retrying reaches it, and its terminal replaces unknown.
    p.refuse(false);
    await session.retryNow();
    const ended = await until(session, (s) => turnOf(s, turn.turnId).phase === "ended", "the real terminal", 20_000);
    expect(turnOf(ended, turn.turnId).terminal?.terminal).toBe("completed");
  }, 40_000);
});

describe("Stop survives everything", () => {
  it("Stop pressed while disconnected (twice) is sent once after the reconnect, and the turn shows stopping until its real terminal", async () => {
    const h = await host();
    const p = await proxy(h);
    const { session, seen } = await open(p.port, h.token);
    const turn = session.startTurn("build it");
    await until(session, toolRunning(turn.turnId), "the tool running");
    p.refuse(true);
    p.cut();
    await until(session, (s) => s.connection.state === "reconnecting", "reconnecting");
    turn.stop();
    turn.stop();
    expect(turnOf(session.getSnapshot(), turn.turnId).phase).toBe("stopping");
    expect(h.cancelsLogged()).toHaveLength(0);
    p.refuse(false);
    const ended = await turn.settled({ timeoutMs: 20_000 });
    expect(ended.terminal?.terminal).toBe("cancelled");
    expect(ended.terminal?.cause?.kind).toBe("user");
    expect(h.cancelsLogged()).toHaveLength(1);
    const after = phasesOf(seen, turn.turnId);
    expect(after.slice(after.indexOf("stopping"))).toEqual(["stopping", "ended"]);
  }, 40_000);

  it("a reload while stopping: the next page over the same storage shows stopping, and the host sees one cancel", async () => {
    const h = await host();
    const storage = memoryStorage();
    const first = await open(h.port, h.token, { storage });
    const turn = first.session.startTurn("build it");
    await until(first.session, toolRunning(turn.turnId), "the tool running");
    turn.stop();
    await first.session.close(); // the page goes away (close writes what it shows, as a reload's last write did)
    const second = await open(h.port, h.token, { storage });
    expect(turnOf(second.session.getSnapshot(), turn.turnId).stopRequested).toBe(true);
    const ended = await second.session.turn(turn.turnId)?.settled({ timeoutMs: 20_000 });
    expect(ended?.terminal?.terminal).toBe("cancelled");
    expect(h.cancelsLogged()).toHaveLength(1);
    expect(phasesOf(second.seen, turn.turnId).every((phase) => phase === "stopping" || phase === "ended")).toBe(true);
  }, 40_000);
});

describe("resume without loss or duplicates", () => {
  it("a reload mid-turn resumes from the kept cursor and ends with exactly what a page that stayed shows", async () => {
    const h = await host();
    const storage = memoryStorage();
    const first = await open(h.port, h.token, { storage });
    const watcher = await open(h.port, h.token); // a second page, on its own session: unaffected
    expect(watcher.session.getSnapshot().sessionId).not.toBe(first.session.getSnapshot().sessionId);
    const turn = first.session.startTurn("build it");
    await until(first.session, toolRunning(turn.turnId), "the tool running");
    await new Promise((resolve) => setTimeout(resolve, 150)); // a kept write
    await first.session.close();
    const second = await open(h.port, h.token, { storage });
    expect(second.session.getSnapshot().sessionId).toBe(first.session.getSnapshot().sessionId);
    const ended = await second.session.turn(turn.turnId)?.settled({ timeoutMs: 20_000 });
    expect(ended?.terminal?.terminal).toBe("completed");
    // The host's own record of the items (its log's completions) is what the page shows.
    const completed = h
      .logRecords()
      .filter((r) => r["type"] === "notification" && r["method"] === "item/completed")
      .map((r) => (r["params"] as { item: { itemId: string } }).item);
    expect(ended?.items).toEqual(completed);
  }, 40_000);

  it("an approval open across a drop is shown once, and an answer given while offline is sent when the host asks again", async () => {
    const h = await host(APPROVE);
    const p = await proxy(h);
    const { session, seen } = await open(p.port, h.token);
    const turn = session.startTurn("publish");
    await until(session, (s) => turnOf(s, turn.turnId).approvals.length === 1, "the question");
    p.refuse(true);
    p.cut();
    const down = await until(session, (s) => s.connection.state === "reconnecting", "reconnecting");
    const question = turnOf(down, turn.turnId).approvals[0];
    expect(question?.live).toBe(false);
    session.answerApproval(question?.itemId as string, "approve");
    expect(turnOf(session.getSnapshot(), turn.turnId).approvals[0]?.answered).toBe("approve");
    p.refuse(false);
    const ended = await turn.settled({ timeoutMs: 20_000 });
    expect(ended.terminal?.terminal).toBe("completed");
    const tool = ended.items.find((item) => item.kind === "toolCall");
    expect(tool?.kind === "toolCall" && tool.approval).toBe("approved");
    expect(Math.max(...seen.map((s) => s.turns.find((t) => t.turnId === turn.turnId)?.approvals.length ?? 0))).toBe(1);
    // Once the answer given offline went, the question left the snapshot (before the tool ran, not only at the terminal).
    const approvedAt = seen.find((s) => turnOf(s, turn.turnId)?.items.some((item) => item.kind === "toolCall" && item.approval === "approved"));
    expect(approvedAt === undefined ? "never approved" : turnOf(approvedAt, turn.turnId).approvals).toEqual([]);
  }, 40_000);
});

describe("a turn the host refuses", () => {
  it("a refused turn/start ends the turn's wait as unknown, with the host's reason, and nothing is retried", async () => {
    const h = await host();
    const { session } = await open(h.port, h.token);
    const turn = session.startTurn([{ type: "text", text: 5 } as never]);
    const settled = await turn.settled({ timeoutMs: 10_000 });
    expect(settled.phase).toBe("unknown");
    expect(settled.unknownReason).toMatch(/^the host refused turn\/start: /);
    expect(settled.terminal).toBeUndefined();
  }, 30_000);
});

describe("reconnect politely, and say why", () => {
  it("a refused token (HTTP 401, which Node sees) stops the retries with tokenRefused after one attempt", async () => {
    const h = await host();
    const { session, connects } = await open(h.port, "not-the-token");
    const snapshot = session.getSnapshot();
    expect(snapshot.connection.state).toBe("closed");
    expect(snapshot.connection.reason?.kind).toBe("tokenRefused");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(connects()).toBe(1);
  }, 30_000);

  it("a session the host no longer knows: its unended turns become unknown, and a new session is created", async () => {
    const h = await host();
    const storage = memoryStorage();
    storage.setItem(
      "muse-code:session",
      JSON.stringify({
        sessionId: "0198f0aa-9999-7000-8000-000000000099",
        cursor: "v:0198f0aa-9999-7000-8000-000000000099:4",
        turns: [{ turnId: "t-old", phase: "running", items: [], droppedItems: 0, stopRequested: false }],
      }),
    );
    const { session } = await open(h.port, h.token, { storage });
    const snapshot = session.getSnapshot();
    expect(snapshot.connection.state).toBe("open");
    expect(snapshot.sessionId).not.toBe("0198f0aa-9999-7000-8000-000000000099");
    expect(turnOf(snapshot, "t-old")).toMatchObject({
      phase: "unknown",
      unknownReason: "the host no longer knows session 0198f0aa-9999-7000-8000-000000000099",
    });
  }, 30_000);

  it("a close this side made (WebSocket 1005, no host close code) is never described as the host's", async () => {
    const h = await host();
    const sockets: WebSocket[] = [];
    class Tracked extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        sockets.push(this);
      }
    }
    const { session } = await openSessionWith(h, Tracked as unknown as WebSocketConstructor);
    sockets.at(-1)?.close(); // the page closes its own socket, no code
    const down = await until(session, (s) => s.connection.state !== "open", "the close");
    expect(down.connection.reason?.kind).toBe("closedHere");
    expect(down.connection.reason?.message).not.toMatch(/host closed/);
  }, 30_000);
});

async function openSessionWith(h: WsHost, WebSocketClass: WebSocketConstructor) {
  const session = await openSession({
    connect: () => connectWebSocket(`ws://127.0.0.1:${h.port}/`, { token: h.token, WebSocket: WebSocketClass }),
    reconnect: { initialDelayMs: 5_000, maxDelayMs: 5_000, maxAttempts: 2 },
    onWarning: () => {},
  });
  cleanups.push(() => session.close());
  return { session };
}
