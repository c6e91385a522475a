import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "vscode-jsonrpc";
import { NdjsonMessageReader, NdjsonMessageWriter } from "../../src/framing/index.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { readChunks } from "../helpers/readChunks.js";

function readAll(chunks: Uint8Array[], maxMessageBytes?: number) {
  return readChunks((channel) => new NdjsonMessageReader(channel, maxMessageBytes === undefined ? {} : { maxMessageBytes }), chunks);
}

const enc = new TextEncoder();

function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const message = fc.record({ jsonrpc: fc.constant("2.0"), method: fc.string({ minLength: 1 }), params: fc.dictionary(fc.string(), jsonValue) });

describe("NdjsonMessageReader", () => {
  it("gives the same messages under any chunking, including splits inside UTF-8 characters", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (msgs, cuts) => {
        const bytes = enc.encode(msgs.map((m) => `${JSON.stringify(m)}\n`).join(""));
        const { messages, problems } = readAll(split(bytes, cuts));
        expect(problems).toEqual([]);
        expect(messages).toEqual(JSON.parse(JSON.stringify(msgs)));
      }),
      { numRuns: 300 },
    );
  });

  it("decodes a multi-byte character split across chunks", () => {
    const bytes = enc.encode(`${JSON.stringify({ jsonrpc: "2.0", method: "m", params: { text: "héllo 🌍 wörld" } })}\n`);
    const at = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
    const { messages } = readAll([bytes.subarray(0, at), bytes.subarray(at)]);
    expect((messages[0] as unknown as { params: { text: string } }).params.text).toBe("héllo 🌍 wörld");
  });

  it("tolerates CRLF and blank lines", () => {
    const { messages, problems } = readAll([enc.encode('{"jsonrpc":"2.0","method":"a"}\r\n\n\r\n{"jsonrpc":"2.0","method":"b"}\n')]);
    expect(problems).toEqual([]);
    expect(messages.map((m) => (m as unknown as { method: string }).method)).toEqual(["a", "b"]);
  });

  it("reports a malformed line and keeps delivering later lines", () => {
    const { messages, problems, closed } = readAll([enc.encode('{"jsonrpc":"2.0","method":"a"}\n{oops\n[1,2]\n{"jsonrpc":"2.0","method":"b"}\n')]);
    expect(messages.map((m) => (m as unknown as { method: string }).method)).toEqual(["a", "b"]);
    expect(problems.map((p) => p.fatal)).toEqual([false, false]);
    expect(problems[0]?.problem).toMatch(/malformed JSON/);
    expect(problems[1]?.problem).toMatch(/batches/);
    expect(closed).toBe(false);
  });

  it("closes on a line over maxMessageBytes without buffering it, whether it comes whole or in pieces", () => {
    const big = enc.encode(`${JSON.stringify({ jsonrpc: "2.0", method: "m", params: { pad: "x".repeat(2_000) } })}\n`);
    const whole = readAll([big], 1_000);
    expect(whole.problems[0]?.fatal).toBe(true);
    expect(whole.problems[0]?.problem).toMatch(/maxMessageBytes/);
    expect(whole.closed).toBe(true);
    const pieces = readAll(split(big, [100, 600, 1_100, 1_900]), 1_000);
    expect(pieces.problems[0]?.fatal).toBe(true);
    expect(pieces.closed).toBe(true);
    expect(pieces.messages).toEqual([]);
  });

  it("accepts a line of exactly maxMessageBytes", () => {
    const text = JSON.stringify({ jsonrpc: "2.0", method: "m", params: { pad: "" } });
    const padded = JSON.stringify({ jsonrpc: "2.0", method: "m", params: { pad: "y".repeat(100 - text.length) } });
    expect(enc.encode(padded).length).toBe(100);
    const { messages, problems } = readAll([enc.encode(`${padded}\n`)], 100);
    expect(problems).toEqual([]);
    expect(messages).toHaveLength(1);
  });

  it("never throws on random bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), (chunks) => {
        expect(() => readAll(chunks, 256)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe("NdjsonMessageWriter", () => {
  it("writes one line per message, in order, readable by the reader", async () => {
    const [a, b] = createLinkedPair();
    const writer = new NdjsonMessageWriter(a);
    const reader = new NdjsonMessageReader(b);
    const got: Message[] = [];
    reader.listen((m) => got.push(m));
    const sent = Array.from({ length: 50 }, (_, i) => ({ jsonrpc: "2.0", method: `m${i}`, params: { i } }));
    await Promise.all(sent.map((m) => writer.write(m)));
    await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual(sent);
  });
});
