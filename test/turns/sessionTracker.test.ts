/** Tests of SessionTracker: per-session cursors, resumes, known turns and the stray-terminal policy. */
import { describe, expect, it } from "vitest";
import { SessionTracker } from "../../src/turns/sessionTracker.js";
import { TurnRecorder } from "../../src/turns/turnRecorder.js";

const S = "0198f0aa-1111-7000-8000-0000000000aa";
const at = (n: number, fields: Record<string, unknown> = {}) => ({ sessionId: S, viewCursor: `v:${S}:${n}`, ...fields });
const ended = (turnId: string, n: number) => ({ ...at(n), turnId, terminal: "completed" as const, reason: "completed", durationMs: 1 });
const item = (turnId: string, n: number) => at(n, { item: { itemId: `i-${turnId}`, kind: "message", turnId, revision: 1, status: "inProgress" } });

function tracker(knownTurnCapacity = 10, sessionCapacity?: number) {
  const turns = new TurnRecorder();
  return { turns, sessions: new SessionTracker(turns, sessionCapacity === undefined ? { knownTurnCapacity } : { knownTurnCapacity, sessionCapacity }) };
}

describe("SessionTracker", () => {
  it("delivers notifications whose viewCursor strictly increases per session, and drops a repeat or a step back", () => {
    const { sessions } = tracker();
    expect(sessions.admit("turn/started", at(1, { turnId: "t" }))).toEqual({ deliver: true });
    expect(sessions.admit("turn/started", at(3, { turnId: "u" }))).toEqual({ deliver: true });
    expect(sessions.lastViewCursor(S)).toBe(`v:${S}:3`);
    expect(sessions.admit("item/started", item("t", 3))).toEqual({ deliver: false, problem: `item/started: viewCursor v:${S}:3 does not follow v:${S}:3` });
    expect(sessions.admit("item/started", item("t", 2))).toMatchObject({ deliver: false });
    expect(sessions.admit("turn/started", { sessionId: "other", viewCursor: "v:other:1", turnId: "x" })).toEqual({ deliver: true });
    expect([sessions.lastViewCursor(S), sessions.lastViewCursor("nobody")]).toEqual([`v:${S}:3`, undefined]);
  });

  it("strict cursors: one that is not v:<sessionId>:<n> is a problem and dropped, and leaves the last cursor as it was", () => {
    const { sessions } = tracker();
    expect(sessions.admit("turn/started", at(5, { turnId: "t" }))).toEqual({ deliver: true });
    for (const bad of ["zzz", "b", `v:${S}:04`, `v:other:9`, `v:${S}:-1`, `v:${S}:1e3`]) {
      expect(sessions.admit("turn/started", { sessionId: S, viewCursor: bad, turnId: "t" })).toEqual({
        deliver: false,
        problem: `turn/started: viewCursor ${JSON.stringify(bad)} is not a cursor of session ${S} (v:<sessionId>:<n>)`,
      });
    }
    expect(sessions.lastViewCursor(S)).toBe(`v:${S}:5`);
    expect(sessions.admit("turn/started", at(3, { turnId: "t" })).deliver).toBe(false);
    expect(sessions.admit("turn/started", at(6, { turnId: "t" })).deliver).toBe(true);
  });

  it("a terminal not yet recorded is delivered even with a malformed cursor (no waiter may miss it), and reported", () => {
    const { sessions } = tracker();
    expect(sessions.admit("turn/completed", { ...ended("t", 1), viewCursor: "zzz" })).toEqual({
      deliver: true,
      problem: `turn/completed: viewCursor "zzz" is not a cursor of session ${S} (v:<sessionId>:<n>)`,
    });
  });

  it("a turn/started after that turn's turn/completed is a problem and dropped", () => {
    const { turns, sessions } = tracker();
    sessions.admit("turn/started", at(1, { turnId: "t" }));
    turns.record(ended("t", 2));
    expect(sessions.admit("turn/started", at(3, { turnId: "t" }))).toEqual({ deliver: false, problem: "turn/started for turn t after its turn/completed" });
  });

  it("after a resume from a cursor that does not parse, the first well-formed cursor starts afresh", () => {
    const { sessions } = tracker();
    sessions.admit("turn/started", at(5, { turnId: "t" }));
    sessions.noteCommand("session/resume", { sessionId: S, afterCursor: "opaque" }, "c1")?.({});
    expect(sessions.admit("turn/started", at(1, { turnId: "t" })).deliver).toBe(true);
    expect(sessions.admit("turn/started", at(1, { turnId: "t" })).deliver).toBe(false);
  });

  it("a resume replays from its afterCursor (or from the start without one)", () => {
    const { sessions } = tracker();
    sessions.admit("turn/started", at(5, { turnId: "t" }));
    const accepted = sessions.noteCommand("session/resume", { sessionId: S, afterCursor: `v:${S}:2` }, "c1");
    expect(sessions.lastViewCursor(S)).toBe(`v:${S}:5`); // not before the host accepts the resume
    accepted?.({});
    expect(sessions.lastViewCursor(S)).toBe(`v:${S}:2`);
    expect(sessions.admit("turn/started", at(3, { turnId: "t" })).deliver).toBe(true);
    sessions.noteCommand("session/resume", { sessionId: S }, "c2")?.({});
    expect(sessions.lastViewCursor(S)).toBeUndefined();
    expect(sessions.admit("turn/started", at(1, { turnId: "t" })).deliver).toBe(true);
  });

  it("delivers a terminal not yet recorded even with an old cursor, but nothing else about an ended turn", () => {
    const { turns, sessions } = tracker();
    sessions.admit("turn/started", at(4, { turnId: "t" }));
    expect(sessions.admit("turn/completed", ended("t", 2))).toEqual({ deliver: true });
    turns.record(ended("t", 2));
    expect(sessions.admit("turn/completed", ended("t", 2)).deliver).toBe(false);
    expect(sessions.admit("item/updated", item("t", 5))).toEqual({ deliver: false, problem: "item/updated for turn t after its turn/completed" });
  });

  it("reports, yet delivers, a terminal for a turn of a followed session that this connection never started, cancelled or saw", () => {
    const { sessions } = tracker();
    const stray = { deliver: true, problem: `turn/completed for turn x, which this connection never started, cancelled or saw in session ${S}` };
    expect(sessions.admit("turn/completed", ended("x", 1))).toEqual({ deliver: true }); // a session it does not follow: not its business
    sessions.noteCommand("turn/start", { sessionId: S, input: [] }, "started");
    sessions.noteCommand("turn/cancel", { sessionId: S, turnId: "cancelled" }, "c");
    sessions.admit("item/started", item("seen", 2));
    expect(sessions.admit("turn/completed", ended("x", 3))).toEqual(stray);
    for (const [turnId, n] of [
      ["started", 4],
      ["cancelled", 5],
      ["seen", 6],
    ] as const)
      expect(sessions.admit("turn/completed", ended(turnId, n))).toEqual({ deliver: true });
    sessions.noteCommand("session/resume", { sessionId: S, afterCursor: `v:${S}:6` }, "r");
    expect(sessions.admit("turn/completed", ended("y", 7))).toEqual({ deliver: true }); // a resume makes every turn of its session legitimate
  });

  it("remembers at most knownTurnCapacity turns, the oldest forgotten first", () => {
    const { sessions } = tracker(2);
    for (const commandId of ["t1", "t2", "t3"]) sessions.noteCommand("turn/start", { sessionId: S, input: [] }, commandId);
    expect(sessions.admit("turn/completed", ended("t1", 1)).problem).toMatch(/turn t1, which this connection never started/);
    expect(sessions.admit("turn/completed", ended("t3", 2))).toEqual({ deliver: true });
  });

  it("remembers at most sessionCapacity sessions, the least recently active forgotten first", () => {
    const { sessions } = tracker(10, 2);
    const on = (session: string, n: number) =>
      sessions.admit("turn/started", { sessionId: session, viewCursor: `v:${session}:${n}`, turnId: `${session}-${n}` });
    on("a", 1);
    on("b", 1);
    on("a", 2); // a is now the most recently active
    sessions.noteCommand("host/info", { sessionId: "c" }, "x");
    on("c", 1);
    expect([sessions.lastViewCursor("a"), sessions.lastViewCursor("b"), sessions.lastViewCursor("c")]).toEqual(["v:a:2", undefined, "v:c:1"]);
    // A forgotten session's next notification is taken as its first.
    expect(on("b", 1).deliver).toBe(true);
  });

  it("close() forgets followed sessions and known turns, and keeps the last cursors (a resume needs them)", () => {
    const { sessions } = tracker();
    sessions.noteCommand("turn/start", { sessionId: S, input: [] }, "t1");
    sessions.admit("turn/started", at(1, { turnId: "t1" }));
    expect(sessions.admit("turn/completed", ended("x", 2)).problem).toMatch(/never started/); // S is followed
    sessions.close();
    // No longer followed: a terminal of an unknown turn is not its business any more.
    expect(sessions.admit("turn/completed", ended("y", 3))).toEqual({ deliver: true });
    expect(sessions.lastViewCursor(S)).toBe(`v:${S}:3`);
  });

  it("past sessionCapacity, a forgotten session is no longer followed either", () => {
    const { sessions } = tracker(10, 1);
    sessions.noteCommand("host/info", { sessionId: S }, "x");
    expect(sessions.admit("turn/completed", ended("x", 1)).problem).toMatch(/never started/);
    sessions.noteCommand("host/info", { sessionId: "other" }, "y");
    expect(sessions.admit("turn/completed", ended("z", 2))).toEqual({ deliver: true });
  });

  it("a notification MSP does not define, with no session, has no cursor to check: delivered", () => {
    const { sessions } = tracker();
    expect(sessions.admit("vendor/ping", { text: "hi" })).toEqual({ deliver: true });
    expect(sessions.admit("vendor/ping", undefined)).toEqual({ deliver: true });
  });
});
