import { describe, expect, it } from "vitest";
import type { Item } from "../../src/index.js";
import { ItemLedger } from "../../src/turns/itemLedger.js";

const msg = (itemId: string, revision: number, status: Item["status"], text = ""): Item => ({
  itemId,
  kind: "message",
  turnId: "t",
  revision,
  status,
  recordedAt: "2026-01-01T00:00:00Z",
  text,
});
const base = { sessionId: "s", viewCursor: "v:s:1" };
/** A whole item: item/started while in progress, item/completed once final. */
const whole = (item: Item) => ({ ...base, item });
const wholeMethod = (item: Item) => (item.status === "inProgress" ? "item/started" : "item/completed");
const apply = (l: ItemLedger, item: Item) => l.apply(wholeMethod(item), whole(item));
const delta = (itemId: string, revision: number, append: string, field = "text", turnId = "t") => ({
  ...base,
  turnId,
  itemId,
  revision,
  field,
  append,
  recordedAt: `2026-01-01T00:00:0${revision}Z`,
});

describe("ItemLedger", () => {
  it("keeps each item at its latest revision, in first-seen order; an older whole item is ignored", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "inProgress", "he"));
    apply(l, msg("b", 1, "inProgress"));
    apply(l, msg("a", 3, "completed", "hello"));
    expect(l.apply("item/started", whole(msg("a", 2, "inProgress", "hel")))).toEqual({});
    expect(l.itemsOf("t").map((i) => [i.itemId, i.revision])).toEqual([
      ["a", 3],
      ["b", 1],
    ]);
  });

  it("applies deltas and patches into the whole item, each a new object", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "inProgress"));
    const before = l.get("t", "a");
    expect(l.apply("item/delta", delta("a", 2, "Hel")).item).toMatchObject({ text: "Hel", revision: 2, recordedAt: "2026-01-01T00:00:02Z" });
    l.apply("item/delta", delta("a", 3, "lo \ud83d"));
    l.apply("item/delta", delta("a", 4, "\ude00"));
    expect((l.get("t", "a") as { text?: string } | undefined)?.text).toBe("Hello \ud83d\ude00");
    const patched = l.apply("item/updated", { ...base, item: { itemId: "a", turnId: "t", kind: "message", revision: 5, recordedAt: "x", interrupted: true } });
    expect(patched.item).toEqual({ ...msg("a", 5, "inProgress", "Hello \ud83d\ude00"), recordedAt: "x", interrupted: true });
    expect((before as { text?: string } | undefined)?.text).toBe(""); // what a reader held is never changed under it
  });

  it("a replayed delta or patch (revision already held) changes nothing and is no problem", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "inProgress"));
    l.apply("item/delta", delta("a", 2, "Hi"));
    expect(l.apply("item/delta", delta("a", 2, "Hi"))).toEqual({});
    expect((l.get("t", "a") as { text?: string } | undefined)?.text).toBe("Hi");
  });

  it("never applies a delta with a gap, for an item not held, to a field the item lacks, or naming another turn", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "inProgress", "x"));
    expect(l.apply("item/delta", delta("a", 3, "y")).problem).toBe("item/delta of item a has revision 3 after 1: a gap");
    expect(l.apply("item/delta", delta("zz", 2, "y")).problem).toBe("item/delta of item zz: the item is not held (never started, or not kept)");
    expect(l.apply("item/delta", delta("a", 2, "y", "visibleOutput")).problem).toBe(
      "item/delta of item a appends to visibleOutput, which a message does not have",
    );
    expect(l.apply("item/updated", { ...base, item: { itemId: "a", turnId: "t", kind: "toolCall", revision: 2, recordedAt: "x" } }).problem).toBe(
      "item/updated of item a is a toolCall, not a message",
    );
    expect(l.get("t", "a")).toEqual(msg("a", 1, "inProgress", "x"));
    expect(l.itemsOf("u")).toEqual([]);
  });

  it("closes items left inProgress as cancelled + synthesized when the turn ends", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "completed"));
    apply(l, msg("b", 2, "inProgress"));
    const closed = l.closeTurn("t");
    expect(closed.map((i) => [i.itemId, i.status, i.synthesized])).toEqual([["b", "cancelled", true]]);
    expect(l.get("t", "a")?.synthesized).toBeUndefined();
    expect(l.closeTurn("unknown")).toEqual([]);
  });

  it("retains at most turnCapacity turns", () => {
    const l = new ItemLedger({ turnCapacity: 2 });
    for (const turnId of ["t1", "t2", "t3"]) apply(l, { ...msg("i", 1, "completed"), turnId });
    expect(l.turnCount).toBe(2);
    expect(l.itemsOf("t1")).toEqual([]);
  });

  it("retains at most itemsPerTurnCapacity items per turn: the earliest-finished goes first, an item in progress never", () => {
    const l = new ItemLedger({ itemsPerTurnCapacity: 3 });
    apply(l, msg("a", 1, "inProgress"));
    apply(l, msg("b", 1, "inProgress"));
    apply(l, msg("c", 1, "inProgress"));
    apply(l, msg("c", 2, "completed"));
    apply(l, msg("b", 2, "failed"));
    expect(apply(l, msg("d", 1, "inProgress")).problem).toBeUndefined(); // c finished first: it goes
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "b", "d"]);
    expect(apply(l, msg("e", 1, "inProgress")).problem).toBeUndefined(); // then b
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "d", "e"]);
    const full = apply(l, msg("f", 1, "inProgress"));
    expect(full.problem).toBe("item/started: item f not kept: turn t has itemsPerTurnCapacity items in progress");
    expect(full.item?.itemId).toBe("f"); // the item as sent, for the typed event
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "d", "e"]);
    expect(apply(l, msg("a", 2, "completed")).item?.status).toBe("completed"); // an update of a held item always applies
    const closed = l.closeTurn("t");
    expect(closed.map((i) => i.itemId)).toEqual(["d", "e"]);
  });

  it("clear() forgets every turn", () => {
    const l = new ItemLedger();
    apply(l, msg("a", 1, "completed"));
    l.clear();
    expect([l.turnCount, l.itemsOf("t")]).toEqual([0, []]);
  });
});
