/**
 * Issue 23, the host's delivery of a tree to a peer that is behind, with real session logs and a
 * transport double whose held bytes the test controls: a child linked (or heard) while the peer
 * is behind on its parent waits for the parent's queued `subagent` link; one unreadable log in a
 * tree replay ends that member only; a terminal owed to a member of a tree replay is fed with the
 * tree, in host order (`h`).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TurnCompletedParams } from "../../packages/protocol/src/index.js";
import { Delivery } from "../../packages/host/src/server/delivery.js";
import { HeldTransport } from "./heldTransport.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";

const dirs: string[] = [];
const logs: SessionLog[] = [];
afterEach(() => {
  for (const log of logs.splice(0)) log.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A delivery on real logs in a temp dir, and a writer of notifications (logged durably, published when live). */
function tree() {
  const dir = mkdtempSync(join(tmpdir(), "muse-treefeed-"));
  dirs.push(dir);
  const open = new Map<string, SessionLog>();
  const cursors = new Map<string, number>();
  const terminals = new Map<string, TurnCompletedParams>();
  const problems: string[] = [];
  let h = 0;
  const delivery = new Delivery({
    read: (sessionId, from, upTo) => readSessionLog(sessionLogPath(dir, sessionId), { from, upTo }),
    lastCursor: (sessionId) => cursors.get(sessionId),
    terminal: (_sessionId, turnId) => terminals.get(turnId),
    log: (line) => problems.push(line),
  });
  const note = async (sessionId: string, live: boolean, options: { padding?: number; terminal?: boolean } = {}) => {
    let log = open.get(sessionId);
    if (log === undefined) {
      log = SessionLog.open(sessionLogPath(dir, sessionId));
      log.append({ type: "session", at: 1, sessionId, model: "default" });
      open.set(sessionId, log);
      logs.push(log);
    }
    const n = (cursors.get(sessionId) ?? 0) + 1;
    cursors.set(sessionId, n);
    h += 1;
    const base = {
      sessionId,
      viewCursor: `v:${sessionId}:${n}`,
      emittedAtMs: h,
      turnId: `turn-${sessionId}`,
      order: h,
      padding: "x".repeat(options.padding ?? 80),
    };
    const method = options.terminal === true ? "turn/completed" : "turn/started";
    const params = options.terminal === true ? { ...base, terminal: "completed" } : base;
    if (options.terminal === true) terminals.set(base.turnId, params as unknown as TurnCompletedParams);
    log.write({ type: "notification", at: h, n, h, method, params });
    await log.durable();
    if (live) delivery.publish(method, params);
    return h;
  };
  const drainAll = async (transport: HeldTransport, count: number) => {
    for (let i = 0; i < 200 && transport.notes().length < count; i++) {
      transport.drain();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await delivery.fed();
  };
  return { dir, delivery, note, drainAll, problems, cursors };
}

/** Subscribes a new peer to `sessionId` as a `session/create` answer does. */
function subscribed(delivery: Delivery, transport: HeldTransport, sessionId: string) {
  const subscriber = delivery.attach(transport);
  delivery.deliver(subscriber, 1, { kind: "result", method: "session/create", result: { sessionId } });
  transport.held = 0;
  return subscriber;
}

const ascending = (hs: number[]) => hs.every((h, i) => i === 0 || h > (hs[i - 1] ?? 0));

describe("a child of a session its peer is behind on", () => {
  it("linked while the peer is behind: nothing of the child goes out before the parent's queued link", async () => {
    const { delivery, note, drainAll } = tree();
    const transport = new HeldTransport();
    subscribed(delivery, transport, "P");
    for (let i = 0; i < 6; i++) await note("P", true);
    expect(transport.held).toBeGreaterThan(transport.maxHeldBytes / 2); // behind on P
    delivery.linkChild("P", "C");
    const link = await note("P", true); // the parent's `subagent` link: queued in its feed
    transport.held = 0; // the socket drained, its drain event not fired yet
    await note("C", true);
    await note("C", true);
    await drainAll(transport, 9);
    const notes = transport.notes();
    expect(notes.map(([, , h]) => h)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1)); // once each, in host order
    const firstOfChild = notes.findIndex(([s]) => s === "C");
    expect(notes.findIndex(([, , h]) => h === link)).toBeLessThan(firstOfChild);
  });

  it("heard while its parent's link did not fit: it waits for the parent's feed", async () => {
    const { delivery, note, drainAll } = tree();
    const transport = new HeldTransport();
    subscribed(delivery, transport, "P");
    delivery.linkChild("P", "C"); // not behind yet: the child is heard live
    transport.held = 300;
    const link = await note("P", true, { padding: 400 }); // does not fit: the peer falls behind on P
    await note("C", true, { padding: 10 }); // would fit
    await note("C", true, { padding: 10 });
    await drainAll(transport, 3);
    const notes = transport.notes();
    expect(notes.map(([, , h]) => h)).toEqual([1, 2, 3]);
    expect(notes[0]?.[2]).toBe(link);
  });
});

