/** Tests of BoundedMap: capacity, oldest-first eviction by insertion or by recency, and onEvict. */
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../packages/protocol/src/boundedMap.js";

describe("BoundedMap", () => {
  it("keeps at most `capacity` entries, evicting the first inserted; setting a key again keeps its place", () => {
    const evicted: Array<[string, number]> = [];
    const m = new BoundedMap<string, number>({ capacity: 2, onEvict: (k, v) => evicted.push([k, v]) });
    m.set("a", 1).set("b", 2).set("a", 10).set("c", 3);
    expect([...m]).toEqual([
      ["b", 2],
      ["c", 3],
    ]);
    expect(evicted).toEqual([["a", 10]]);
    expect([m.size, m.capacity, m.has("a"), m.get("b")]).toEqual([2, 2, false, 2]);
  });

  it('with order "recency", setting a key again makes it the newest; reading never reorders', () => {
    const m = new BoundedMap<string, number>({ capacity: 2, order: "recency" });
    m.set("a", 1).set("b", 2);
    expect(m.get("a")).toBe(1); // a read: "a" stays the oldest
    m.set("a", 11).set("c", 3); // "a" refreshed, so "b" is the oldest
    expect([...m.values()]).toEqual([11, 3]);
    expect(m.has("b")).toBe(false);
  });

  it("delete and clear never call onEvict", () => {
    let evictions = 0;
    const m = new BoundedMap<number, string>({ capacity: 3, onEvict: () => evictions++ });
    m.set(1, "x").set(2, "y");
    expect([m.delete(1), m.delete(1)]).toEqual([true, false]);
    m.clear();
    expect([m.size, evictions]).toEqual([0, 0]);
  });

  it("refuses a capacity below 1 (or NaN), and takes Infinity as no bound", () => {
    for (const capacity of [0, -1, Number.NaN]) expect(() => new BoundedMap({ capacity })).toThrow(RangeError);
    const m = new BoundedMap<number, number>({ capacity: Infinity });
    for (let i = 0; i < 1000; i += 1) m.set(i, i);
    expect(m.size).toBe(1000);
  });

  it("setting and reading the newest key again (a fast path) keeps every order, value and eviction right", () => {
    for (const order of ["insertion", "recency"] as const) {
      const evicted: string[] = [];
      const m = new BoundedMap<string, number>({ capacity: 3, order, onEvict: (k) => evicted.push(k) });
      m.set("a", 1).set("b", 2).set("b", 2).set("b", 20);
      expect([m.get("b"), m.get("a"), m.size]).toEqual([20, 1, 2]);
      m.set("a", 10); // insertion: keeps its place; recency: becomes the newest
      expect([...m].map(([k]) => k)).toEqual(order === "insertion" ? ["a", "b"] : ["b", "a"]);
      m.set("a", 10).set("c", 3).set("d", 4);
      expect(evicted).toEqual(order === "insertion" ? ["a"] : ["b"]);
      // The newest deleted, then set again: it is new, and goes last.
      expect(m.delete("d")).toBe(true);
      expect(m.get("d")).toBeUndefined();
      m.set("e", 5).set("d", 40);
      expect([...m].map(([k]) => k).at(-1)).toBe("d");
      expect(m.get("d")).toBe(40);
      m.clear();
      expect([m.get("d"), m.size]).toEqual([undefined, 0]);
      m.set("d", 41);
      expect([...m]).toEqual([["d", 41]]);
    }
  });
});
