/** Tests of the one NDJSON line splitter: byte-level splitting keeps UTF-8 characters whole. */
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";

describe("LineSplitter", () => {
  it("joins lines across chunks, drops \\r and empty lines", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(Buffer.from('{"a":1}\r\n\n{"b"'));
    s.push(Buffer.from(':2}\n{"c":3}'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    s.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("decodes a multi-byte character split across chunks", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('"héllo 😀"\n');
    for (const b of bytes) s.push(Uint8Array.of(b)); // one byte at a time
    expect(lines).toEqual(['"héllo 😀"']);
  });

  it("discards an over-long line, reports it, and keeps going", () => {
    const lines: string[] = [];
    let overflows = 0;
    const s = new LineSplitter((l) => lines.push(l), { maxLineBytes: 8, onOverflow: () => overflows++ });
    s.push(Buffer.from("0123456789abcdef\nok\n"));
    expect(overflows).toBe(1);
    expect(lines).toEqual(["ok"]);
  });

  it("discards an over-long line that spans chunks up to its newline, and one inside a chunk of many lines", () => {
    const lines: string[] = [];
    let overflows = 0;
    const s = new LineSplitter((l) => lines.push(l), { maxLineBytes: 8, onOverflow: () => overflows++ });
    s.push(Buffer.from("a\n0123"));
    s.push(Buffer.from("456789"));
    s.push(Buffer.from("abc\nb\n"));
    expect([lines, overflows]).toEqual([["a", "b"], 1]);
    s.push(Buffer.from("c\n0123456789\n12345678\n\r\n"));
    expect([lines, overflows]).toEqual([["a", "b", "c", "12345678"], 2]);
  });

  it("hands a last line without its newline to end()'s onLast, and nothing for a blank one", () => {
    const lines: string[] = [];
    const last: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(Buffer.from('{"a":1}\n{"cut'));
    s.end((l) => last.push(l));
    expect([lines, last]).toEqual([['{"a":1}'], ['{"cut']]);
    s.push(Buffer.from("  \r"));
    s.end((l) => last.push(l));
    expect(last).toEqual(['{"cut']);
  });

  it("copies what it keeps: a caller reusing its buffer changes nothing", () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const buffer = Buffer.from("abc");
    s.push(buffer);
    buffer.write("xyz");
    s.push(Buffer.from("\n"));
    expect(lines).toEqual(["abc"]);
  });
});
