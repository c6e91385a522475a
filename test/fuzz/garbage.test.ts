/**
 * Fuzz: random bytes (alone, or mixed with valid frames) never throw out of the reader or the
 * connection, and never strand a waiter: after garbage and then the end of the stream, every
 * pending command and terminal wait settles with a typed MspError.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MspClient, MspError, type ByteChannel, type EndDetails } from "../../src/index.js";
import { createFraming } from "../../src/framing/index.js";

const RUNS = 1_000;
const enc = new TextEncoder();

function manual() {
  const data = new Set<(c: Uint8Array) => void>();
  const end = new Set<(d?: EndDetails) => void>();
  const channel: ByteChannel = {
    onData: (l) => (data.add(l), () => data.delete(l)),
    onEnd: (l) => (end.add(l), () => end.delete(l)),
    onError: () => () => {},
    write: () => {},
    end: () => {},
  };
  return { channel, push: (c: Uint8Array) => [...data].forEach((l) => l(c)), finish: () => [...end].forEach((l) => l({ reason: "fuzz EOF" })) };
}

const good = (n: number) =>
  enc.encode(`${JSON.stringify({ jsonrpc: "2.0", method: "turn/started", params: { sessionId: "s", viewCursor: `v:s:${n}`, turnId: `t${n}` } })}\n`);
const frameOf = (bytes: Uint8Array) => Uint8Array.from([...enc.encode(`Content-Length: ${bytes.length - 1}\r\n\r\n`), ...bytes.subarray(0, bytes.length - 1)]);
/** Garbage that looks almost right: JSON-ish fragments, headers, separators and raw bytes. */
const chunk = fc.oneof(
  fc.uint8Array({ maxLength: 48 }),
  fc
    .constantFrom(
      "{",
      "}",
      "\n",
      "\r\n\r\n",
      "Content-Length: 5\r\n\r\n",
      "Content-Length: x\r\n\r\n",
      '{"jsonrpc":"2.0"',
      '"id":1,"result":{}}\n',
      "\u00ff",
      "null\n",
    )
    .map((s) => enc.encode(s)),
  fc.nat(50).map((n) => good(n)),
);

describe.each(["ndjson", "content-length"] as const)("%s: random bytes", (framing) => {
  it(`never throw and never strand a waiter (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { maxLength: 12 }), fc.boolean(), async (chunks, wrapGood) => {
        const { channel, push, finish } = manual();
        const { reader, writer } = createFraming(channel, framing, { maxMessageBytes: 256 });
        const client = new MspClient(reader, writer);
        client.events.on("protocolError", () => {});
        const waits = [
          client.command("host/info", {}),
          client.turns.terminalOf("never", { timeoutMs: Infinity }),
          client.turns.terminalOf("t1", { timeoutMs: Infinity }),
        ].map((p) =>
          p.then(
            () => "resolved",
            (e: unknown) => (MspError.is(e) ? e.kind : `foreign: ${String(e)}`),
          ),
        );
        for (const c of chunks) expect(() => push(framing === "content-length" && wrapGood && c.at(-1) === 0x0a ? frameOf(c) : c)).not.toThrow();
        finish();
        const outcomes = await Promise.all(waits);
        // The command fails at close, or earlier as `protocol` if garbage held a malformed answer to it.
        expect(["connectionClosed", "protocol"]).toContain(outcomes[0]);
        expect(outcomes[1]).toBe("connectionClosed");
        expect(["resolved", "connectionClosed"]).toContain(outcomes[2]);
        expect(client.pendingCount).toBe(0);
        expect(client.turns.waiterCount).toBe(0);
        expect(client.isClosed).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
