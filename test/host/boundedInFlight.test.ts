/**
 * Issue 20, commands answered after their log sync: a `turn/cancel` is answered only once its
 * records are durable, so while its sync runs it has been read and not answered. A client that
 * stops reading and floods such commands must not make the host read past its bound: the answers
 * it owes count toward `--max-send-queue-bytes` like those it holds, so it stops reading the
 * connection, answers what it read once the syncs finish, and reads again as the client drains.
 * Real host, real WebSocket server on 127.0.0.1, a raw client that writes frames to its TCP socket;
 * then the stdio transport, NDJSON on a TCP socket whose client does not read.
 */
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { createStdioTransport } from "../../packages/host/src/transport/stdioTransport.js";
import { serveWebSocket, type WebSocketHostServer } from "../../packages/host/src/transport/webSocketServer.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";

/** @unit bytes: the bound under test, small so the owed answers pass it many times */
const BOUND = 32 * 1024;
/** How many turns wait in the inbox, each then cancelled by one frame of the flood. */
const QUEUED = 600;
/**
 * Each cancel's JSON-RPC id is this long, and its answer echoes it: the owed answers add up to
 * megabytes, more than the kernel's socket buffers take from a client that does not read, within
 * the first few hundred cancels (each waits on a log sync, slow on a loaded machine).
 * @unit characters
 */
const ID_CHARS = 16_000;
const cancelId = (i: number) => `cancel-${i}-`.padEnd(ID_CHARS, "x");
const TOKEN = "bounded-in-flight-test-token-0123456789";
/** A turn that streams for minutes: the turns started after it wait in the inbox. */
const slow = parseScriptedModel({ turns: [{ steps: [{ text: "x".repeat(60), chunkSize: 1, chunkDelayMs: 5_000 }] }] }, "slow");

type Message = Record<string, unknown> & { id?: number | string | null; method?: string; result?: Record<string, unknown>; error?: { code: number } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One client-to-server text frame, masked with a zero key (so the payload goes as it is). */
function maskedText(payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x81, 0x80 | length]) : Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff]);
  return Buffer.concat([header, Buffer.alloc(4), payload]);
}

let host: MuseHost | undefined;
let server: WebSocketHostServer | undefined;
let socket: WebSocket | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  socket?.terminate();
  await host?.shutdown();
  await server?.close(500);
  host = undefined;
  server = undefined;
  socket = undefined;
});

