/** Tests of the NDJSON line splitter: byte-level splitting keeps UTF-8 characters whole. */
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/host/line-splitter.js";

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
});
