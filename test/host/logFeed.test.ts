/**
 * The pieces of feeding from the log: a session-log read resumed from a kept position (deltas rebuilt
 * from the state it carries) reads what one whole read reads; the stdio transport honours its
 * output's backpressure and says what failed; a feed sends one record at a time within the bound.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { feedBatch, replayStart, type LogFeed } from "../../packages/host/src/server/logFeed.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { resumePoint } from "../../packages/host/src/server/resumePoint.js";
import { logStart, readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath, type SessionLogRecord } from "../../packages/host/src/log/sessionLogRecord.js";
import { createStdioTransport } from "../../packages/host/src/transport/stdioTransport.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A session log of one streamed message: item/started, `chunks` item/updated (logged as deltas), item/completed, turn/completed. */
async function streamedLog(chunks: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "muse-feed-"));
  dirs.push(dir);
  const path = sessionLogPath(dir, "s1");
  const log = SessionLog.open(path);
  log.append({ type: "session", at: 1, sessionId: "s1", model: "default" });
  let n = 0;
  let text = "";
  const note = (method: "item/started" | "item/updated" | "item/completed", status: string) => {
    n += 1;
    const item = { itemId: "i1", kind: "message", turnId: "t1", revision: n, status, recordedAt: "x", text };
    log.write({ type: "notification", at: n, n, method, params: { sessionId: "s1", viewCursor: `v:s1:${n}`, emittedAtMs: n, item } });
  };
  note("item/started", "inProgress");
  for (let i = 0; i < chunks; i++) {
    text += `chunk ${i} é😀; `;
    note("item/updated", "inProgress");
  }
  note("item/completed", "completed");
  n += 1;
  log.write({
    type: "notification",
    at: n,
    n,
    method: "turn/completed",
    params: { sessionId: "s1", viewCursor: `v:s1:${n}`, turnId: "t1", terminal: "completed" },
  });
  await log.durable();
  log.close();
  return path;
}

const notifications = (records: Iterable<SessionLogRecord | { type: "skipped" }>) =>
  [...records].filter((r): r is Extract<SessionLogRecord, { type: "notification" }> => r.type === "notification");

