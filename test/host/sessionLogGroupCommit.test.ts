/** Tests of the session log's group commit: callbacks only after a sync, in write order, one sync per batch, settle and close. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function openLog(): SessionLog {
  const d = mkdtempSync(join(tmpdir(), "muse-group-"));
  dirs.push(d);
  return SessionLog.open(sessionLogPath(d, "s1"), { mode: "create" });
}
const turnStarted = (turn: number) => ({ type: "turnStarted" as const, at: turn, turnId: `t${turn}`, turn });
const turns = (path: string) =>
  readFileSync(path, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => (JSON.parse(l) as { turn: number }).turn);

describe("SessionLog group commit", () => {
  it("writes a turn's records together at its end, calls back only after the sync, in write order, all of one batch together", async () => {
    const log = openLog();
    const called: number[] = [];
    let atFirstMicrotask = -1;
    for (let i = 0; i < 100; i++) {
      log.write(turnStarted(i), () => {
        if (called.length === 0) queueMicrotask(() => (atFirstMicrotask = called.length));
        called.push(i);
      });
    }
    expect(called).toEqual([]); // never synchronously: nothing is durable yet
    expect(log.unsynced).toBe(100);
    await new Promise((resolve) => setImmediate(resolve)); // the end of this event-loop turn
    expect(turns(log.path)).toHaveLength(100); // written, in order (a crash of the process alone keeps them)
    expect(called).toEqual([]); // their sync has started, and not returned yet
    expect(log.unsynced).toBe(100);
    await log.durable();
    expect(called).toEqual([...Array(100).keys()]);
    expect(atFirstMicrotask).toBe(100); // one sync covered the whole batch: its callbacks ran in one go
    expect(log.unsynced).toBe(0);
    log.close();
  });

  it("records written while a sync is in flight share the next one; order holds across batches", async () => {
    const log = openLog();
    const called: number[] = [];
    log.write(turnStarted(0), () => called.push(0));
    await new Promise((resolve) => setImmediate(resolve)); // the first sync has started
    for (let i = 1; i < 50; i++) log.write(turnStarted(i), () => called.push(i));
    await log.durable();
    expect(called).toEqual([...Array(50).keys()]);
    log.close();
  });

  it("settle() makes everything durable now and runs the waiting callbacks before it returns; append() settles too", () => {
    const log = openLog();
    const called: string[] = [];
    log.write(turnStarted(0), () => called.push("a"));
    log.write(turnStarted(1), () => called.push("b"));
    log.settle();
    expect(called).toEqual(["a", "b"]);
    log.write(turnStarted(2), () => called.push("c"));
    log.append(turnStarted(3)); // an acknowledged command: earlier records go out first
    expect(called).toEqual(["a", "b", "c"]);
    expect(log.unsynced).toBe(0);
    log.settle(); // nothing waits: a no-op
    log.close();
    expect(turns(log.path)).toEqual([0, 1, 2, 3]);
  });

  it("close() with records waiting makes them durable and calls them back first", async () => {
    const log = openLog();
    const called: number[] = [];
    log.write(turnStarted(0), () => called.push(0));
    log.close();
    expect(called).toEqual([0]);
    await new Promise((resolve) => setImmediate(resolve)); // the scheduled sync finds a closed log: nothing twice
    expect(called).toEqual([0]);
    expect(() => log.write(turnStarted(1))).toThrow(/closed/);
  });

  it("a callback that settles the log again (a command answered while notifications go out) keeps the order and runs nothing twice", async () => {
    const log = openLog();
    const called: number[] = [];
    for (let i = 0; i < 3; i++) {
      log.write(turnStarted(i), () => {
        called.push(i);
        if (i === 0) {
          // Sending notification 0 makes the client's next command arrive: it writes and settles.
          log.write(turnStarted(10), () => called.push(10));
          log.settle();
          called.push(-1); // the command's answer: after every notification written before it
        }
      });
    }
    await new Promise((resolve) => setImmediate(resolve)); // 0..2 are in flight now
    log.write(turnStarted(3), () => called.push(3));
    await log.durable();
    expect(called).toEqual([0, 1, 2, 3, 10, -1]);
    log.close();
  });

  it("a sync in flight when settle() ran is superseded: no callback runs twice", async () => {
    const log = openLog();
    const called: number[] = [];
    log.write(turnStarted(0), () => called.push(0));
    await new Promise((resolve) => setImmediate(resolve)); // async sync in flight
    log.write(turnStarted(1), () => called.push(1));
    log.settle();
    expect(called).toEqual([0, 1]);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the superseded sync returns
    expect(called).toEqual([0, 1]);
    log.close();
  });
});
