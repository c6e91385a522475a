/**
 * Fuzz: any chunking of a valid stream gives the same messages, for both framings, with cuts
 * forced inside multi-byte UTF-8 characters, inside `\r\n` line ends and inside `\r\n\r\n`.
 * Extends test/framing/*.test.ts (random cuts, 300 runs) with targeted cuts and 1 000 runs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ContentLengthMessageReader, NdjsonMessageReader } from "../../src/framing/index.js";
import { readChunks } from "../helpers/readChunks.js";

const RUNS = 1_000;
const enc = new TextEncoder();

function read(kind: "ndjson" | "content-length", chunks: Uint8Array[]) {
  return readChunks((channel) => (kind === "ndjson" ? new NdjsonMessageReader(channel) : new ContentLengthMessageReader(channel)), chunks);
}

/** Text rich in multi-byte characters (2-, 3- and 4-byte UTF-8). */
const text = fc.array(fc.constantFrom("a", "é", "ü", "€", "中", "🌍", "𝄞", "\\", '"', "\n", " ", "\u2028"), { maxLength: 24 }).map((cs) => cs.join(""));
const message = fc.record({
  jsonrpc: fc.constant("2.0"),
  method: fc.constantFrom("turn/started", "item/updated", "x/ü"),
  params: fc.record({ text, n: fc.integer(), nested: fc.dictionary(text, fc.oneof(text, fc.boolean(), fc.constant(null)), { maxKeys: 3 }) }),
});

/** Positions worth cutting at: inside multi-byte characters and inside CR LF runs. */
function interesting(bytes: Uint8Array): number[] {
  const points: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if ((b & 0xc0) === 0x80) points.push(i); // a continuation byte: cutting here splits a character
    if (b === 0x0a || bytes[i - 1] === 0x0d) points.push(i);
  }
  return points;
}

function cut(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const sorted = [...new Set(points)].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of sorted) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

const encode = (kind: "ndjson" | "content-length", msgs: unknown[], crlf: boolean) =>
  enc.encode(
    msgs
      .map((m) => {
        const body = JSON.stringify(m);
        return kind === "ndjson" ? `${body}${crlf ? "\r\n" : "\n"}` : `Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`;
      })
      .join(""),
  );

describe.each(["ndjson", "content-length"] as const)("%s: any chunking gives the same messages", (kind) => {
  it(`targeted cuts inside UTF-8 characters and \\r\\n\\r\\n (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 16 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (msgs, crlf, picks, random) => {
          const bytes = encode(kind, msgs, crlf);
          const spots = interesting(bytes);
          const points = [...picks.map((p) => spots[p % Math.max(1, spots.length)] ?? 0), ...random.map((r) => r % (bytes.length + 1))];
          const { messages, problems } = read(kind, cut(bytes, points));
          expect(problems).toEqual([]);
          expect(messages).toEqual(JSON.parse(JSON.stringify(msgs)));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("one byte per chunk", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 3 }), (msgs) => {
        const bytes = encode(kind, msgs, true);
        const { messages, problems } = read(
          kind,
          Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)),
        );
        expect(problems).toEqual([]);
        expect(messages).toEqual(JSON.parse(JSON.stringify(msgs)));
      }),
      { numRuns: 200 },
    );
  });
});
