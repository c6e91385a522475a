/** Tests of restart recovery: open turns and items in a crashed host's logs are closed as "host restarted". */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readSessionLog } from "../../src/host/sessionLogReader.js";
import { SessionLog } from "../../src/host/sessionLog.js";
import { sessionLogPath } from "../../src/host/sessionLogRecord.js";
import { summarizeSessionLog } from "../../src/host/sessionLogSummary.js";
import { recoverSessions } from "../../src/host/sessionRecovery.js";

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
});
