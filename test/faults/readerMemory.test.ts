/**
 * Findings 8 and 9 (issue 10): the readers' memory is a function of maxMessageBytes, not of the
 * chunking, and what they keep is a copy.
 *
 * - Finding 8: an unterminated line arriving one byte per chunk used to keep one object per chunk
 *   (12 MB pending became a 238 MB heap). The probe runs in a real child process, with --expose-gc.
 * - Finding 9: a channel that reuses its buffer after each chunk (as some socket and stream
 *   libraries do) must not corrupt messages: what a reader or the linked pair keeps is copied.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { Message, NotificationMessage } from "vscode-jsonrpc";
import { connect } from "../../src/index.js";
import { ContentLengthMessageReader, NdjsonMessageReader, type ByteChannel, type FramedMessageReader } from "../../src/framing/index.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useFaultHarness } from "./harness.js";

useFaultHarness();

const run = promisify(execFile);
const probe = fileURLToPath(new URL("../leaks/chunking.script.ts", import.meta.url));

interface ChunkingResult {
  pendingBytes: number;
  heapGrowthBytes: number;
  delivered: boolean;
}

async function chunking(framing: string, size: number): Promise<ChunkingResult> {
  const { stdout } = await run(process.execPath, ["--expose-gc", "--import", "tsx", probe, framing, String(size)], { cwd: repoRoot, timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as ChunkingResult;
}

describe("finding 8: readers' memory", () => {
  // The pending line lives in one buffer whose capacity doubles: under 2× its bytes, plus slack
  // for the collector. The old one-object-per-chunk reader needed over 50× (238 MB for 12 MB).
  for (const framing of ["ndjson", "content-length"]) {
    it(`finding 8: 2 MB pending, one byte per chunk (${framing}): memory grows by under 3× the pending bytes, and the message arrives whole`, async () => {
      const r = await chunking(framing, 2_000_000);
      expect(r.delivered).toBe(true);
      expect(r.heapGrowthBytes).toBeLessThan(3 * r.pendingBytes);
    }, 60_000);
  }

  it("finding 8: the line splitter never holds more than maxLineBytes, one byte per chunk up to the limit", () => {
    let overflows = 0;
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line), { maxLineBytes: 1_000, onOverflow: () => overflows++ });
    const x = Uint8Array.of(0x78);
    for (let i = 0; i < 1_000; i++) splitter.push(x);
    splitter.push(Uint8Array.of(0x0a));
    expect(lines).toEqual(["x".repeat(1_000)]);
    for (let i = 0; i < 1_001; i++) splitter.push(x);
    splitter.push(Uint8Array.of(0x0a, 0x79, 0x0a));
    expect([overflows, lines.at(-1)]).toEqual([1, "y"]);
  });
});

/** A channel that hands every chunk out of ONE buffer, and scribbles over it once the listeners return. */
function reusingChannel() {
  const listeners = new Set<(chunk: Uint8Array) => void>();
  const buffer = Buffer.alloc(64);
  const channel: ByteChannel = {
    onData: (l) => (listeners.add(l), () => listeners.delete(l)),
    onEnd: () => () => {},
    onError: () => () => {},
    write: () => {},
    end: () => {},
  };
  const emit = (bytes: Uint8Array, chunkSize: number) => {
    for (let at = 0; at < bytes.length; at += chunkSize) {
      const part = bytes.subarray(at, at + chunkSize);
      buffer.set(part);
      // Buffer#slice, as a Node stream library would hand it out: a view of the shared buffer.
      const chunk = buffer.slice(0, part.length);
      for (const l of [...listeners]) l(chunk);
      buffer.fill(0x21); // reused: "!!!!"
    }
  };
  return { channel, emit };
}

const messages: NotificationMessage[] = [
  { jsonrpc: "2.0", method: "m", params: { text: "the first message, long enough to span several chunks" } },
  { jsonrpc: "2.0", method: "m", params: { text: "ünïcödé splits inside characters too ✓" } },
];

function readThrough(make: (channel: ByteChannel) => FramedMessageReader, wire: Uint8Array, chunkSize: number): Message[] {
  const { channel, emit } = reusingChannel();
  const got: Message[] = [];
  const reader = make(channel);
  reader.listen((m) => got.push(m));
  emit(wire, chunkSize);
  return got;
}

describe("finding 9: partial lines are copied", () => {
  const enc = new TextEncoder();
  for (const chunkSize of [1, 7, 33, 64]) {
    it(`finding 9: NDJSON through a channel that reuses its buffer (${chunkSize}-byte chunks): every message intact`, () => {
      const wire = enc.encode(messages.map((m) => `${JSON.stringify(m)}\n`).join(""));
      expect(readThrough((c) => new NdjsonMessageReader(c), wire, chunkSize)).toEqual(messages);
    });

    it(`finding 9: Content-Length through a channel that reuses its buffer (${chunkSize}-byte chunks): every message intact`, () => {
      const wire = enc.encode(
        messages
          .map((m) => {
            const body = JSON.stringify(m);
            return `Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`;
          })
          .join(""),
      );
      expect(readThrough((c) => new ContentLengthMessageReader(c), wire, chunkSize)).toEqual(messages);
    });
  }

  it("finding 9: the linked pair copies what is written: a writer reusing its Buffer does not corrupt what the peer reads", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const client = connect(clientSide);
    const seen: unknown[] = [];
    client.onNotification((n) => seen.push(n.params?.["text"]));
    const buffer = Buffer.alloc(256);
    for (const m of messages) {
      const bytes = Buffer.from(`${JSON.stringify(m)}\n`);
      bytes.copy(buffer);
      hostSide.write(buffer.slice(0, bytes.length)); // a view of the reused buffer
      buffer.fill(0x21); // reused before the peer reads (delivery is asynchronous)
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual(messages.map((m) => (m.params as Record<string, unknown>)["text"]));
    await client.close();
  });
});
