#!/usr/bin/env node
/**
 * Bench child: writes N ~800-byte MSP notifications (9 item/updated then 1 turn/completed per
 * turn, strictly increasing viewCursor) to stdout in writes of 64 messages, as fast as the pipe
 * takes them (waiting for `drain` when it is full), then waits for stdin EOF. argv: N, framing ("ndjson" | "content-length").
 */
import { floodBody } from "./floodBodies.mjs";

const n = Number(process.argv[2] ?? 100_000);
const framing = process.argv[3] ?? "ndjson";
const parts = [];
for (let i = 0; i < n; i++) {
  const body = floodBody(i);
  parts.push(framing === "ndjson" ? `${body}\n` : `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
// 64 messages a write, as the peer rows' child (bench/peers/children/peerHost.mjs) writes them.
const CHUNK_MESSAGES = 64;
const chunks = [];
for (let i = 0; i < parts.length; i += CHUNK_MESSAGES) chunks.push(Buffer.from(parts.slice(i, i + CHUNK_MESSAGES).join("")));
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
// Start when the parent says go (one byte on stdin), so spawn time is not measured.
process.stdin.once("data", () => {
  let at = 0;
  const pump = () => {
    while (at < chunks.length) {
      const ok = process.stdout.write(chunks[at++]);
      if (!ok) return void process.stdout.once("drain", pump);
    }
  };
  pump();
});
