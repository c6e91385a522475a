/**
 * Tests of the notification encoder: its log line and wire text are byte for byte what
 * `JSON.stringify` makes of the record (as a delta when an `item/updated` extends its item's last
 * logged text) and of `notificationMessage(method, params)`, for every shape and character, and a
 * log written through it reads back as the records written.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { notificationMessage } from "../../packages/host/src/server/jsonRpc.js";
import { NotificationEncoder, type NotificationRecord } from "../../packages/host/src/log/notificationEncoder.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { sessionLogPath, type SessionLogRecord } from "../../packages/host/src/log/sessionLogRecord.js";
import { seededRandom } from "../helpers/seededRandom.js";

/** The reference: the log line as the session log wrote it before the encoder, by whole serialization. */
class ReferenceEncoder {
  readonly #items = new Map<string, string>();

  encode(record: NotificationRecord): { line: string; wire: string } {
    const wire = JSON.stringify(notificationMessage(record.method, record.params));
    const item = record.params["item"] as Record<string, unknown> | undefined;
    if (typeof item !== "object" || item === null || typeof item["itemId"] !== "string") return { line: JSON.stringify(record), wire };
    const itemId = item["itemId"];
    if (record.method === "item/completed") {
      this.#items.delete(itemId);
      return { line: JSON.stringify(record), wire };
    }
    const field = item["kind"] === "toolCall" ? "visibleOutput" : "text";
    const value = item[field];
    if (typeof value !== "string") return { line: JSON.stringify(record), wire };
    const base = this.#items.get(itemId);
    this.#items.set(itemId, value);
    if (record.method !== "item/updated" || base === undefined || !value.startsWith(base)) return { line: JSON.stringify(record), wire };
    const params = { ...record.params, item: { ...item, [field]: value.slice(base.length) } };
    return { line: JSON.stringify({ ...record, params, delta: { field, from: base.length } }), wire };
  }
}

/** Characters that JSON escapes or treats specially, surrogate pairs (split across chunks too), lone surrogates. */
const ALPHABET = ["a", "b", " ", "é", '"', "\\", "\n", "\t", "\u0000", "\u001f", "\u2028", "\ud83d\ude00", "\ud83d", "\ude00", "/", "<", "x"];

const sessionId = "0192f000-0000-7000-8000-000000000000";
let n = 0;
function note(method: NotificationRecord["method"], item: Record<string, unknown>, extra: Record<string, unknown> = {}): NotificationRecord {
  n += 1;
  const at = 1_764_519_009_000 + n;
  return { type: "notification", at, n, method, params: { sessionId, viewCursor: `v:${sessionId}:${n}`, emittedAtMs: at, item, ...extra } };
}

function expectSame(encoder: NotificationEncoder, reference: ReferenceEncoder, record: NotificationRecord): void {
  const got = encoder.encode(record);
  const want = reference.encode(record);
  expect(got.line).toBe(want.line);
  expect(got.wire).toBe(want.wire);
}

