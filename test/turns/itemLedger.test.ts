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

describe("ItemLedger", () => {
  it("keeps each item at its latest revision, in first-seen order", () => {
    const l = new ItemLedger();
    l.apply(msg("a", 1, "inProgress", "he"));
    l.apply(msg("b", 1, "inProgress"));
    l.apply(msg("a", 3, "completed", "hello"));
    expect(l.apply(msg("a", 2, "inProgress", "hel"))).toBe("stale");
    expect(l.itemsOf("t").map((i) => [i.itemId, i.revision])).toEqual([
      ["a", 3],
      ["b", 1],
    ]);
  });

  it("closes items left inProgress as cancelled + synthesized when the turn ends", () => {
    const l = new ItemLedger();
    l.apply(msg("a", 1, "completed"));
    l.apply(msg("b", 2, "inProgress"));
    const closed = l.closeTurn("t");
    expect(closed.map((i) => [i.itemId, i.status, i.synthesized])).toEqual([["b", "cancelled", true]]);
    expect(l.get("t", "a")?.synthesized).toBeUndefined();
    expect(l.closeTurn("unknown")).toEqual([]);
  });

  it("retains at most turnCapacity turns", () => {
    const l = new ItemLedger({ turnCapacity: 2 });
    for (const turnId of ["t1", "t2", "t3"]) l.apply({ ...msg("i", 1, "completed"), turnId });
    expect(l.turnCount).toBe(2);
    expect(l.itemsOf("t1")).toEqual([]);
  });

  it("retains at most itemsPerTurnCapacity items per turn: the earliest-finished goes first, an item in progress never", () => {
    const l = new ItemLedger({ itemsPerTurnCapacity: 3 });
    l.apply(msg("a", 1, "inProgress"));
    l.apply(msg("b", 1, "inProgress"));
    l.apply(msg("c", 1, "inProgress"));
    l.apply(msg("c", 2, "completed"));
    l.apply(msg("b", 2, "failed"));
    expect(l.apply(msg("d", 1, "inProgress"))).toBe("applied"); // c finished first: it goes
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "b", "d"]);
    expect(l.apply(msg("e", 1, "inProgress"))).toBe("applied"); // then b
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "d", "e"]);
    expect(l.apply(msg("f", 1, "inProgress"))).toBe("full"); // all three in progress: f is not kept
    expect(l.itemsOf("t").map((i) => i.itemId)).toEqual(["a", "d", "e"]);
    expect(l.apply(msg("a", 2, "completed"))).toBe("applied"); // an update of a held item always applies
    const closed = l.closeTurn("t");
    expect(closed.map((i) => i.itemId)).toEqual(["d", "e"]);
  });

  it("clear() forgets every turn", () => {
    const l = new ItemLedger();
    l.apply(msg("a", 1, "completed"));
    l.clear();
    expect([l.turnCount, l.itemsOf("t")]).toEqual([0, []]);
  });
});
