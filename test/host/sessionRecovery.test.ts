/** Tests of restart recovery: open turns and items in a crashed host's logs are closed as "host restarted". */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { summarizeSessionLog } from "../../packages/host/src/log/sessionLogSummary.js";
import { recoverSessions } from "../../packages/host/src/log/sessionRecovery.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("recoverSessions", () => {
  it("closes open items (failed) then open turns (failed: host restarted) with fresh cursors, once", () => {
    const data = mkdtempSync(join(tmpdir(), "muse-recover-"));
    dirs.push(data);
    const path = sessionLogPath(data, "s1");
    const log = SessionLog.open(path);
    const item = { itemId: "i1", kind: "message", turnId: "t1", revision: 3, status: "inProgress", recordedAt: "x", text: "Hel" };
    log.append({ type: "session", at: 1, sessionId: "s1", model: "default" });
    log.append({ type: "turnAccepted", at: 2, turnId: "t1", input: [], disposition: "started" });
    log.append({ type: "turnStarted", at: 3, turnId: "t1", turn: 0 });
    log.append({ type: "notification", at: 3, n: 1, method: "turn/started", params: { turnId: "t1" } });
    log.append({ type: "notification", at: 4, n: 2, method: "item/started", params: { item } });
    log.append({ type: "turnAccepted", at: 5, turnId: "t2", input: [], disposition: "queued" });
    log.close();
    // A complete session is left alone.
    const other = SessionLog.open(sessionLogPath(data, "s2"));
    other.append({ type: "session", at: 1, sessionId: "s2", model: "default" });
    other.close();

    const recovered = recoverSessions(data);
    expect(recovered).toEqual([{ sessionId: "s1", closedTurns: ["t1", "t2"], closedItems: ["i1"] }]);
    const notes = [...readSessionLog(path)].filter((r) => r.type === "notification").slice(2);
    expect(notes.map((r) => (r.type === "notification" ? [r.n, r.method] : []))).toEqual([
      [3, "item/completed"],
      [4, "turn/completed"],
      [5, "turn/completed"],
    ]);
    const first = notes[0];
    expect(first?.type === "notification" && first.params).toMatchObject({
      sessionId: "s1",
      viewCursor: "v:s1:3",
      item: { itemId: "i1", status: "failed", revision: 4, text: "Hel", interrupted: true },
    });
    const last = notes[2];
    expect(last?.type === "notification" && last.params).toMatchObject({ turnId: "t2", terminal: "failed", reason: "host restarted" });
    expect(summarizeSessionLog(readSessionLog(path))?.openTurns).toEqual([]);
    expect(recoverSessions(data)).toEqual([]); // idempotent: nothing left open
  });

  it("closes an item streamed as MSP 2.0 deltas and patches with its folded state: the whole text, the patched fields", () => {
    const data = mkdtempSync(join(tmpdir(), "muse-recover-"));
    dirs.push(data);
    const path = sessionLogPath(data, "s1");
    const log = SessionLog.open(path);
    const base = { sessionId: "s1", emittedAtMs: 4 };
    const call = {
      itemId: "c1",
      kind: "toolCall",
      turnId: "t1",
      revision: 1,
      status: "inProgress",
      recordedAt: "r1",
      tool: "shell",
      callId: "call_1",
      args: "{}",
      visibleOutput: "",
      truncated: false,
    };
    const delta = (n: number, revision: number, append: string) => ({
      type: "notification" as const,
      at: 4,
      n,
      method: "item/delta" as const,
      params: { ...base, viewCursor: `v:s1:${n}`, turnId: "t1", itemId: "c1", revision, field: "visibleOutput", append, recordedAt: `r${revision}` },
    });
    log.append({ type: "session", at: 1, sessionId: "s1", model: "default" });
    log.append({ type: "turnAccepted", at: 2, turnId: "t1", input: [], disposition: "started" });
    log.append({ type: "turnStarted", at: 3, turnId: "t1", turn: 0 });
    log.append({ type: "notification", at: 4, n: 1, method: "item/started", params: { ...base, viewCursor: "v:s1:1", item: call } });
    log.append({
      type: "notification",
      at: 4,
      n: 2,
      method: "item/updated",
      params: { ...base, viewCursor: "v:s1:2", item: { itemId: "c1", turnId: "t1", kind: "toolCall", revision: 2, recordedAt: "r2", approval: "approved" } },
    });
    log.append(delta(3, 3, "migrating 1/3\n"));
    log.append(delta(4, 4, "migrating 2/3\n"));
    log.close();

    expect(recoverSessions(data)).toEqual([{ sessionId: "s1", closedTurns: ["t1"], closedItems: ["c1"] }]);
    const completed = [...readSessionLog(path)].find((r) => r.type === "notification" && r.method === "item/completed");
    expect(completed?.type === "notification" && completed.params["item"]).toEqual({
      ...call,
      approval: "approved",
      visibleOutput: "migrating 1/3\nmigrating 2/3\n",
      revision: 5,
      status: "failed",
      recordedAt: expect.any(String) as unknown,
      failureReason: "host restarted",
    });
  });
});
