#!/usr/bin/env node
/**
 * Bench child: the WebSocket twin of flood.mjs. A `ws` server on 127.0.0.1 (free port, printed on
 * stdout as `port N`) that, on the first message a client sends, writes the same N ~800-byte MSP
 * notifications as flood.mjs, one per text frame, as fast as the socket takes them (written in
 * corked batches of ~64 KiB, waiting for drain past 4 MiB buffered). Exits on stdin EOF. argv: N.
 */
import { WebSocketServer } from "ws";
import { floodBody } from "./floodBodies.mjs";

const n = Number(process.argv[2] ?? 100_000);
const frames = [];
for (let i = 0; i < n; i++) {
  const body = floodBody(i);
  frames.push(Buffer.from(body));
}
const server = new WebSocketServer({
  host: "127.0.0.1",
  port: 0,
  perMessageDeflate: false,
  handleProtocols: (offered) => (offered.has("msp.v1") ? "msp.v1" : false),
});
server.on("listening", () => process.stdout.write(`port ${server.address().port}\n`));
server.on("connection", (socket) => {
  socket.once("message", () => {
    let at = 0;
    // Corked in batches of ~64 KiB, so the frames leave in large writes, as flood.mjs writes 64 KiB chunks.
    const pump = () => {
      while (at < frames.length) {
        socket._socket.cork();
        for (let bytes = 0; bytes < 64 * 1024 && at < frames.length;) {
          bytes += frames[at].length;
          socket.send(frames[at++], { binary: false });
        }
        socket._socket.uncork();
        if (socket.bufferedAmount > 4 * 1024 * 1024) return void socket._socket.once("drain", pump);
      }
    };
    pump();
  });
});
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
