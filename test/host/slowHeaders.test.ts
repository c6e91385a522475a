/**
 * Issue 20, part 1: a request must send its headers within 10 s (docs/websocket-host.md, "Denial
 * of service"). Real `muse-host serve --ws` child, real TCP sockets that drip their request a byte
 * a second or send nothing at all: each must be closed by the host within 10 s plus a margin (an
 * upper bound, not a speed benchmark), while WebSocket clients connect and stay connected.
 */
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MspClient } from "../../src/index.js";
import { startWebSocketHost, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

/** The documented bound on sending the headers. @unit milliseconds */
const DOCUMENTED_HEADERS_MS = 10_000;
/** Slack for the host's periodic check and a loaded machine. @unit milliseconds */
const MARGIN_MS = 3_000;

let host: WebSocketHostProcess | undefined;
beforeAll(async () => {
  host = await startWebSocketHost(["--script", fileURLToPath(new URL("../../packages/host/models/hello.json", import.meta.url))]);
});
afterAll(async () => {
  await host?.stop();
});

/** A raw socket to the host that sends `first`, then one byte of `drip` a second (if any); resolves with when it closed. */
function slowRequest(port: number, first: string, drip: string | undefined): { socket: Socket; closedAfterMs: Promise<number>; answer(): string } {
  const started = Date.now();
  const socket = connect(port, "127.0.0.1");
  let timer: NodeJS.Timeout | undefined;
  socket.on("error", () => {});
  let answer = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (answer += chunk)); // reads what the host answers (a 408), so its close is seen
  socket.on("connect", () => {
    if (first !== "") socket.write(first);
    if (drip === undefined) return;
    let at = 0;
    timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(drip[at++ % drip.length] ?? "x");
    }, 1_000);
  });
  const closedAfterMs = new Promise<number>((resolve) =>
    socket.on("close", () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  return { socket, closedAfterMs, answer: () => answer };
}

describe("muse-host serve --ws: a request that does not send its headers in time", () => {
  it("closes sockets that drip or never send their headers within the documented 10 s, and serves clients meanwhile", async () => {
    if (host === undefined) throw new Error("the host did not start");
    const { url, token, port } = host;
    const early: MspClient = await wsClient(url, { token });
    const upgradeStart = `GET /msp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n`;
    const slow = [
      slowRequest(port, "", undefined), // connects, sends nothing
      slowRequest(port, "", undefined),
      slowRequest(port, "GET /msp HT", undefined), // half a request line, then nothing
      slowRequest(port, upgradeStart, "X-Slow: dripping one byte a second"), // drips its headers
      slowRequest(port, "G", "ET /msp HTTP/1.1\r\nX"), // drips its request line
    ];
    try {
      // A normal client still gets in while the slow ones hold their slots.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const late = await wsClient(url, { token });
      const info = (await late.command("host/info", {})) as { protocolVersion?: string };
      expect(info.protocolVersion).toBeDefined();
      late.close();

      const closedAfter = await Promise.all(
        slow.map(({ closedAfterMs }) => Promise.race([closedAfterMs, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 40_000))])),
      );
      const tooLate = closedAfter.filter((ms) => !(ms < DOCUMENTED_HEADERS_MS + MARGIN_MS));
      expect(tooLate, `closed after ${closedAfter.join(", ")} ms; host stderr:\n${host.stderr()}`).toEqual([]);
      // The bound is on the request's headers, not on an open WebSocket: one open since the start is still served.
      expect(await early.command("host/info", {})).toBeDefined();
    } finally {
      for (const { socket } of slow) socket.destroy();
      early.close();
    }
  }, 60_000);
});
