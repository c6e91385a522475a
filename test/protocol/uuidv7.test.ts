/**
 * The root's own UUIDv7 (it replaced the uuid library in the browser core): RFC 9562 layout
 * (48-bit millisecond time, version 7, variant 10), and ids made one after another sort in the
 * order they were made, within one millisecond and when the counter runs out.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { uuidv7 } from "../../packages/protocol/src/uuidv7.js";

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("uuidv7", () => {
  it("has the v7 layout, with the time in its first 48 bits", () => {
    const before = Date.now();
    const id = uuidv7();
    expect(id).toMatch(SHAPE);
    const ms = parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });

  it("sorts in the order made, within one millisecond and past 4 096 ids in it", () => {
    vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2030, 0, 1));
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(SHAPE);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("never goes back when the clock does", () => {
    const first = uuidv7();
    vi.spyOn(Date, "now").mockReturnValue(Date.now() - 60_000);
    const second = uuidv7();
    expect(second > first).toBe(true);
  });
});
