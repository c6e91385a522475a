import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { ContentLengthMessageReader, ContentLengthMessageWriter } from "../../src/framing/index.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { readChunks } from "../helpers/readChunks.js";

function readAll(chunks: Uint8Array[], maxMessageBytes?: number) {
  return readChunks((channel) => new ContentLengthMessageReader(channel, maxMessageBytes === undefined ? {} : { maxMessageBytes }), chunks);
}

const enc = new TextEncoder();
const frame = (m: unknown) => {
  const body = enc.encode(JSON.stringify(m));
  return [...enc.encode(`Content-Length: ${body.length}\r\n\r\n`), ...body];
};

describe("ContentLengthMessageReader", () => {
  it("gives the same messages under any chunking, including inside \\r\\n\\r\\n and UTF-8 characters", () => {
    const message = fc.record({
      jsonrpc: fc.constant("2.0"),
      method: fc.string({ minLength: 1 }),
      params: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
    });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (msgs, cuts) => {
        const bytes = Uint8Array.from(msgs.flatMap(frame));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let at = 0;
        for (const p of points) {
          chunks.push(bytes.subarray(at, p));
          at = p;
        }
        chunks.push(bytes.subarray(at));
        const { messages, problems } = readAll(chunks);
        expect(problems).toEqual([]);
        expect(messages).toEqual(JSON.parse(JSON.stringify(msgs)));
      }),
      { numRuns: 300 },
    );
  });

  it("accepts extra headers such as Content-Type", () => {
    const body = '{"jsonrpc":"2.0","method":"a"}';
    const { messages } = readAll([enc.encode(`Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`)]);
    expect(messages).toHaveLength(1);
  });

  it("closes on a length over maxMessageBytes before reading the body", () => {
    const { problems, closed, messages } = readAll([enc.encode("Content-Length: 999999999\r\n\r\n{")], 1_000);
    expect(problems[0]?.fatal).toBe(true);
    expect(problems[0]?.problem).toMatch(/maxMessageBytes/);
    expect(closed).toBe(true);
    expect(messages).toEqual([]);
  });

  it("closes on a missing Content-Length; reports a bad body without closing", () => {
    expect(readAll([enc.encode("X: 1\r\n\r\n")]).closed).toBe(true);
    const bad = readAll([enc.encode("Content-Length: 5\r\n\r\n{oops"), Uint8Array.from(frame({ jsonrpc: "2.0", method: "b" }))]);
    expect(bad.closed).toBe(false);
    expect(bad.problems[0]?.problem).toMatch(/malformed JSON/);
    expect(bad.messages).toHaveLength(1);
  });

  it("never throws on random bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), (chunks) => {
        expect(() => readAll(chunks, 256)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it("round-trips through the writer", async () => {
    const [a, b] = createLinkedPair();
    const writer = new ContentLengthMessageWriter(a);
    const reader = new ContentLengthMessageReader(b);
    const got: Message[] = [];
    reader.listen((m) => got.push(m));
    await writer.write({ jsonrpc: "2.0", method: "ü", params: { x: "🌍" } } as Message);
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([{ jsonrpc: "2.0", method: "ü", params: { x: "🌍" } }]);
  });
});
