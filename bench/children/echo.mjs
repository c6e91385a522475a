#!/usr/bin/env node
/**
 * Bench child: answers every JSON-RPC request at once with { status: "accepted", commandId }.
 * argv: framing ("ndjson" | "content-length").
 */
const framing = process.argv[2] ?? "ndjson";
let buffer = Buffer.alloc(0);
const send = (message) => {
  const body = JSON.stringify(message);
  process.stdout.write(framing === "ndjson" ? `${body}\n` : `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
};
const answer = (request) => {
  if (request.id !== undefined) send({ jsonrpc: "2.0", id: request.id, result: { status: "accepted", commandId: request.params?.commandId ?? null } });
};
process.stdin.on("data", (chunk) => {
  buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
  for (;;) {
    if (framing === "ndjson") {
      const nl = buffer.indexOf(10);
      if (nl < 0) break;
      const line = buffer.subarray(0, nl).toString();
      buffer = buffer.subarray(nl + 1);
      if (line.trim() !== "") answer(JSON.parse(line));
    } else {
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) break;
      const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
      if (buffer.length < end + 4 + length) break;
      answer(JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString()));
      buffer = buffer.subarray(end + 4 + length);
    }
  }
});
process.stdin.on("end", () => process.exit(0));
