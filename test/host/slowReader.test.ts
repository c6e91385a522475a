/**
 * Issue 19 part 3 over real WebSockets on 127.0.0.1 (the host in this process, `serveWebSocket`,
 * and raw `ws` clients): a client that reads slowly falls behind and is fed from the session log,
 * getting every notification once, in cursor order, with what the host holds for it bounded; a
 * client that stops reading is closed with 4008 after the stall timeout; a resume whose replay is
 * far bigger than the bound completes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { notificationMessage } from "../../packages/host/src/server/jsonRpc.js";
import { parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { createHost, type MuseHost } from "../../packages/host/src/server/museHost.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { serveWebSocket, type WebSocketHostServer } from "../../packages/host/src/transport/webSocketServer.js";
import { parseViewCursor } from "../../packages/protocol/src/cursor.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";

/** @unit bytes: the bound under test, well below one turn's stream (about 24 MB) and above its largest message (about 120 KB) */
const BOUND = 256 * 1024;
const TOKEN = "slow-reader-test-token-0123456789";
const input = [{ type: "text", text: "go" }];

/** A message of 6 MB in 2 000 appends (MSP 2.0: each carries its 3 000 characters), and its 6 MB item/completed: about 12.7 MB in all. */
const flood = parseScriptedModel({ turns: [{ steps: [{ text: "many slow words ".repeat(375_000), chunkSize: 3_000 }] }] }, "flood");
/**
 * A message of 6 MB in 400 appends, one every 10 ms (four seconds or more, about 12 MB with its
 * item/completed): a reader that stops for a second at a time outruns the kernel's socket buffers,
 * falls behind, catches up, and falls behind again.
 */
const trickle = parseScriptedModel({ turns: [{ steps: [{ text: "many slow words ".repeat(375_000), chunkSize: 15_000, chunkDelayMs: 10 }] }] }, "trickle");

type Message = Record<string, unknown> & { id?: number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

/** A raw `ws` client that keeps every text frame it reads, and can stop reading (its TCP socket paused). */
class RawClient {
  readonly texts: string[] = [];
  readonly messages: Message[] = [];
  readonly closed: Promise<number>;
  #nextId = 1;
  #listeners = new Set<() => void>();
  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const text = String(data);
      this.texts.push(text);
      this.messages.push(JSON.parse(text) as Message);
      for (const listener of [...this.#listeners]) listener();
    });
    socket.on("error", () => {});
    this.closed = new Promise((resolve) => socket.once("close", (code) => resolve(code)));
  }

  static async open(server: WebSocketHostServer): Promise<RawClient> {
    const socket = new WebSocket(server.url, [MSP_SUBPROTOCOL, bearerSubprotocol(TOKEN)]);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const client = new RawClient(socket);
    open.push(client);
    return client;
  }

  /** Stops reading: the kernel's buffers fill, then the host's. */
  pause(): void {
    (this.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resume(): void {
    (this.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  send(method: string, params: Record<string, unknown>): number {
    const id = this.#nextId++;
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return id;
  }

  async request(method: string, params: Record<string, unknown>): Promise<Message> {
    const id = this.send(method, params);
    return this.waitFor((m) => m.id === id && m.method === undefined, `the answer to ${method}`);
  }

  waitFor(predicate: (m: Message) => boolean, what: string, timeoutMs = 60_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.messages.find(predicate);
        if (found === undefined) return;
        clearTimeout(timer);
        this.#listeners.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(check);
        reject(new Error(`timed out waiting for ${what} (${this.messages.length} messages read)`));
      }, timeoutMs);
      this.#listeners.add(check);
      check();
    });
  }

  close(): void {
    this.resume();
    this.socket.terminate();
  }
}

const open: Array<{ close(): unknown }> = [];
let host: MuseHost | undefined;
let server: WebSocketHostServer | undefined;
afterEach(async () => {
  for (const thing of open.splice(0)) thing.close();
  await host?.shutdown();
  await server?.close(500);
  host = undefined;
  server = undefined;
});

async function start(stallTimeoutMs = 30_000): Promise<{ server: WebSocketHostServer; host: MuseHost; logs: string[] }> {
  const logs: string[] = [];
  host = createHost({
    models: new Map([
      ["flood", flood],
      ["trickle", trickle],
    ]),
    defaultModel: "flood",
    logger: (line) => logs.push(line),
  });
  server = await serveWebSocket(host, { token: TOKEN, maxSendQueueBytes: BOUND, stallTimeoutMs, logger: (line) => logs.push(line) });
  return { server, host, logs };
}

/** Sleeps `ms` milliseconds. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Checks that `client` read the session's notifications after cursor `after` exactly once each,
 * in cursor order, each exactly as the log holds it (as the wire carries it); returns how many.
 */
function expectWholeStream(client: RawClient, dataDir: string, sessionId: string, after: number): number {
  const logged = [...readSessionLog(sessionLogPath(dataDir, sessionId))].filter(
    (r): r is Extract<typeof r, { type: "notification" }> => r.type === "notification" && r.n > after,
  );
  const heard = client.texts.filter((_, i) => client.messages[i]?.method !== undefined && client.messages[i]?.params?.["sessionId"] === sessionId);
  const cursors = heard.map((text) => parseViewCursor(String((JSON.parse(text) as Message).params?.["viewCursor"]), sessionId));
  expect(cursors).toEqual(logged.map((r) => r.n));
  expect(cursors).toEqual(Array.from({ length: cursors.length }, (_, i) => after + 1 + i));
  for (const [i, record] of logged.entries()) {
    if (heard[i] !== JSON.stringify(notificationMessage(record.method, record.params))) expect.fail(`notification ${record.n} differs from the log`);
  }
  return heard.length;
}

