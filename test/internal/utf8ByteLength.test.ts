import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8ByteLength } from "../../src/internal/utf8ByteLength.js";

describe("utf8ByteLength", () => {
  it("is TextEncoder's length, for any string (lone surrogates included)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
      }),
    );
  });

  it("past the limit, returns some number over it", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.nat(64), (text, limit) => {
        const exact = new TextEncoder().encode(text).length;
        const counted = utf8ByteLength(text, limit);
        if (exact <= limit) expect(counted).toBe(exact);
        else expect(counted).toBeGreaterThan(limit);
      }),
    );
  });
});
