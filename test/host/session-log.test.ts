/** Tests of the session log: durable appends, torn-line tolerance, and the summary a resume needs. */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSessionLog, SessionLog, sessionLogPath, summarizeSessionLog } from "../../src/host/session-log.js";

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
