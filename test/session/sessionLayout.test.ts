/**
 * The session's storage layout (docs/sessions-that-survive.md, "How a session is kept in storage"): a reload
 * restores exactly what was written, after any sequence of turns, items and deltas; a write that stores only what
 * changed leaves the storage holding what a whole write to an empty storage holds, key for key; the one-key layout
 * of earlier versions is read and replaced; a torn write is never resumed on; a full quota moves the session to
 * memory with a typed error, and nothing is lost.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Item } from "../../src/index.js";
import { SessionStorageError } from "../../src/session/index.js";
import { PIECE_CHARS } from "../../src/session/keptRecords.js";
import { SessionKeeper } from "../../src/session/sessionKeeper.js";
import type { KeptSession, KeptTurn } from "../../src/session/sessionStorage.js";
import { listedStorage } from "./listedStorage.js";

const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const at = "2026-12-01T00:00:00.000Z";

function message(turnId: string, itemId: string, text: string, revision = 1): Item {
  return { itemId, turnId, kind: "message", revision, status: "inProgress", recordedAt: at, text } as Item;
}
function tool(turnId: string, itemId: string, visibleOutput: string, revision = 1): Item {
  return {
    itemId,
    turnId,
    kind: "toolCall",
    revision,
    status: "inProgress",
    recordedAt: at,
    tool: "shell",
    callId: `c-${itemId}`,
    args: "{}",
    visibleOutput,
    truncated: false,
  } as Item;
}
const grown = (item: Item, more: string): Item =>
  item.kind === "toolCall"
    ? { ...item, visibleOutput: item.visibleOutput + more, revision: item.revision + 1 }
    : ({ ...item, text: (item as { text: string }).text + more, revision: item.revision + 1 } as Item);
const replaced = (item: Item, text: string): Item =>
  item.kind === "toolCall" ? { ...item, visibleOutput: text, revision: item.revision + 1 } : ({ ...item, text, revision: item.revision + 1 } as Item);

/** What a whole write of `value` to an empty storage leaves there. */
function written(value: KeptSession): Map<string, string> {
  const storage = listedStorage();
  new SessionKeeper(storage, "k", UNBOUNDED, () => {}).write(value);
  return new Map(storage.values);
}

/** Text of `length` characters from `pattern` (quotes, newlines and non-ASCII included by the generator). */
const textOf = (pattern: string, length: number) => (pattern === "" ? "x" : pattern).repeat(Math.ceil(length / Math.max(1, pattern.length))).slice(0, length);

type Step =
  | { op: "turn" }
  | { op: "item"; turn: number; tool: boolean; length: number }
  | { op: "delta"; turn: number; item: number; length: number }
  | { op: "replace"; turn: number; item: number; length: number }
  | { op: "end"; turn: number }
  | { op: "drop"; turn: number }
  | { op: "write" }
  | { op: "reload" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ op: "turn" as const }),
  fc.record({ op: fc.constant("item" as const), turn: fc.nat(), tool: fc.boolean(), length: fc.oneof(fc.nat(40), fc.nat(3 * PIECE_CHARS)) }),
  fc.record({ op: fc.constant("delta" as const), turn: fc.nat(), item: fc.nat(), length: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.nat(2 * PIECE_CHARS)) }),
  fc.record({ op: fc.constant("replace" as const), turn: fc.nat(), item: fc.nat(), length: fc.nat(2 * PIECE_CHARS) }),
  fc.record({ op: fc.constant("end" as const), turn: fc.nat() }),
  fc.record({ op: fc.constant("drop" as const), turn: fc.nat() }),
  fc.constant({ op: "write" as const }),
  fc.constant({ op: "reload" as const }),
);

