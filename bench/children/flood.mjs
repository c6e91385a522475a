#!/usr/bin/env node
/**
 * Bench child: writes N MSP notifications to stdout in writes of 64 messages, as fast as the pipe
 * takes them (waiting for `drain` when it is full), then waits for stdin EOF. argv: N, framing
 * ("ndjson" | "content-length"), bodies: "items" (~800 bytes, 9 item/updated then 1
 * turn/completed per turn, `floodBody`) or "deltas" (the item/delta flood of `deltaBody`, ~770
 * bytes a delta). It starts on the parent's first byte on stdin; when that is a `session/create`
 * request (the session layer opening), it answers it with the flood's session first.
 */
import { SESSION, deltaBody, floodBody } from "./floodBodies.mjs";

const n = Number(process.argv[2] ?? 100_000);
const framing = process.argv[3] ?? "ndjson";
const body = process.argv[4] === "deltas" ? deltaBody : floodBody;
const frame = (text) => (framing === "ndjson" ? `${text}\n` : `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
const parts = [];
for (let i = 0; i < n; i++) parts.push(frame(body(i)));
// 64 messages a write, as the peer rows' child (bench/peers/children/peerHost.mjs) writes them.
const CHUNK_MESSAGES = 64;
const chunks = [];
for (let i = 0; i < parts.length; i += CHUNK_MESSAGES) chunks.push(Buffer.from(parts.slice(i, i + CHUNK_MESSAGES).join("")));
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
// Start when the parent says go (one byte on stdin), so spawn time is not measured.
process.stdin.once("data", (data) => {
  const create = /"id":(\d+),"method":"session\/create","params":\{[^}]*"commandId":"([^"]+)"/.exec(data.toString("utf8"));
  if (create !== null) {
    const result = { commandId: create[2], status: "accepted", sessionId: SESSION, model: "default" };
    process.stdout.write(frame(JSON.stringify({ jsonrpc: "2.0", id: Number(create[1]), result })));
  }
  let at = 0;
  const pump = () => {
    while (at < chunks.length) {
      const ok = process.stdout.write(chunks[at++]);
      if (!ok) return void process.stdout.once("drain", pump);
    }
  };
  pump();
});
