/** Tests of the session log: durable appends, torn-line tolerance, and the summary a resume needs. */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LogFilePool, LogUnavailableError } from "../../packages/host/src/log/logFilePool.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { sessionLogPath, type SessionLogRecord } from "../../packages/host/src/log/sessionLogRecord.js";
import { summarizeSessionLog } from "../../packages/host/src/log/sessionLogSummary.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "muse-log-"));
  dirs.push(d);
  return d;
}

describe("SessionLog", () => {
  it("appends one JSON line per record under <data>/sessions", () => {
    const data = tempDir();
    const path = sessionLogPath(data, "s1");
    expect(path).toBe(join(data, "sessions", "s1.jsonl"));
    const log = SessionLog.open(path);
    log.append({ type: "session", at: 1, sessionId: "s1", model: "default" });
    log.append({ type: "turnAccepted", at: 2, turnId: "t1", input: [], disposition: "started" });
    log.close();
    expect(() => log.append({ type: "turnStarted", at: 3, turnId: "t1", turn: 0 })).toThrow(/closed/);
    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(["session", "turnAccepted"]);
  });

  it("skips a torn last line and starts the next append on a fresh line", () => {
    const path = sessionLogPath(tempDir(), "s1");
    const log = SessionLog.open(path);
    log.append({ type: "session", at: 1, sessionId: "s1", model: "default" });
    log.close();
    appendFileSync(path, '{"type":"turnAcc');
    const reopened = SessionLog.open(path);
    reopened.append({ type: "model", at: 2, model: "b", previousModel: "default" });
    reopened.close();
    expect([...readSessionLog(path)].map((r) => r.type)).toEqual(["session", "model"]);
  });
});

describe("summarizeSessionLog", () => {
  it("folds model, cursor, started turns, terminals, open turns and open items", () => {
    const item = {
      itemId: "i1",
      kind: "toolCall",
      turnId: "t2",
      revision: 2,
      status: "inProgress",
      recordedAt: "x",
      tool: "shell",
      callId: "c",
      args: "{}",
      visibleOutput: "so far",
      truncated: false,
    };
    const summary = summarizeSessionLog([
      { type: "session", at: 1, sessionId: "s1", model: "a" },
      { type: "model", at: 2, model: "b", previousModel: "a" },
      { type: "turnAccepted", at: 3, turnId: "t1", input: [], disposition: "started" },
      { type: "turnStarted", at: 4, turnId: "t1", turn: 0 },
      { type: "notification", at: 5, n: 1, method: "turn/completed", params: { turnId: "t1", terminal: "completed", reason: "completed" } },
      { type: "turnCompleted", at: 5, turnId: "t1", terminal: "completed", reason: "completed" },
      { type: "turnAccepted", at: 6, turnId: "t2", input: [], disposition: "started" },
      { type: "turnStarted", at: 7, turnId: "t2", turn: 1 },
      { type: "notification", at: 8, n: 2, method: "item/started", params: { item: { ...item, revision: 1 } } },
      { type: "notification", at: 9, n: 3, method: "item/updated", params: { item } },
      { type: "turnAccepted", at: 10, turnId: "t3", input: [], disposition: "queued" },
    ]);
    expect(summary).toBeDefined();
    expect(summary?.model).toBe("b");
    expect(summary?.lastCursor).toBe(3);
    expect(summary?.startedTurns).toBe(2);
    expect([...(summary?.terminals.keys() ?? [])]).toEqual(["t1"]);
    expect(summary?.openTurns).toEqual([
      { turnId: "t2", since: 7, started: true },
      { turnId: "t3", since: 10, started: false },
    ]);
    expect(summary?.openItems.get("i1")).toMatchObject({ revision: 2, visibleOutput: "so far" });
    expect([...(summary?.accepted.entries() ?? [])]).toEqual([
      ["t1", "started"],
      ["t2", "started"],
      ["t3", "queued"],
    ]);
  });

  it("treats a logged turn/completed notification as closing its turn even without the record", () => {
    const summary = summarizeSessionLog([
      { type: "session", at: 1, sessionId: "s1", model: "a" },
      { type: "turnAccepted", at: 2, turnId: "t1", input: [], disposition: "started" },
      { type: "notification", at: 3, n: 1, method: "turn/completed", params: { turnId: "t1", terminal: "cancelled", reason: "x" } },
    ]);
    expect(summary?.openTurns).toEqual([]);
  });

  it("is undefined without a session record", () => {
    expect(summarizeSessionLog([{ type: "model", at: 1, model: "a", previousModel: "b" }])).toBeUndefined();
  });
});

