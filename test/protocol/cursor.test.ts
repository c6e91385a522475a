/** Tests of the view-cursor module both sides share: format, and strict parse. */
import { describe, expect, it } from "vitest";
import { formatViewCursor, parseViewCursor } from "../../src/protocol/cursor.js";

const S = "0198f0aa-1111-7000-8000-0000000000aa";

describe("view cursors", () => {
  it("formats v:<sessionId>:<n>, and parses it back", () => {
    expect(formatViewCursor(S, 9)).toBe(`v:${S}:9`);
    expect(parseViewCursor(formatViewCursor(S, 9), S)).toBe(9);
    expect(parseViewCursor(`v:${S}:0`, S)).toBe(0);
  });

  it("parses strictly: another session's cursor, another form, or a sloppy number is opaque", () => {
    for (const cursor of [
      "opaque",
      `v:other:9`,
      `x:${S}:9`,
      `v:${S}:09`,
      `v:${S}:-1`,
      `v:${S}:1.5`,
      `v:${S}:`,
      `v:${S}:9 `,
      `v:${S}:1e3`,
      `v:${S}:99999999999999999999`,
    ]) {
      expect(parseViewCursor(cursor, S), cursor).toBeUndefined();
    }
  });
});