describe("readSessionLog from a kept position", () => {
  it("read a cursor at a time, it yields what one whole read yields, deltas rebuilt from the state the position carries", async () => {
    const path = await streamedLog(40);
    const whole = notifications(readSessionLog(path));
    expect(whole).toHaveLength(43);
    // On disk the updates are deltas (the old format: each extends a text logged on an earlier line).
    expect(readFileSync(path, "utf8").match(/"delta":\{"field":"text","from":\d+\}/g)).toHaveLength(40);
    expect(whole.some((r) => r.delta !== undefined)).toBe(false);
    const at = logStart();
    const pieces: unknown[] = [];
    for (let upTo = 1; upTo <= 43; upTo++) {
      const before = at.offset;
      pieces.push(...notifications(readSessionLog(path, { from: at, upTo })));
      expect(at.n).toBe(upTo);
      expect(at.offset).toBeGreaterThan(before);
    }
    expect(pieces).toEqual(whole);
    // At the end: nothing more, and the position stays.
    const end = at.offset;
    expect([...readSessionLog(path, { from: at })]).toEqual([]);
    expect(at.offset).toBe(end);
  });

  it("a loop that breaks leaves the record it broke on unread; a line without its newline is not read yet", async () => {
    const path = await streamedLog(3);
    const at = logStart();
    for (const record of readSessionLog(path, { from: at })) if (record.type === "notification" && record.n === 2) break;
    expect(at.n).toBe(1);
    expect(notifications(readSessionLog(path, { from: at, upTo: 2 })).map((r) => r.n)).toEqual([2]);
    const end = notifications(readSessionLog(path, { from: at })).at(-1)?.n;
    expect(end).toBe(6);
    const offset = at.offset;
    appendFileSync(path, '{"type":"model","at":9,"model":"b","previousModel":"default"}');
    expect([...readSessionLog(path, { from: at })]).toEqual([]);
    expect(at.offset).toBe(offset);
    appendFileSync(path, "\n");
    expect([...readSessionLog(path, { from: at })].map((r) => r.type)).toEqual(["model"]);
  });

  it("replayStart counts without holding, and its position starts the replay at the first record after the cursor", async () => {
    const path = await streamedLog(20);
    const read = (from: ReturnType<typeof logStart>, upTo: number) => readSessionLog(path, { from, upTo });
    const { replayed, position } = replayStart(read, 10, 20);
    expect(replayed).toBe(10);
    const rest = notifications(readSessionLog(path, { from: position, upTo: 20 }));
    expect(rest.map((r) => r.n)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect(rest).toEqual(notifications(readSessionLog(path)).slice(10, 20));
  });

  it("the resume plan's one scan: replayStart given it reads only what was logged after it, and starts where a whole scan would", async () => {
    const path = await streamedLog(20); // cursors 1..23
    const scan = logStart();
    const point = resumePoint(readSessionLog(path, { from: scan }), 10, scan);
    expect(point.scan.replayed).toBe(13);
    const log = SessionLog.open(path, { mode: "existing" });
    for (const n of [24, 25, 26]) {
      log.write({ type: "notification", at: n, n, method: "turn/started", params: { sessionId: "s1", viewCursor: `v:s1:${n}`, turnId: `t${n}` } });
    }
    await log.durable();
    log.close();
    const offsets: number[] = [];
    const read = (from: ReturnType<typeof logStart>, upTo: number) => {
      offsets.push(from.offset);
      return readSessionLog(path, { from, upTo });
    };
    const planned = replayStart(read, 10, 26, point.scan);
    expect(offsets).toEqual([point.scan.end.offset]); // the tail only
    const whole = replayStart((from, upTo) => readSessionLog(path, { from, upTo }), 10, 26);
    expect(planned.replayed).toBe(16);
    expect(planned).toEqual(whole);
    // Nothing logged since the plan: no read at all.
    offsets.length = 0;
    expect(replayStart(read, 10, 23, point.scan)).toEqual(replayStart((from, upTo) => readSessionLog(path, { from, upTo }), 10, 23));
    expect(offsets).toEqual([]);
    // Another start than the plan's scans again, from the log's start.
    expect(replayStart(read, 12, 26, point.scan).replayed).toBe(14);
    expect(offsets).toEqual([0]);
  });

  it("feedBatch sends within the bound, leaves the record that does not fit unread, and ends caught up", async () => {
    const path = await streamedLog(30);
    const feed: LogFeed = { sessionId: "s1", position: logStart(), upTo: 33, requests: [{ at: 5, message: "ask" }] };
    let cursor = 0;
    let room = 4;
    const sent: unknown[] = [];
    const step = {
      read: (from: ReturnType<typeof logStart>, upTo: number) => readSessionLog(path, { from, upTo }),
      target: 33,
      cursor: () => cursor,
      fits: () => room > 0,
      send: (message: unknown, record: { n: number }) => {
        room -= 1;
        cursor = record.n;
        sent.push((message as { params: { viewCursor: string } }).params.viewCursor);
      },
      budgetBytes: 1 << 20,
    };
    expect(feedBatch(feed, step, (m) => sent.push(m))).toBe("full");
    expect(sent).toEqual(["v:s1:1", "v:s1:2", "v:s1:3", "v:s1:4"]);
    room = 100;
    expect(feedBatch(feed, step, (m) => sent.push(m))).toBe("caughtUp");
    expect(sent.slice(4, 7)).toEqual(["v:s1:5", "ask", "v:s1:6"]);
    expect(cursor).toBe(33);
    expect(sent).toHaveLength(34);
  });
});

describe("createStdioTransport backpressure", () => {
  it("writes nothing more once the output is full, holds what is sent meanwhile, and writes it on drain", async () => {
    const chunks: string[] = [];
    let release: (() => void) | undefined;
    const output = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk.toString());
        release = () => callback();
      },
    });
    const transport = createStdioTransport(new PassThrough(), output, { maxHeldBytes: 1000 });
    let drains = 0;
    transport.onDrain?.(() => (drains += 1));
    expect(transport.maxHeldBytes).toBe(1000);
    transport.send({ a: "x".repeat(40) });
    await Promise.resolve();
    expect(chunks).toHaveLength(1);
    transport.send({ b: 1 });
    transport.send({ c: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    // The output returned false: the two lines wait in the transport, counted as held.
    expect(chunks).toHaveLength(1);
    expect(transport.heldBytes?.()).toBe(`{"a":"${"x".repeat(40)}"}\n`.length + '{"b":1}\n{"c":2}\n'.length);
    release?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toEqual([`{"a":"${"x".repeat(40)}"}\n`, '{"b":1}\n{"c":2}\n']);
    expect(drains).toBeGreaterThan(0);
    release?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(transport.heldBytes?.()).toBe(0);
    expect(transport.heldBytesHighWater).toBeGreaterThanOrEqual(58);
  });

  it("an output error closes it and says what failed, not that stdin closed", async () => {
    const output = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error("no buffer space available"), { code: "ENOBUFS" }));
      },
    });
    const transport = createStdioTransport(new PassThrough(), output);
    const why = new Promise<string | undefined>((resolve) => transport.onClose(resolve));
    transport.send({ hello: 1 });
    expect(await why).toBe("stdout failed: ENOBUFS: no buffer space available");
    expect(transport.writable).toBe(false);
    expect(transport.heldBytes?.()).toBe(0);
  });
});