describe("item/updated deltas", () => {
  const tool = {
    itemId: "i1",
    kind: "toolCall",
    turnId: "t1",
    revision: 1,
    status: "inProgress",
    recordedAt: "r",
    tool: "shell",
    callId: "c",
    args: "{}",
    visibleOutput: "",
    truncated: false,
  };
  const note = (n: number, method: "item/started" | "item/updated" | "item/completed", item: Record<string, unknown>): SessionLogRecord => ({
    type: "notification",
    at: n,
    n,
    method,
    params: { sessionId: "s1", viewCursor: `v:s1:${n}`, emittedAtMs: n, item },
  });

  it("logs only what an update appends, and reads back every revision exactly as written", () => {
    const path = sessionLogPath(tempDir(), "s1");
    const log = SessionLog.open(path);
    const written: SessionLogRecord[] = [{ type: "session", at: 0, sessionId: "s1", model: "m" }, note(1, "item/started", tool)];
    let output = "";
    for (let r = 2; r <= 50; r++) {
      output += `line ${r} ${"x".repeat(100)}\n`;
      written.push(note(r, "item/updated", { ...tool, revision: r, visibleOutput: output, ...(r === 30 ? { approval: "pending" } : {}) }));
    }
    written.push(note(51, "item/updated", { ...tool, revision: 51, visibleOutput: "rewritten" })); // not an extension: logged whole
    written.push(note(52, "item/completed", { ...tool, revision: 52, status: "completed", visibleOutput: "rewritten" }));
    for (const record of written) log.append(record);
    log.close();
    expect(statSync(path).size).toBeLessThan(output.length + 50 * 400); // the output once, not 49 times
    const lines = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { delta?: unknown });
    expect(lines.filter((l) => l.delta !== undefined)).toHaveLength(49);
    expect([...readSessionLog(path)].map((r) => JSON.stringify(r))).toEqual(written.map((r) => JSON.stringify(r)));
  });

  it("a delta whose base was lost (its line over the bound) is skipped, not guessed; its cursor still counts", () => {
    const path = sessionLogPath(tempDir(), "s1");
    const log = SessionLog.open(path);
    log.append({ type: "session", at: 0, sessionId: "s1", model: "m" });
    log.append(note(1, "item/started", { ...tool, visibleOutput: "" }));
    log.append(note(2, "item/updated", { ...tool, revision: 2, visibleOutput: "y".repeat(500) }));
    log.append(note(3, "item/updated", { ...tool, revision: 3, visibleOutput: `${"y".repeat(500)}more` }));
    log.close();
    const problems: string[] = [];
    const records = [...readSessionLog(path, { maxLineBytes: 400, onProblem: (p) => problems.push(p) })];
    expect(records.map((r) => (r.type === "notification" ? r.n : r.type === "skipped" ? `skipped ${r.n}` : r.type))).toEqual([
      "session",
      1,
      "skipped 2",
      "skipped 3",
    ]);
    expect(problems).toHaveLength(2);
    expect(summarizeSessionLog(records)?.lastCursor).toBe(3);
  });
});

describe("LogFilePool", () => {
  it("keeps at most `capacity` idle logs open, reopens the same file on demand, and never another one", () => {
    const data = tempDir();
    const pool = new LogFilePool({ capacity: 2 });
    const logs = ["a", "b", "c"].map((id) => SessionLog.open(sessionLogPath(data, id), { pool, mode: "create" }));
    expect(pool.idleCount).toBe(2);
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    for (const [i, log] of logs.entries()) log.append({ type: "session", at: i, sessionId: "abc"[i] ?? "", model: "m" });
    expect(fds()).toBe(before); // one reopened, one closed: still two
    logs[0]?.hold(); // a turn uses it: held outside the cache once (re)opened
    logs[0]?.append({ type: "model", at: 8, model: "n", previousModel: "m" });
    logs[1]?.append({ type: "model", at: 9, model: "n", previousModel: "m" });
    logs[2]?.append({ type: "model", at: 9, model: "n", previousModel: "m" });
    expect(pool.idleCount).toBe(2);
    expect(fds()).toBe(before + 1);
    logs[0]?.release();
    expect(pool.idleCount).toBe(2);
    // A log replaced under the host is not written to.
    const path = sessionLogPath(data, "b");
    logs[1]?.close();
    const b = SessionLog.open(path, { pool, mode: "existing" });
    const d = SessionLog.open(sessionLogPath(data, "d"), { pool });
    const e = SessionLog.open(sessionLogPath(data, "e"), { pool }); // b's descriptor is evicted
    unlinkSync(path);
    writeFileSync(path, "planted\n");
    expect(() => b.append({ type: "model", at: 11, model: "p", previousModel: "o" })).toThrow(/was replaced by another file, or changed by another writer/);
    expect(readFileSync(path, "utf8")).toBe("planted\n");
    for (const log of [...logs, b, d, e]) log.close();
  });

  it("out of descriptors, closes half the idle ones and retries once; then fails with LogUnavailableError", () => {
    const pool = new LogFilePool({ capacity: 4 });
    const data = tempDir();
    const logs = ["a", "b", "c", "d"].map((id) => SessionLog.open(sessionLogPath(data, id), { pool }));
    let calls = 0;
    const emfile = Object.assign(new Error("EMFILE: too many open files"), { code: "EMFILE" });
    expect(
      pool.open("x", () => {
        if (calls++ === 0) throw emfile;
        return "opened";
      }),
    ).toBe("opened");
    expect(pool.idleCount).toBe(2);
    expect(() =>
      pool.open("x", () => {
        throw emfile;
      }),
    ).toThrow(LogUnavailableError);
    for (const log of logs) log.close();
  });
});
