/**
 * Finding 2 (a session log over 512 MiB stopped the host from starting), with real `muse-host`
 * processes: startup streams each log, so its peak memory is the same for a 20 MB and an 80 MB log;
 * a line over the 16 MiB bound is reported and skipped, not fatal; and `item/updated` records are
 * logged as deltas, so a tool printing N KB makes a log of O(N) whose replay is exactly what the
 * wire carried.
 */
import { closeSync, mkdirSync, openSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { uuidv7 } from "../../packages/protocol/src/uuidv7.js";
import { describe, expect, it } from "vitest";
import { fixture, useHostProcesses, type WireMessage } from "../host/hostProcess.js";
import { completedOf, createSession, peakRssOf, replayAfter, serving, shellModel } from "./hostHelpers.js";

const { start, tempDir } = useHostProcesses("muse-host-stream-");

const MB = 1024 * 1024;

/**
 * Writes `<data>/sessions/<id>.jsonl` of about `bytes`: a turn whose tool call was updated again
 * and again (each record carrying 4 KB of output, as logs written before deltas did), left open
 * as a crash would leave it. Returns the session id and its last cursor.
 */
function writeBigLog(data: string, bytes: number): { sessionId: string; last: number } {
  const sessionId = uuidv7();
  const turnId = uuidv7();
  const itemId = uuidv7();
  mkdirSync(join(data, "sessions"), { recursive: true });
  const fd = openSync(join(data, "sessions", `${sessionId}.jsonl`), "w");
  const at = Date.now();
  const item = {
    itemId,
    kind: "toolCall",
    turnId,
    revision: 1,
    status: "inProgress",
    recordedAt: new Date(at).toISOString(),
    tool: "shell",
    callId: "call_1",
    args: "{}",
    visibleOutput: "",
    truncated: false,
  };
  const note = (n: number, method: string, body: Record<string, unknown>) =>
    JSON.stringify({ type: "notification", at, n, method, params: { sessionId, viewCursor: `v:${sessionId}:${n}`, emittedAtMs: at, ...body } });
  let head = [
    JSON.stringify({ type: "session", at, sessionId, model: "default" }),
    JSON.stringify({ type: "turnAccepted", at, turnId, input: [], disposition: "started" }),
    JSON.stringify({ type: "turnStarted", at, turnId, turn: 0 }),
    note(1, "turn/started", { turnId, model: "default" }),
    note(2, "item/started", { item }),
  ].join("\n");
  let written = 0;
  let n = 2;
  const output = "x".repeat(4000);
  while (written < bytes) {
    const lines: string[] = head === "" ? [] : [head];
    head = "";
    for (let i = 0; i < 256; i++) {
      n += 1;
      lines.push(note(n, "item/updated", { item: { ...item, revision: n - 1, visibleOutput: `${n} ${output}` } }));
    }
    written += writeSync(fd, `${lines.join("\n")}\n`);
  }
  closeSync(fd);
  return { sessionId, last: n };
}

/** Starts a host on `data`, waits until it serves (recovery done), and returns its peak RSS. */
async function peakAfterRecovery(data: string): Promise<{ peak: number; stderr: string }> {
  const host = start(["--script", fixture("hello.json"), "--data", data]);
  await serving(host, 60_000);
  const peak = peakRssOf(host.child.pid!);
  const stderr = host.stderr;
  await host.stop();
  return { peak, stderr };
}

describe("finding 2: streaming recovery and coalesced item/updated", () => {
  it("finding 2: recovery's peak memory is the same for a 20 MB and an 80 MB session log", async () => {
    const small = tempDir();
    const large = tempDir();
    const s = writeBigLog(small, 20 * MB);
    const l = writeBigLog(large, 80 * MB);
    const a = await peakAfterRecovery(small);
    const b = await peakAfterRecovery(large);
    expect(a.stderr).toContain(`recovered session ${s.sessionId}: closed 1 turn(s)`);
    expect(b.stderr).toContain(`recovered session ${l.sessionId}: closed 1 turn(s)`);
    // Reading the log whole costs at least its size again (a string of 80 MB, then the lines).
    expect(b.peak - a.peak, `peak RSS ${(a.peak / MB).toFixed(1)} MB at 20 MB, ${(b.peak / MB).toFixed(1)} MB at 80 MB`).toBeLessThan(16 * MB);
  }, 120_000);

  it("finding 2: a log line over the 16 MiB bound is reported and skipped, not fatal; its cursor is not reused", async () => {
    const data = tempDir();
    const sessionId = uuidv7();
    const turnId = uuidv7();
    const at = Date.now();
    const note = (n: number, method: string, body: Record<string, unknown>) =>
      JSON.stringify({ type: "notification", at, n, method, params: { sessionId, viewCursor: `v:${sessionId}:${n}`, emittedAtMs: at, ...body } });
    const message = { itemId: uuidv7(), kind: "message", turnId, revision: 1, status: "inProgress", recordedAt: "x", text: "" };
    mkdirSync(join(data, "sessions"));
    writeFileSync(
      join(data, "sessions", `${sessionId}.jsonl`),
      [
        JSON.stringify({ type: "session", at, sessionId, model: "default" }),
        JSON.stringify({ type: "turnAccepted", at, turnId, input: [], disposition: "started" }),
        JSON.stringify({ type: "turnStarted", at, turnId, turn: 0 }),
        note(1, "turn/started", { turnId, model: "default" }),
        note(2, "item/started", { item: message }),
        note(3, "item/updated", { item: { ...message, revision: 2, text: "y".repeat(17 * MB) } }),
        note(4, "item/completed", { item: { ...message, revision: 3, status: "completed", text: "short" } }),
        note(5, "turn/completed", { turnId, terminal: "completed", reason: "completed", durationMs: 1 }),
        JSON.stringify({ type: "turnCompleted", at, turnId, terminal: "completed", reason: "completed" }),
        "",
      ].join("\n"),
    );
    const host = start(["--script", fixture("hello.json"), "--data", data]);
    await serving(host);
    const resume = host.send("session/resume", { sessionId });
    await host.waitFor((m) => m.id === resume);
    await host.waitFor(completedOf(turnId));
    expect(host.stderr).toMatch(new RegExp(`${sessionId}\\.jsonl: line 6 is \\d+ bytes, over the 16777216-byte limit: skipped`));
    expect(replayAfter(host, resume).map((m) => m.params?.["viewCursor"])).toEqual([1, 2, 4, 5].map((n) => `v:${sessionId}:${n}`));
    // The next notification takes cursor 6: the skipped line's 3 and the rest are never reused.
    const next = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    await host.waitFor(completedOf(next));
    expect(host.notifications("turn/started", next)[0]?.["viewCursor"]).toBe(`v:${sessionId}:6`);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 2: a tool printing N KB makes a log of O(N), and a resume re-sends exactly what the wire carried", async () => {
    const data = tempDir();
    const N = 240 * 1000;
    // 240 lines of 1000 bytes, over a second or two: dozens of item/delta, each carrying only what was printed since the last.
    const model = shellModel(
      data,
      "printer",
      `i=0; while [ $i -lt 240 ]; do i=$((i+1)); printf '%0999d\\n' $i; if [ $((i % 4)) -eq 0 ]; then sleep 0.02; fi; done`,
    );
    const host = start(["--script", model, "--data", data, "--output-cap-bytes", "1000000"]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    await host.waitFor(completedOf(turnId), 15_000);
    const live = host.wire.filter((m) => m.method !== undefined && m.id === undefined);
    const updates = live.filter((m) => m.method === "item/delta");
    const onTheWire = updates.reduce((sum, m) => sum + JSON.stringify(m).length, 0);
    expect(updates.length).toBeGreaterThanOrEqual(10);
    // Linear on the wire (MSP 2.0): the output once, plus each delta's envelope (under 1 KB).
    expect(onTheWire).toBeLessThan(N + 1000 * updates.length);
    // The appends are the output in order; item/completed may add what was printed after the last one.
    const completedOutput = String(
      (
        live.find((m) => m.method === "item/completed" && (m.params?.["item"] as { kind?: string }).kind === "toolCall")?.params?.["item"] as {
          visibleOutput: string;
        }
      ).visibleOutput,
    );
    const appended = updates.filter((m) => m.params?.["field"] === "visibleOutput").map((m) => String(m.params?.["append"]));
    expect(completedOutput.startsWith(appended.join(""))).toBe(true);
    const size = statSync(join(data, "sessions", `${sessionId}.jsonl`)).size;
    // The output once as deltas, once in item/completed, plus the fixed fields of each record.
    expect(size).toBeLessThan(2 * N + 1000 * live.length);
    expect(await host.stop()).toEqual({ code: 0, signal: null });

    // A new host reads the deltas back from disk: the replay equals the live stream, message for message.
    const again = start(["--script", fixture("hello.json"), "--data", data]);
    const resume = again.send("session/resume", { sessionId });
    await again.waitFor(completedOf(turnId));
    const replayed = replayAfter(again, resume);
    const same = (ms: WireMessage[]) => ms.map((m) => JSON.stringify(m));
    expect(same(replayed)).toEqual(same(live));
    expect(await again.stop()).toEqual({ code: 0, signal: null });
  });
});