/** The largest frame a client read. @unit bytes */
const largest = (client: RawClient) => Math.max(...client.texts.map((t) => Buffer.byteLength(t)));
const totalBytes = (client: RawClient) => client.texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);

describe("slow readers over WebSocket", () => {
  it("a client that reads slowly gets every notification once, in cursor order, no 4008, and the host held at most the bound plus one message", async () => {
    const { server, host, logs } = await start();
    const client = await RawClient.open(server);
    const sessionId = String((await client.request("session/create", { model: "trickle" })).result?.["sessionId"]);
    client.send("turn/start", { sessionId, input });
    await client.waitFor((m) => m.method === "item/delta", "the first item/delta");
    // Read in fits and starts while the host streams: stop for a while, read for a moment, again.
    for (let i = 0; i < 5; i++) {
      client.pause();
      await sleep(1_000);
      client.resume();
      await sleep(100);
    }
    const terminal = await client.waitFor((m) => m.method === "turn/completed", "turn/completed");
    expect(terminal.params?.["terminal"]).toBe("completed");
    const count = expectWholeStream(client, host.dataDir, sessionId, 0);
    expect(count).toBeGreaterThan(400);
    // The stream was far bigger than the bound, and what the host held stayed within it plus one message.
    expect(totalBytes(client)).toBeGreaterThan(40 * BOUND);
    // It went behind (what the host held reached the bound) and was fed from the log, within the bound plus one message.
    expect(server.heldBytesHighWater).toBeGreaterThan(BOUND - largest(client));
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + largest(client) + 16);
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect(logs.join("\n")).not.toMatch(/4008|not reading/);
  }, 120_000);

  it("a client that stops reading is closed with 4008 once it drained nothing for the stall timeout; the log line says for how long and how many bytes", async () => {
    const { server, logs } = await start(500);
    const client = await RawClient.open(server);
    const witness = await RawClient.open(server);
    const sessionId = String((await client.request("session/create", {})).result?.["sessionId"]);
    client.pause();
    client.send("turn/start", { sessionId, input });
    const deadline = Date.now() + 60_000;
    while (!logs.some((line) => line.includes("not reading")) && Date.now() < deadline) await sleep(50);
    const line = logs.find((l) => l.includes("not reading")) ?? "";
    const match =
      /closed a WebSocket connection that is not reading: no progress for (\d+) ms with (\d+) bytes held for it \(stall timeout 500 ms, close 4008/.exec(line);
    expect(match, line).not.toBeNull();
    expect(Number(match?.[1])).toBeGreaterThanOrEqual(500);
    expect(Number(match?.[2])).toBeGreaterThan(0);
    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + 121_000); // the largest message: 120 000 characters of text and its envelope
    client.resume();
    // The close frame follows what was in flight; a client that took over a second to come back finds the socket dropped.
    expect([4008, 1006]).toContain(await client.closed);
    // The other client was never touched.
    expect((await witness.request("host/info", {})).result?.["name"]).toBe("muse-host");
  }, 120_000);

  it("a resume whose replay is far bigger than the bound completes with every record, from the start and from the middle of a streamed item", async () => {
    const { server, host, logs } = await start();
    const first = await RawClient.open(server);
    const sessionId = String((await first.request("session/create", {})).result?.["sessionId"]);
    first.send("turn/start", { sessionId, input });
    await first.waitFor((m) => m.method === "turn/completed", "turn/completed");
    const last = expectWholeStream(first, host.dataDir, sessionId, 0);
    first.close();

    // A reload: a new connection resumes the whole session, reading slowly at first.
    const reload = await RawClient.open(server);
    const id = reload.send("session/resume", { sessionId });
    reload.pause();
    await sleep(1_000);
    reload.resume();
    const answer = await reload.waitFor((m) => m.id === id, "the resume's answer");
    expect(answer.result?.["replayed"]).toBe(last);
    await reload.waitFor((m) => m.method === "turn/completed", "the replayed turn/completed");
    expect(expectWholeStream(reload, host.dataDir, sessionId, 0)).toBe(last);
    expect(totalBytes(reload)).toBeGreaterThan(40 * BOUND);

    // From a cursor in the middle of the message: each replayed update is whole again (its log line is a delta).
    const middle = await RawClient.open(server);
    const after = Math.floor(last / 2);
    const resumed = await middle.request("session/resume", { sessionId, afterCursor: `v:${sessionId}:${after}` });
    expect(resumed.result?.["replayed"]).toBe(last - after);
    await middle.waitFor((m) => m.method === "turn/completed", "the replayed turn/completed");
    expect(expectWholeStream(middle, host.dataDir, sessionId, after)).toBe(last - after);

    expect(server.heldBytesHighWater).toBeLessThanOrEqual(BOUND + Math.max(largest(reload), largest(first)) + 16);
    expect(logs.join("\n")).not.toMatch(/4008|not reading|stopped/);
  }, 120_000);
});
