/** Tests of the bounded idempotency cache. */
import { describe, expect, it } from "vitest";
import { CommandCache } from "../../packages/host/src/server/commandCache.js";

describe("CommandCache", () => {
  it("remembers outcomes and forgets the oldest beyond capacity", () => {
    const cache = new CommandCache(2);
    cache.remember("a", { kind: "result", result: 1 });
    cache.remember("b", { kind: "error", error: { code: -32001, message: "no" } });
    cache.remember("c", { kind: "result", result: 3 });
    expect(cache.size).toBe(2);
    expect(cache.lookup("a")).toBeUndefined();
    expect(cache.lookup("b")).toEqual({ kind: "error", error: { code: -32001, message: "no" } });
    expect(cache.lookup("c")).toEqual({ kind: "result", result: 3 });
  });
});