describe("a tree replay with a member whose log cannot be read", () => {
  it("ends that member only: the others are fed whole and go on live without a gap", async () => {
    const { dir, delivery, note, drainAll, problems, cursors } = tree();
    delivery.linkChild("P", "C");
    for (const s of ["P", "C", "C", "P", "P", "C", "P", "C", "C", "P"]) await note(s, false);
    const transport = new HeldTransport();
    const subscriber = delivery.attach(transport);
    delivery.deliver(subscriber, 1, {
      kind: "result",
      method: "session/resume",
      result: { commandId: "c", status: "accepted", sessionId: "P", replayed: 10 },
      replay: { sessionId: "P", after: 0, upTo: 5, children: [{ sessionId: "C", after: 0, upTo: 5 }] },
    });
    expect(transport.held).toBeGreaterThanOrEqual(transport.maxHeldBytes / 2); // behind mid-replay
    // The child's log becomes unreadable (a directory where the file was).
    rmSync(sessionLogPath(dir, "C"), { force: true });
    mkdirSync(sessionLogPath(dir, "C"));
    for (let i = 0; i < 3; i++) await note("P", true);
    await drainAll(transport, 1000);
    const ofParent = transport.notes().filter(([s]) => s === "P");
    expect(ofParent.map(([, n]) => n)).toEqual(Array.from({ length: cursors.get("P") ?? 0 }, (_, i) => i + 1)); // every one, once, in order
    expect(problems.some((line) => line.includes("session C"))).toBe(true); // reported
  });
});

describe("a terminal owed to a member of a tree replay", () => {
  it("is sent after what comes before it in host order, with the tree", async () => {
    const { delivery, note, drainAll } = tree();
    delivery.linkChild("P", "C");
    for (const s of ["P", "C", "P", "C", "P", "P", "P"]) await note(s, false);
    const terminal = await note("C", false, { terminal: true });
    await note("P", false);
    const transport = new HeldTransport();
    const subscriber = delivery.attach(transport);
    delivery.deliver(subscriber, 1, {
      kind: "result",
      method: "session/resume",
      result: { commandId: "c", status: "accepted", sessionId: "P", replayed: 9 },
      replay: { sessionId: "P", after: 0, upTo: 6, children: [{ sessionId: "C", after: 0, upTo: 3 }] },
    });
    expect(transport.held).toBeGreaterThanOrEqual(transport.maxHeldBytes / 2); // behind mid-replay
    delivery.deliver(subscriber, 2, { kind: "error", error: { code: -32000, message: "already terminal" }, terminalOf: { sessionId: "C", turnId: "turn-C" } });
    const answer = transport.sent.findIndex((m) => m["id"] === 2);
    const before = transport.notes(answer);
    expect(before.map(([, , h]) => h)).toEqual(Array.from({ length: terminal }, (_, i) => i + 1)); // in host order, up to the terminal
    await drainAll(transport, 9);
    expect(ascending(transport.notes().map(([, , h]) => h))).toBe(true);
    expect(transport.notes()).toHaveLength(9);
  });
});

describe("a resume answered again from the cache (a retry with the same commandId)", () => {
  it("replays whole a child linked since the resume was handled", async () => {
    const { delivery, note, drainAll, cursors } = tree();
    delivery.linkChild("P", "C");
    for (const s of ["P", "C", "P"]) await note(s, false);
    const outcome = {
      kind: "result" as const,
      method: "session/resume",
      result: { commandId: "c", status: "accepted", sessionId: "P", replayed: 3 },
      replay: { sessionId: "P", after: 0, upTo: 2, children: [{ sessionId: "C", after: 0, upTo: 1 }], tree: ["C"] },
    };
    // Meanwhile a new child starts below P (nobody hears P yet).
    delivery.linkChild("P", "D");
    await note("P", false);
    await note("D", false);
    await note("D", false);
    const transport = new HeldTransport();
    const subscriber = delivery.attach(transport);
    delivery.deliver(subscriber, 1, outcome);
    await drainAll(transport, 6);
    const ofNew = transport.notes().filter(([s]) => s === "D");
    expect(ofNew.map(([, n]) => n)).toEqual(Array.from({ length: cursors.get("D") ?? 0 }, (_, i) => i + 1));
    expect(ascending(transport.notes().map(([, , h]) => h))).toBe(true);
    expect(transport.sent[0]).toMatchObject({ id: 1, result: { replayed: 6 } });
  });
});