describe("the session's storage layout", () => {
  it("restores exactly what was written, and stores key for key what a whole write stores, after any turns, items and deltas", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.string({ unit: "binary", maxLength: 7 }), (steps, pattern) => {
        const storage = listedStorage();
        let keeper = new SessionKeeper(storage, "k", UNBOUNDED, () => {});
        const turns: KeptTurn[] = [];
        let next = 0;
        let last: KeptSession = { turns: [] };
        const pickTurn = (n: number) => turns[n % Math.max(1, turns.length)];
        const setItems = (turn: KeptTurn, items: Item[]) => (turns[turns.indexOf(turn)] = { ...turn, items });
        for (const s of steps) {
          if (s.op === "turn") turns.push({ turnId: `t${next++}`, phase: "running", items: [], droppedItems: 0, stopRequested: false });
          const turn = s.op === "turn" || s.op === "write" || s.op === "reload" ? undefined : pickTurn(s.turn);
          if (s.op === "item" && turn !== undefined) {
            const itemId = `i${next++}`;
            const text = textOf(pattern, s.length);
            setItems(turn, [...turn.items, s.tool ? tool(turn.turnId, itemId, text) : message(turn.turnId, itemId, text)]);
          }
          if ((s.op === "delta" || s.op === "replace") && turn !== undefined && turn.items.length > 0) {
            const i = s.item % turn.items.length;
            const held = turn.items[i] as Item;
            const changed =
              s.op === "delta" ? grown(held, textOf(pattern.split("").reverse().join(""), s.length)) : replaced(held, textOf(`${pattern}~`, s.length));
            setItems(
              turn,
              turn.items.map((item, j) => (j === i ? changed : item)),
            );
          }
          if (s.op === "end" && turn !== undefined) turns[turns.indexOf(turn)] = { ...turn, phase: "ended" };
          if (s.op === "drop" && turn !== undefined) turns.splice(turns.indexOf(turn), 1);
          if (s.op === "write") {
            last = { sessionId: "s", cursor: `v:s:${next}`, turns: [...turns] };
            keeper.write(last);
            expect(storage.values).toEqual(written(last));
          }
          if (s.op === "reload") {
            keeper = new SessionKeeper(storage, "k", UNBOUNDED, () => {});
            expect(keeper.read()).toEqual(last);
          }
        }
        expect(new SessionKeeper(storage, "k", UNBOUNDED, () => {}).read()).toEqual(last);
      }),
      { numRuns: 80 },
    );
  });

  it("a growing text rewrites only its last piece: the pieces before it are written once", () => {
    const writes: string[] = [];
    const storage = listedStorage();
    const counting = { ...storage, setItem: (key: string, value: string) => (writes.push(key), storage.setItem(key, value)) };
    const keeper = new SessionKeeper(counting, "k", UNBOUNDED, () => {});
    let item = message("t", "m", "");
    for (let n = 0; n < 40; n++) {
      item = grown(item, "a".repeat(2_000));
      keeper.write({ sessionId: "s", turns: [{ turnId: "t", phase: "running", items: [item], droppedItems: 0, stopRequested: false }] });
    }
    const pieceWrites = writes.filter((key) => key.startsWith("k:text:"));
    const pieces = Math.ceil(80_000 / PIECE_CHARS);
    // Each write rewrites the last piece, and a piece that fills up is written once more as the next one starts.
    expect(pieceWrites.length).toBeLessThanOrEqual(40 + pieces);
    expect(new Set(pieceWrites).size).toBe(pieces);
    expect(new SessionKeeper(storage, "k", UNBOUNDED, () => {}).read().turns[0]?.items[0]).toEqual(item);
  });

  it("reads the one-key layout of earlier versions, and the first write replaces it", () => {
    const storage = listedStorage();
    const old: KeptSession = {
      sessionId: "s",
      cursor: "v:s:7",
      turns: [{ turnId: "t", phase: "running", items: [message("t", "m", 'é"\n'.repeat(3_000))], droppedItems: 0, stopRequested: true, cancelCommandId: "c1" }],
      model: { current: "demo" },
    };
    storage.setItem("k", JSON.stringify(old));
    const keeper = new SessionKeeper(storage, "k", UNBOUNDED, () => {});
    const read = keeper.read();
    expect(read).toEqual(old);
    keeper.write(read);
    expect(JSON.parse(storage.getItem("k") as string)).toMatchObject({ layout: 2, cursor: "v:s:7" });
    expect(storage.values).toEqual(written(old));
    expect(new SessionKeeper(storage, "k", UNBOUNDED, () => {}).read()).toEqual(old);
  });

  it("a torn write (a piece missing, a record ahead of its index) is read without the cursor: the resume replays the session whole", () => {
    const value: KeptSession = {
      sessionId: "s",
      cursor: "v:s:3",
      turns: [{ turnId: "t", phase: "running", items: [tool("t", "o", "z".repeat(3 * PIECE_CHARS))], droppedItems: 0, stopRequested: false }],
    };
    const missing = listedStorage();
    new SessionKeeper(missing, "k", UNBOUNDED, () => {}).write(value);
    missing.removeItem("k:text:t:o:visibleOutput:1");
    const read = new SessionKeeper(missing, "k", UNBOUNDED, () => {}).read();
    expect(read.cursor).toBeUndefined();
    expect(read.turns.map((t) => [t.turnId, t.items.length])).toEqual([["t", 0]]);

    const ahead = listedStorage();
    new SessionKeeper(ahead, "k", UNBOUNDED, () => {}).write(value);
    ahead.setItem("k:turn:t", JSON.stringify({ ...value.turns[0], items: [], phase: "ended" }));
    const readAhead = new SessionKeeper(ahead, "k", UNBOUNDED, () => {}).read();
    expect(readAhead).toMatchObject({ sessionId: "s", turns: [{ phase: "ended" }] });
    expect(readAhead.cursor).toBeUndefined();
  });

  it("a quota that fills mid-write moves the session to memory with one typed error: nothing written is lost, and the storage still reads", () => {
    const storage = listedStorage();
    let room = 60_000;
    const quota = {
      getItem: storage.getItem,
      removeItem: storage.removeItem,
      setItem: (key: string, value: string) => {
        room -= value.length;
        if (room < 0) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
        storage.setItem(key, value);
      },
    };
    const errors: SessionStorageError[] = [];
    const keeper = new SessionKeeper(quota, "k", UNBOUNDED, (error) => errors.push(error));
    let item = tool("t", "o", "");
    let value: KeptSession = { turns: [] };
    for (let n = 0; n < 30; n++) {
      item = grown(item, `${n} `.padEnd(5_000, "·"));
      value = { sessionId: "s", cursor: `v:s:${n}`, turns: [{ turnId: "t", phase: "running", items: [item], droppedItems: 0, stopRequested: false }] };
      keeper.write(value);
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SessionStorageError);
    expect(errors[0]).toMatchObject({ kind: "quotaExceeded", operation: "write" });
    expect(keeper.persistent).toBe(false);
    expect(keeper.read()).toEqual(value); // the memory storage holds the whole session
    // What the full storage holds: a session that was written whole (a reload resumes from it), or one without a cursor.
    const after = new SessionKeeper(storage, "k", UNBOUNDED, () => {}).read();
    expect(after.sessionId).toBe("s");
    const kept = (after.turns[0]?.items[0] as { visibleOutput?: string } | undefined)?.visibleOutput;
    if (after.cursor !== undefined) expect(item.kind === "toolCall" && kept !== undefined && item.visibleOutput.startsWith(kept)).toBe(true);
  });
});
