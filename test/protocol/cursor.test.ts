/** Tests of the view-cursor module both sides share: format, and strict parse. */
import { describe, expect, it } from "vitest";
import { formatViewCursor, parseViewCursor } from "../../packages/protocol/src/cursor.js";

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

  it("parses exactly as its definition does: v:<sessionId>:<0 or digits without a leading zero>, a safe integer", () => {
    const definition = (cursor: string, sessionId: string): number | undefined => {
      const prefix = `v:${sessionId}:`;
      if (!cursor.startsWith(prefix) || !/^(0|[1-9][0-9]*)$/.test(cursor.slice(prefix.length))) return undefined;
      const n = Number(cursor.slice(prefix.length));
      return Number.isSafeInteger(n) ? n : undefined;
    };
    const sessions = [S, "", "a", "a:b", "v", "0198"];
    const tails = ["0", "7", "10", "00", "01", "", ":", "1:", "9007199254740991", "9007199254740992", "1e3", " 1", "1 ", "+1", "-0", "٣", "12a", "0x1"];
    let checked = 0;
    for (const sessionId of sessions)
      for (const other of sessions)
        for (const tail of tails)
          for (const cursor of [`v:${other}:${tail}`, `v:${other}${tail}`, `x:${other}:${tail}`, `v:${other}::${tail}`, `${tail}`]) {
            expect(parseViewCursor(cursor, sessionId), `${cursor} of ${sessionId}`).toBe(definition(cursor, sessionId));
            checked++;
          }
    expect(checked).toBe(sessions.length * sessions.length * tails.length * 5);
  });
});