describe("NotificationEncoder", () => {
  it("writes what JSON.stringify writes, for random streams of text and tool items (200 seeds)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = seededRandom(seed);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
      const encoder = new NotificationEncoder();
      const reference = new ReferenceEncoder();
      const open = new Map<string, Record<string, unknown>>();
      try {
        for (let step = 0; step < 80; step++) {
          const roll = next();
          if (open.size === 0 || roll < 0.1) {
            const itemId = `i${seed}-${step}`;
            const tool = next() < 0.4;
            const item: Record<string, unknown> = tool
              ? {
                  itemId,
                  kind: "toolCall",
                  turnId: "t",
                  revision: 1,
                  status: "inProgress",
                  recordedAt: "r",
                  tool: "shell",
                  callId: "c",
                  args: '{"visibleOutput":""}',
                  visibleOutput: "",
                  truncated: false,
                }
              : { itemId, turnId: "t", revision: 1, status: "inProgress", recordedAt: "r", text: "", kind: pick(["message", "reasoning"]) };
            open.set(itemId, item);
            expectSame(encoder, reference, note("item/started", item));
          } else if (roll < 0.85) {
            const [itemId, item] = pick([...open]);
            const field = item["kind"] === "toolCall" ? "visibleOutput" : "text";
            const chunk = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(ALPHABET)).join("");
            // Mostly an extension; now and then a replaced text, an optional field, a nested object.
            const text = next() < 0.1 ? chunk : (item[field] as string) + chunk;
            const updated: Record<string, unknown> = {
              ...item,
              [field]: text,
              revision: (item["revision"] as number) + 1,
              recordedAt: next() < 0.5 ? item["recordedAt"] : `r${step}`,
            };
            if (next() < 0.1) updated["approval"] = pick(["pending", "approved", undefined]);
            if (next() < 0.05) updated["error"] = { name: "E", text: "", visibleOutput: "" };
            open.set(itemId, updated);
            expectSame(encoder, reference, note("item/updated", updated));
          } else {
            const [itemId, item] = pick([...open]);
            open.delete(itemId);
            const done = { ...item, status: "completed", revision: (item["revision"] as number) + 1, interrupted: next() < 0.5 ? true : undefined };
            expectSame(encoder, reference, note("item/completed", done));
          }
        }
      } catch (error) {
        throw new Error(`seed ${seed}: ${(error as Error).message}`, { cause: error });
      }
    }
  });

  it("serializes whole what is not the common shape: other params, no item, a toJSON, a non-finite number, a non-string text", () => {
    const encoder = new NotificationEncoder();
    const reference = new ReferenceEncoder();
    const item = { itemId: "i1", turnId: "t", revision: 1, status: "inProgress", recordedAt: "r", text: "ab", kind: "message" };
    expectSame(encoder, reference, note("item/started", item));
    expectSame(encoder, reference, note("item/updated", { ...item, text: "abc" }, { extra: 1 })); // a key the agent never sends
    expectSame(encoder, reference, note("item/updated", { ...item, text: "abcd", when: { toJSON: (key: string) => `key ${key}` } }));
    expectSame(encoder, reference, note("item/updated", { ...item, text: "abcde", revision: Number.NaN }));
    expectSame(encoder, reference, note("item/updated", { ...item, text: 5 }));
    expectSame(encoder, reference, note("item/updated", { ...item, text: "abcdef" }));
    expectSame(encoder, reference, {
      type: "notification",
      at: 1,
      n: 99,
      method: "turn/started",
      params: { sessionId, viewCursor: `v:${sessionId}:99`, emittedAtMs: 1, turnId: "t" },
    });
    const odd: NotificationRecord = {
      type: "notification",
      at: Number.POSITIVE_INFINITY,
      n: 100,
      method: "item/updated",
      params: { sessionId, viewCursor: "v", emittedAtMs: 1, item: { ...item, text: "abcdefg" } },
    };
    expectSame(encoder, reference, odd);
    expectSame(encoder, reference, note("item/completed", { ...item, text: "abcdefg", status: "completed" }));
  });

  it("any cursor and session id are written as JSON.stringify writes them, the usual v:<sessionId>:<n> or not", () => {
    const encoder = new NotificationEncoder();
    const reference = new ReferenceEncoder();
    const item = { itemId: "i1", turnId: "t", revision: 1, status: "inProgress", recordedAt: "r", text: "a", kind: "message" };
    const record = (id: string, viewCursor: string, n: number, text: string): NotificationRecord => ({
      type: "notification",
      at: n,
      n,
      method: "item/updated",
      params: { sessionId: id, viewCursor, emittedAtMs: n, item: { ...item, text } },
    });
    expectSame(encoder, reference, record(sessionId, `v:${sessionId}:7`, 7, "ab"));
    expectSame(encoder, reference, record(sessionId, `v:${sessionId}:7`, 8, "abc")); // another number than n
    expectSame(encoder, reference, record(sessionId, `v:${sessionId}:78`, 8, "abcd")); // ends with n's digits, one longer
    expectSame(encoder, reference, record(sessionId, `w:${sessionId}:9`, 9, "abcde"));
    const odd = 'a"b\\c\u0001\ud800';
    expectSame(encoder, reference, record(odd, `v:${odd}:10`, 10, "abcdef")); // a session id that JSON escapes
    expectSame(encoder, reference, record(odd, `v:${odd}:11`, 11, "abcdefg"));
  });

  it("an object property whose value changed inside is serialized again, never reused", () => {
    const encoder = new NotificationEncoder();
    const reference = new ReferenceEncoder();
    const error = { name: "E", code: "1" };
    const item = { itemId: "i1", kind: "toolCall", turnId: "t", revision: 1, status: "inProgress", recordedAt: "r", visibleOutput: "a", error };
    expectSame(encoder, reference, note("item/started", item));
    error.code = "2";
    expectSame(encoder, reference, note("item/updated", { ...item, visibleOutput: "ab" }));
  });

  it("a log written with deltas reads back as the records written", () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-encoder-"));
    try {
      const path = sessionLogPath(dir, "s1");
      const log = SessionLog.open(path);
      const written: SessionLogRecord[] = [{ type: "session", at: 0, sessionId, model: "m" }];
      let item: Record<string, unknown> = { itemId: "i1", turnId: "t", revision: 1, status: "inProgress", recordedAt: "r", text: "", kind: "message" };
      written.push(note("item/started", item));
      for (const chunk of ["He", "llo ", "\ud83d", "\ude00 ", '"q"\n']) {
        item = { ...item, text: (item["text"] as string) + chunk, revision: (item["revision"] as number) + 1 };
        written.push(note("item/updated", item));
      }
      written.push(note("item/completed", { ...item, status: "completed" }));
      for (const record of written) log.append(record);
      log.close();
      expect(readFileSync(path, "utf8").match(/"delta":/g)).toHaveLength(5); // every update extends the last logged text (the first, the empty one)
      expect([...readSessionLog(path)]).toEqual(written);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
