/**
 * Issue 20 over real sockets on 127.0.0.1: a client that stops reading and floods the host with
 * frames that each get a reply (binary frames: -32600; `host/info`; malformed JSON: -32700) cannot
 * make the host hold more than the bound plus one message for it. Past the bound the host stops
 * reading that connection until it drains, so the client's own sends back up in TCP; requests
 * already read are answered, in order, once there is room; a WebSocket that never drains is closed
 * with 4008 after the stall timeout, and a witness client is never touched. The same over the
 * stdio transport (NDJSON on a TCP socket here, whose client never reads its answers).
 */
import { once } from "node:events";
import { createServer, type Server, type Socket, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { errorResponse, JsonRpcErrorCodes, messageJson } from "../../packages/host/src/server/jsonRpc.js";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import { parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { createStdioTransport } from "../../packages/host/src/transport/stdioTransport.js";
import { serveWebSocket, type WebSocketHostServer } from "../../packages/host/src/transport/webSocketServer.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";

/** @unit bytes: the bound under test */
const BOUND = 64 * 1024;
const TOKEN = "bounded-replies-test-token-0123456789";
const model = parseScriptedModel({ turns: [{ steps: [{ text: "hello" }] }] }, "hello");
/** The reply to one binary frame, as the host sends it. @unit bytes, with its 4-byte WebSocket frame header */
const BINARY_REPLY_BYTES =
  Buffer.byteLength(
    messageJson(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request: binary frames are not MSP; send one JSON-RPC message per text frame")),
  ) + 4;

type Message = Record<string, unknown> & { id?: number | null; result?: Record<string, unknown>; error?: { code: number } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One client-to-server WebSocket frame, masked with a zero key (so the payload goes as it is).
 * `opcode` 1 is text, 2 binary.
 */
function maskedFrame(opcode: 1 | 2, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length]) : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]);
  return Buffer.concat([header, Buffer.alloc(4), payload]);
}

/** A raw `ws` client that keeps every text frame it reads, can stop reading, and can write raw frames to its TCP socket. */
class RawClient {
  readonly messages: Message[] = [];
  /** @unit bytes of the largest frame read */
  largest = 0;
  readonly closed: Promise<number>;
  #listeners = new Set<(m: Message) => void>();
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const text = String(data);
      this.largest = Math.max(this.largest, Buffer.byteLength(text));
      const message = JSON.parse(text) as Message;
      this.messages.push(message);
      for (const listener of [...this.#listeners]) listener(message);
    });
    socket.on("error", () => {});
    this.closed = new Promise((resolve) => socket.once("close", (code) => resolve(code)));
  }

  static async open(server: WebSocketHostServer): Promise<RawClient> {
    const socket = new WebSocket(server.url, [MSP_SUBPROTOCOL, bearerSubprotocol(TOKEN)]);
    await once(socket, "open");
    const client = new RawClient(socket);
    cleanups.push(() => client.close());
    return client;
  }

  get tcp(): Socket {
    return (this.socket as unknown as { _socket: Socket })._socket;
  }

  /** Stops reading: the kernel's buffers fill, then the host's. */
  pause(): void {
    this.tcp.pause();
  }

  resume(): void {
    this.tcp.resume();
  }

  /** Writes `count` copies of `frame` straight to the TCP socket, in writes of 10 000 frames. */
  flood(frame: Buffer, count: number): void {
    for (let sent = 0; sent < count; sent += 10_000) this.tcp.write(Buffer.concat(Array.from({ length: Math.min(10_000, count - sent) }, () => frame)));
  }

  async request(method: string, id: number): Promise<Message> {
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: {} }));
    return this.waitFor((m) => m.id === id, `the answer to ${method}`);
  }

  waitFor(predicate: (m: Message) => boolean, what: string, timeoutMs = 60_000): Promise<Message> {
    const found = this.messages.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = (message: Message) => {
        if (!predicate(message)) return;
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve(message);
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        reject(new Error(`timed out waiting for ${what} (${this.messages.length} messages read)`));
      }, timeoutMs);
      this.#listeners.add(check);
    });
  }

  close(): void {
    this.resume();
    this.socket.terminate();
  }
}

const cleanups: Array<() => unknown> = [];
let host: MuseHost | undefined;
let server: WebSocketHostServer | undefined;
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await host?.shutdown();
  await server?.close(500);
  host = undefined;
  server = undefined;
});

async function start(stallTimeoutMs: number): Promise<{ server: WebSocketHostServer; logs: string[] }> {
  const logs: string[] = [];
  host = createHost({ models: new Map([["hello", model]]), defaultModel: "hello", logger: (line) => logs.push(line) });
  server = await serveWebSocket(host, { token: TOKEN, maxSendQueueBytes: BOUND, stallTimeoutMs, logger: (line) => logs.push(line) });
  return { server, logs };
}

/** Waits until a log line says a connection was closed for not reading; returns it. */
async function stallLine(logs: string[]): Promise<string> {
  const deadline = Date.now() + 60_000;
  while (!logs.some((line) => line.includes("not reading")) && Date.now() < deadline) await sleep(50);
  return logs.find((line) => line.includes("not reading")) ?? "";
}

const hostInfo = (id: number) => Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method: "host/info" }));