describe("answers waiting on their log sync count toward the bound", () => {
  it(`${QUEUED} turn/cancel frames from a client that does not read: the host holds at most the bound plus one answer, then answers all once it reads again`, async () => {
    const logs: string[] = [];
    host = createHost({ models: new Map([["slow", slow]]), defaultModel: "slow", logger: (line) => logs.push(line) });
    server = await serveWebSocket(host, { token: TOKEN, maxSendQueueBytes: BOUND, stallTimeoutMs: 30_000, logger: (line) => logs.push(line) });
    const ws = new WebSocket(server.url, [MSP_SUBPROTOCOL, bearerSubprotocol(TOKEN)]);
    socket = ws;
    ws.on("error", () => {});
    await once(ws, "open");
    const messages: Message[] = [];
    let largest = 0;
    ws.on("message", (data) => {
      const text = String(data);
      const message = JSON.parse(text) as Message;
      if (message.method === undefined && typeof message.id === "string" && message.id.startsWith("cancel-"))
        largest = Math.max(largest, Buffer.byteLength(text));
      messages.push(message);
    });
    const answerOf = async (id: string): Promise<Message> => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const found = messages.find((m) => m.id === id && m.method === undefined);
        if (found !== undefined) return found;
        await sleep(10);
      }
      throw new Error(`no answer to ${id} (${messages.length} messages read)`);
    };
    const request = (id: string, method: string, params: Record<string, unknown>) => ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));

    // A session whose first turn runs for minutes, and QUEUED turns waiting behind it.
    request("create", "session/create", {});
    const sessionId = String((await answerOf("create")).result?.["sessionId"]);
    const turnIds: string[] = [];
    for (let i = 0; i <= QUEUED; i++) {
      const commandId = `0190a0b0-0000-7000-8000-${String(i).padStart(12, "0")}`;
      turnIds.push(commandId);
      request(`start-${i}`, "turn/start", { sessionId, commandId, input: [{ type: "text", text: "go" }] });
    }
    expect((await answerOf(`start-${QUEUED}`)).result?.["disposition"]).toBe("queued");

    // Stop reading, then cancel every queued turn in one write: each answer waits on its sync.
    const tcp = (ws as unknown as { _socket: Socket })._socket;
    tcp.pause();
    const frames = turnIds
      .slice(1)
      .map((turnId, i) => maskedText(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: cancelId(i), method: "turn/cancel", params: { sessionId, turnId } }))));
    tcp.write(Buffer.concat(frames));
    // Until the kernel's buffers are full and the host holds past half its bound (at once before the fix).
    const filled = Date.now() + 60_000;
    while (server.heldBytesHighWater <= BOUND / 2 && Date.now() < filled) await sleep(50);
    await sleep(500);
    const heldWhilePaused = server.heldBytesHighWater;

    tcp.resume();
    for (let i = 0; i < QUEUED; i++) expect((await answerOf(cancelId(i))).result?.["turnId"]).toBe(turnIds[i + 1]);
    const answerBytes = largest + 4; // with its WebSocket frame header
    console.log(
      `bound ${BOUND} B, one turn/cancel answer ${answerBytes} B, ${QUEUED} owed answers: the host held at most ${heldWhilePaused} B while the client did not read (${server.heldBytesHighWater} B in all)`,
    );
    expect(heldWhilePaused).toBeGreaterThan(BOUND / 2);
    expect(heldWhilePaused).toBeLessThanOrEqual(BOUND + answerBytes);
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
    // Every cancel answered once; never closed for a stall.
    expect(messages.filter((m) => typeof m.id === "string" && m.id.startsWith("cancel-")).length).toBe(QUEUED);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    expect(logs.join("\n")).not.toMatch(/4008|not reading/);
  }, 240_000);

  it(`the same over the stdio transport (NDJSON on a TCP socket): ${QUEUED} turn/cancel lines, at most the bound plus one answer held`, async () => {
    host = createHost({ models: new Map([["slow", slow]]), defaultModel: "slow" });
    const served = host;
    let transport: MessageTransport | undefined;
    const listener: Server = createServer((sock) => {
      transport = createStdioTransport(sock, sock, { maxHeldBytes: BOUND });
      served.connect(transport);
      cleanups.push(() => sock.destroy());
    });
    listener.listen(0, "127.0.0.1");
    await once(listener, "listening");
    cleanups.push(() => new Promise((resolve) => listener.close(resolve)));
    const address = listener.address();
    const client = connect(typeof address === "object" && address !== null ? address.port : 0, "127.0.0.1");
    await once(client, "connect");
    cleanups.push(() => client.destroy());
    const messages: Message[] = [];
    let largest = 0;
    const lines = new LineSplitter((line) => {
      const message = JSON.parse(line) as Message;
      if (message.method === undefined && typeof message.id === "string" && message.id.startsWith("cancel-"))
        largest = Math.max(largest, Buffer.byteLength(line) + 1);
      messages.push(message);
    });
    client.on("data", (chunk: Buffer) => lines.push(chunk));
    const answerOf = async (id: string): Promise<Message> => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const found = messages.find((m) => m.id === id && m.method === undefined);
        if (found !== undefined) return found;
        await sleep(10);
      }
      throw new Error(`no answer to ${id} (${messages.length} messages read)`);
    };
    const line = (id: string, method: string, params: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

    client.write(line("create", "session/create", {}));
    const sessionId = String((await answerOf("create")).result?.["sessionId"]);
    const turnIds = Array.from({ length: QUEUED + 1 }, (_, i) => `0190a0b0-0000-7000-8000-${String(i).padStart(12, "0")}`);
    client.write(turnIds.map((commandId, i) => line(`start-${i}`, "turn/start", { sessionId, commandId, input: [{ type: "text", text: "go" }] })).join(""));
    expect((await answerOf(`start-${QUEUED}`)).result?.["disposition"]).toBe("queued");

    client.pause();
    client.write(
      turnIds
        .slice(1)
        .map((turnId, i) => line(cancelId(i), "turn/cancel", { sessionId, turnId }))
        .join(""),
    );
    const filled = Date.now() + 60_000;
    while ((transport?.heldBytesHighWater ?? 0) <= BOUND / 2 && Date.now() < filled) await sleep(50);
    await sleep(500);
    const heldWhilePaused = transport?.heldBytesHighWater ?? 0;

    client.resume();
    for (let i = 0; i < QUEUED; i++) expect((await answerOf(cancelId(i))).result?.["turnId"]).toBe(turnIds[i + 1]);
    console.log(
      `stdio: bound ${BOUND} B, one turn/cancel answer ${largest} B, ${QUEUED} owed answers: the host held at most ${heldWhilePaused} B while the client did not read`,
    );
    expect(heldWhilePaused).toBeGreaterThan(BOUND / 2);
    expect(heldWhilePaused).toBeLessThanOrEqual(BOUND + largest);
    expect(transport?.heldBytesHighWater).toBeLessThanOrEqual(BOUND + largest);
    expect(messages.filter((m) => typeof m.id === "string" && m.id.startsWith("cancel-")).length).toBe(QUEUED);
  }, 240_000);
});