describe("replies are bounded: a client that sends and never reads", () => {
  it("300 000 one-byte binary frames: the host holds at most the bound plus one reply, stops reading, and closes it with 4008", async () => {
    const { server, logs } = await start(2_000);
    const witness = await RawClient.open(server);
    const client = await RawClient.open(server);
    client.pause();
    client.flood(maskedFrame(2, Buffer.from([0])), 300_000);
    const line = await stallLine(logs);
    expect(line).toMatch(/close 4008/);
    // Before issue 20's fix the host read every frame and held 40 MB of -32600 replies for it.
    expect(server.heldBytesHighWater).toBeGreaterThan(BOUND / 2);
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + BINARY_REPLY_BYTES);
    client.resume();
    expect([4008, 1006]).toContain(await client.closed);
    expect(client.messages.every((m) => m.error?.code === JsonRpcErrorCodes.invalidRequest)).toBe(true);
    expect((await witness.request("host/info", 1)).result?.["name"]).toBe("muse-host");
  }, 120_000);

  it("host/info requests and malformed JSON: at most the bound plus one answer, then 4008; the witness is served", async () => {
    const { server, logs } = await start(2_000);
    const witness = await RawClient.open(server);
    await witness.request("host/info", 1);
    const answerBytes = witness.largest + 4;
    const client = await RawClient.open(server);
    client.pause();
    const pair = Buffer.concat([maskedFrame(1, hostInfo(7)), maskedFrame(1, Buffer.from("{"))]);
    client.flood(pair, 50_000);
    expect(await stallLine(logs)).toMatch(/close 4008/);
    expect(server.heldBytesHighWater).toBeGreaterThan(BOUND / 2);
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
    client.resume();
    expect([4008, 1006]).toContain(await client.closed);
    expect((await witness.request("host/info", 2)).result?.["name"]).toBe("muse-host");
  }, 120_000);

  it("a client that pauses while 40 000 requests are answered gets every answer once, in order, when it reads again; never closed", async () => {
    const { server, logs } = await start(20_000);
    const client = await RawClient.open(server);
    await client.request("host/info", 0);
    const answerBytes = client.largest + 4;
    client.pause();
    const count = 40_000;
    for (let from = 1; from <= count; from += 10_000) {
      client.tcp.write(Buffer.concat(Array.from({ length: 10_000 }, (_, i) => maskedFrame(1, hostInfo(from + i)))));
    }
    await sleep(1_500);
    expect(server.heldBytesHighWater).toBeGreaterThan(BOUND / 2);
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
    client.resume();
    await client.waitFor((m) => m.id === count, "the last answer");
    expect(client.messages.map((m) => m.id)).toEqual(Array.from({ length: count + 1 }, (_, i) => i));
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect(logs.join("\n")).not.toMatch(/4008|not reading/);
  }, 120_000);
});

describe("replies are bounded over the stdio transport", () => {
  /** A host serving one NDJSON connection on a TCP socket with `createStdioTransport`; resolves the client socket. */
  async function stdioPair(): Promise<{ client: Socket; transport: MessageTransport; handled: () => number; endedAfter: Promise<number> }> {
    host = createHost({ models: new Map([["hello", model]]), defaultModel: "hello" });
    const served = host;
    let handled = 0;
    let transport: MessageTransport | undefined;
    let ended: (n: number) => void = () => {};
    const endedAfter = new Promise<number>((resolve) => (ended = resolve));
    const listener: Server = createServer({ allowHalfOpen: true }, (socket) => {
      const inner = createStdioTransport(socket, socket, { maxHeldBytes: BOUND });
      // Counts the messages the host was handed, to see when the end of input is told.
      const counted = Object.create(inner) as MessageTransport;
      counted.onMessage = (callback) => inner.onMessage((text) => (handled++, callback(text)));
      counted.onClose(() => ended(handled));
      transport = inner;
      served.connect(counted);
      cleanups.push(() => socket.destroy());
    });
    listener.listen(0, "127.0.0.1");
    await once(listener, "listening");
    cleanups.push(() => new Promise((resolve) => listener.close(resolve)));
    const address = listener.address();
    const client = connect(typeof address === "object" && address !== null ? address.port : 0, "127.0.0.1");
    await once(client, "connect");
    cleanups.push(() => client.destroy());
    while (transport === undefined) await sleep(10);
    return { client, transport, handled: () => handled, endedAfter };
  }

  it("40 000 host/info lines from a client that does not read: the host holds at most the bound plus one answer, answers all in order, and tells the end of input after the last", async () => {
    const { client, transport, endedAfter } = await stdioPair();
    const answers: Message[] = [];
    const lines = new LineSplitter((line) => answers.push(JSON.parse(line) as Message));
    client.on("data", (chunk: Buffer) => lines.push(chunk));
    client.pause();
    const count = 40_000;
    client.end(Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.from(`${hostInfo(i + 1).toString()}\n`))));
    await sleep(1_500);
    const answerBytes = 1_024; // host/info's answer is a few hundred bytes
    expect(transport.heldBytesHighWater).toBeGreaterThan(BOUND / 2);
    expect(transport.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
    client.resume();
    const deadline = Date.now() + 60_000;
    while (answers.length < count && Date.now() < deadline) await sleep(50);
    expect(answers.map((m) => m.id)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(await endedAfter).toBe(count);
    expect(transport.heldBytesHighWater).toBeLessThanOrEqual(BOUND + answerBytes);
  }, 120_000);
});
