/**
 * connectWebSocket over real sockets: a `ws` WebSocketServer on 127.0.0.1 (port 0) plays the host,
 * and the client gets the `ws` package's WebSocket class injected, as on Node 20.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer, type RawData, type WebSocket as HostSocket } from "ws";
import { cancelTurn, MspError, type MspClient } from "../../src/index.js";
import { StopController, type StopState } from "../../src/ui/index.js";
import { connectWebSocket, type WebSocketConnectOptions, type WebSocketConstructor } from "../../src/websocket/index.js";
import { bearerTokenOf } from "../../packages/protocol/src/index.js";

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const open: Array<{ close(): unknown }> = [];

afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** What the host saw of one upgrade request. */
interface Upgrade {
  url: string;
  protocols: string[];
}

/** A `ws` server on 127.0.0.1:0 that runs `onConnection` for every client; its url and the upgrades it saw. */
async function host(onConnection: (socket: HostSocket) => void, options: ConstructorParameters<typeof WebSocketServer>[0] = {}) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, ...options });
  const upgrades: Upgrade[] = [];
  const sockets: HostSocket[] = [];
  server.on("connection", (socket: HostSocket, request: IncomingMessage) => {
    sockets.push(socket);
    upgrades.push({ url: request.url ?? "", protocols: String(request.headers["sec-websocket-protocol"] ?? "").split(/\s*,\s*/) });
    onConnection(socket);
  });
  await once(server, "listening");
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of server.clients) socket.terminate();
        server.close(() => resolve());
      }),
  });
  const { port } = server.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}/`, upgrades, sockets, server };
}

/** Connect with `ws` injected; the client is closed after the test. */
async function connect(url: string, options: WebSocketConnectOptions = {}): Promise<MspClient> {
  const client = await connectWebSocket(url, { WebSocket, handshakeTimeoutMs: 5_000, defaultTimeoutMs: 5_000, ...options });
  open.push(client);
  return client;
}

type Json = Record<string, unknown>;

function parse(data: RawData): Json {
  return JSON.parse(String(data)) as Json;
}

/**
 * A small scripted MSP host: session/create, turn/start (turn/started, a message item that
 * streams), and turn/cancel (accepted, then the item completes cancelled and the turn's own
 * terminal follows). It records every method it was sent.
 */
function mspHost(received: string[]) {
  return (socket: HostSocket) => {
    let cursor = 0;
    const ended = new Set<string>();
    const send = (message: Json) => socket.send(JSON.stringify({ jsonrpc: "2.0", ...message }));
    const notify = (method: string, params: Json) =>
      send({ method, params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, ...params }, emittedAtMs: Date.now() });
    const item = (turnId: string, revision: number, status: string, text: string) => ({
      item: { itemId: `${turnId}:m`, kind: "message", turnId, revision, status, text },
    });
    socket.on("message", (data) => {
      const { id, method, params } = parse(data) as { id: number; method: string; params: Json };
      received.push(method);
      const commandId = params["commandId"] as string;
      if (method === "session/create") send({ id, result: { status: "accepted", commandId, sessionId: SESSION, model: "scripted" } });
      if (method === "turn/start") {
        send({ id, result: { status: "accepted", commandId, turnId: commandId, startedNewTurn: true, disposition: "started" } });
        notify("turn/started", { turnId: commandId });
        notify("item/started", item(commandId, 1, "inProgress", ""));
        notify("item/updated", item(commandId, 2, "inProgress", "Hel"));
        notify("item/updated", item(commandId, 3, "inProgress", "Hello"));
      }
      if (method === "turn/cancel") {
        const turnId = params["turnId"] as string;
        if (ended.has(turnId)) {
          send({ id, error: { code: -32001, message: "already terminal", data: { commandId, reason: "already_terminal", turnId, terminal: "cancelled" } } });
          return;
        }
        ended.add(turnId);
        send({ id, result: { status: "accepted", commandId, turnId } });
        setTimeout(() => {
          notify("item/completed", item(turnId, 4, "cancelled", "Hello"));
          notify("turn/completed", { turnId, terminal: "cancelled", reason: "cancelled by the user", cause: { kind: "user" }, durationMs: 7 });
        }, 20);
      }
    });
  };
}

/** A TCP server that accepts and never answers: a WebSocket handshake to it hangs. */
async function silentServer(): Promise<{ url: string; accepted: Socket[]; closed: Socket[] }> {
  const accepted: Socket[] = [];
  const closed: Socket[] = [];
  const server: Server = createServer((socket) => {
    accepted.push(socket);
    socket.resume().on("close", () => closed.push(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of accepted) socket.destroy();
        server.close(() => resolve());
      }),
  });
  return { url: `ws://127.0.0.1:${(server.address() as { port: number }).port}/`, accepted, closed };
}

async function rejection(promise: Promise<unknown>): Promise<MspError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!MspError.is(outcome)) throw new Error(`expected an MspError, got ${String(outcome)}`);
  return outcome;
}

describe("connectWebSocket: the handshake", () => {
  it("takes the DOM's WebSocket class (browsers, Node >= 22) and the ws package's, by type", () => {
    // Checked by tsc: both satisfy the structural WebSocketConstructor without a cast.
    const classes: WebSocketConstructor[] = [WebSocket, ...(typeof globalThis.WebSocket === "function" ? [globalThis.WebSocket] : [])];
    expect(classes.length).toBeGreaterThan(0);
  });

  it("offers msp.v1 and the token as bearer.msp.<base64url>, never in the URL, and resolves once open", async () => {
    const { url, upgrades } = await host(() => {});
    const token = "s3cret+/=token, with spaces";
    const client = await connect(`${url}msp`, { token });
    expect(client.isClosed).toBe(false);
    const [upgrade] = upgrades;
    expect(upgrade?.url).toBe("/msp");
    expect(upgrade?.url).not.toContain("s3cret");
    expect(upgrade?.protocols[0]).toBe("msp.v1");
    expect(upgrade?.protocols[1]).toMatch(/^bearer\.msp\.[A-Za-z0-9_-]+$/);
    expect(bearerTokenOf(upgrade?.protocols ?? [])).toBe(token);

    await connect(url);
    expect(upgrades[1]?.protocols).toEqual(["msp.v1"]);
  });

  it("a refused handshake (HTTP 401) rejects with connectionClosed and its close code, and nothing escapes unhandled", async () => {
    const { url } = await host(() => {}, { verifyClient: (_info, done) => done(false, 401, "Unauthorized") });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const error = await rejection(connectWebSocket(url, { WebSocket, token: "wrong" }));
      expect(error.kind).toBe("connectionClosed");
      expect(error.message).toMatch(/^connectWebSocket: the WebSocket handshake failed: .*401/);
      expect(error.data).toMatchObject({ closeCode: 1006, closeReason: "" });
      expect((error.data as { reason: string }).reason).toContain("401");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a host that selects another subprotocol is a protocol error, and the socket is closed with 4002", async () => {
    const closes: number[] = [];
    const { url } = await host((socket) => socket.on("close", (code) => closes.push(code)), { handleProtocols: (offered) => [...offered][1] ?? false });
    const error = await rejection(connectWebSocket(url, { WebSocket, token: "t" }));
    expect(error.kind).toBe("protocol");
    expect(error.message).toContain('selected the subprotocol "bearer.msp.dA", not msp.v1');
    await expect.poll(() => closes).toEqual([4002]);
  });

  it("a handshake that does not complete in handshakeTimeoutMs rejects with timeout, and the socket is closed", async () => {
    const { url, accepted, closed } = await silentServer();
    const started = performance.now();
    const error = await rejection(connectWebSocket(url, { WebSocket, handshakeTimeoutMs: 150 }));
    expect(error.kind).toBe("timeout");
    expect(error.data).toEqual({ timeoutMs: 150 });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(accepted).toHaveLength(1);
    await expect.poll(() => closed.length).toBe(1);
  });

  it("an abort rejects with aborted (cause: the signal's reason), closes the socket, and leaves no abort listener", async () => {
    const { url, accepted, closed } = await silentServer();
    const controller = new AbortController();
    let listeners = 0;
    const { signal } = controller;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => ((listeners += 1), add(...args))) as typeof add;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => ((listeners -= 1), remove(...args))) as typeof remove;
    const pending = rejection(connectWebSocket(url, { WebSocket, signal }));
    await expect.poll(() => accepted.length).toBe(1);
    controller.abort(new Error("the user left"));
    const error = await pending;
    expect(error.kind).toBe("aborted");
    expect((error.cause as Error).message).toBe("the user left");
    await expect.poll(() => closed.length).toBe(1);
    expect(listeners).toBe(0);

    // Already aborted: no socket is opened at all.
    const again = await rejection(connectWebSocket(url, { WebSocket, signal: AbortSignal.abort() }));
    expect(again.kind).toBe("aborted");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(accepted).toHaveLength(1);
  });

  it("rejects bad arguments with a TypeError or RangeError before opening anything", async () => {
    await expect(connectWebSocket("ws://127.0.0.1:1/", { WebSocket, token: "" })).rejects.toThrow(TypeError);
    await expect(connectWebSocket("ws://127.0.0.1:1/", { WebSocket, handshakeTimeoutMs: -1 })).rejects.toThrow(RangeError);
    await expect(connectWebSocket("ws://127.0.0.1:1/", { WebSocket, maxBufferedBytes: Number.NaN })).rejects.toThrow(RangeError);
    await expect(connectWebSocket("not a url", { WebSocket })).rejects.toThrow(SyntaxError);
    // A capacity below 1 is refused before a socket exists (one would be left open).
    let opened = 0;
    const counting = function () {
      opened += 1;
      throw new Error("no socket may be opened");
    } as unknown as WebSocketConstructor;
    await expect(connectWebSocket("ws://127.0.0.1:1/", { WebSocket: counting, terminalCapacity: 0 })).rejects.toThrow(RangeError);
    expect(opened).toBe(0);
    // Node 20 has no global WebSocket: the class must be injected.
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      await expect(connectWebSocket("ws://127.0.0.1:1/")).rejects.toThrow(/no global WebSocket: pass options.WebSocket/);
    } finally {
      if (saved !== undefined) global.WebSocket = saved;
    }
  });
});

describe("connectWebSocket: an MSP exchange", () => {
  it("session/create, turn/start, streamed items, Stop (turn/cancel), turn/completed: recorder, ledger, cancelTurn and StopController unchanged", async () => {
    const received: string[] = [];
    const { url } = await host(mspHost(received));
    const client = await connect(url, { token: "t" });
    const events: string[] = [];
    client.events.on("notification", (n) => events.push(n.method));

    const { sessionId } = await client.command("session/create", {});
    expect(sessionId).toBe(SESSION);
    const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "hello" }] });
    const stop = new StopController(turn);
    const states: StopState[] = [stop.getSnapshot().state];
    stop.subscribe((s) => states.push(s.state));
    await turn.accepted;
    await expect.poll(() => (client.items.get(turn.commandId, `${turn.commandId}:m`) as { text?: string } | undefined)?.text).toBe("Hello");

    const [first, second] = [stop.stop(), stop.stop()]; // a double click
    expect(second).toBe(first);
    const final = await first;
    expect(final).toMatchObject({ state: "ended", ack: "accepted", turnCompleted: { turnId: turn.commandId, terminal: "cancelled", cause: { kind: "user" } } });
    expect(states).toEqual(["starting", "running", "stopping", "ended"]);
    expect(client.turns.get(turn.commandId)?.terminal).toBe("cancelled");
    expect(client.items.itemsOf(turn.commandId)).toEqual([expect.objectContaining({ status: "cancelled", text: "Hello", revision: 4 })]);
    expect(events).toEqual(["turn/started", "item/started", "item/updated", "item/updated", "item/completed", "turn/completed"]);
    expect(received).toEqual(["session/create", "turn/start", "turn/cancel"]);

    // cancelTurn on a turn that already ended: the host's already_terminal reads as done, with the turn's own terminal.
    const again = await cancelTurn(client, { sessionId, turnId: turn.commandId });
    expect(again).toMatchObject({ ack: "already_terminal", turnCompleted: { turnId: turn.commandId, terminal: "cancelled" } });
    expect(received).toEqual(["session/create", "turn/start", "turn/cancel", "turn/cancel"]);
  });
});

describe("connectWebSocket: frames", () => {
  it("a binary frame is a protocolError and is dropped; the next text frame still arrives", async () => {
    const { url, sockets } = await host(() => {});
    const client = await connect(url);
    const problems: string[] = [];
    const methods: string[] = [];
    client.events.on("protocolError", (e) => problems.push(e.data.problem));
    client.events.on("notification", (n) => methods.push(n.method));
    sockets[0]?.send(Buffer.from('{"jsonrpc":"2.0","method":"x/binary","params":{}}'), { binary: true });
    sockets[0]?.send(JSON.stringify({ jsonrpc: "2.0", method: "x/text", params: {} }));
    await expect.poll(() => methods).toEqual(["x/text"]);
    expect(problems).toEqual(["framing: a binary frame (49 bytes): MSP sends one JSON-RPC message per text frame"]);
    expect(client.isClosed).toBe(false);
  });

  it("a frame over maxMessageBytes is a protocolError and closes the connection; the host sees 4009", async () => {
    const closes: number[] = [];
    const { url, sockets } = await host((socket) => socket.on("close", (code) => closes.push(code)));
    const client = await connect(url, { maxMessageBytes: 1024 });
    const problems: string[] = [];
    client.events.on("protocolError", (e) => problems.push(e.data.problem));
    const pending = rejection(client.command("host/info", {}));
    // 1024 bytes of UTF-8 is fine; 1025 (a two-byte character at the end) is not.
    const fits = JSON.stringify({ jsonrpc: "2.0", method: "x/pad", params: { pad: "" } });
    sockets[0]?.send(fits.replace('""', `"${"a".repeat(1024 - fits.length)}"`));
    sockets[0]?.send(fits.replace('""', `"${"a".repeat(1024 - fits.length - 1)}é"`));
    const error = await pending;
    expect(error.kind).toBe("connectionClosed");
    expect(problems).toEqual(["framing: a message exceeds maxMessageBytes (1024 bytes)"]);
    expect((await client.closed).reason).toBe("framing lost: a message exceeds maxMessageBytes (1024 bytes)");
    await expect.poll(() => closes).toEqual([4009]);
  });

  it("the host's close code and reason land in CloseInfo and in connectionClosed data", async () => {
    const { url, sockets } = await host(() => {});
    const client = await connect(url);
    const pending = rejection(client.command("host/info", {}));
    sockets[0]?.close(4001, "session expired");
    const info = await client.closed;
    expect(info).toEqual({
      reason: "the host closed the connection (WebSocket close code 4001: session expired)",
      closeCode: 4001,
      closeReason: "session expired",
    });
    expect((await pending).data).toEqual(info);
  });

  it("a connection that is lost (no closing handshake) closes with 1006", async () => {
    const { url, sockets } = await host(() => {});
    const client = await connect(url);
    sockets[0]?.terminate();
    expect(await client.closed).toEqual({ reason: "the connection was lost (WebSocket close code 1006)", closeCode: 1006, closeReason: "" });
  });

  it("client.close() closes the socket with 1000", async () => {
    const closes: number[] = [];
    const { url } = await host((socket) => socket.on("close", (code) => closes.push(code)));
    const client = await connect(url);
    expect(await client.close()).toEqual({ reason: "closed by the client" });
    await expect.poll(() => closes).toEqual([1000]);
  });
});

describe("connectWebSocket: backpressure (real sockets; the host stops reading)", () => {
  /** `ws`'s class, recording the `bufferedAmount` at every frame the client hands it. */
  function recordingWebSocket() {
    const sends: number[] = [];
    class RecordingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        const send = this.send.bind(this) as (data: string) => void;
        this.send = ((data: string) => {
          sends.push(this.bufferedAmount);
          send(data);
        }) as WebSocket["send"];
      }
    }
    return { sends, RecordingWebSocket };
  }

  /** A command whose params are `bytes` of incompressible text. */
  function bigCommand(client: MspClient, bytes: number, timeoutMs = 30_000) {
    return client.command("x/upload", { blob: randomBytes(bytes * 0.75).toString("base64") }, { timeoutMs });
  }

  /** Issue big commands until the writer holds `held` of them back (the socket's buffer is over its bound). */
  async function fill(client: MspClient, sends: number[], held: number) {
    const commands: Array<Promise<unknown>> = [];
    while (commands.length - sends.length < held) {
      if (commands.length >= 400) throw new Error(`the socket never filled: ${sends.length} frames sent, buffered ${String(sends.at(-1))}`);
      commands.push(bigCommand(client, 128 * 1024).catch((e: unknown) => e));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return commands;
  }

  it("while bufferedAmount is over maxBufferedBytes, sends wait in order; once the host reads again, every command completes", async () => {
    const ids: number[] = [];
    const { url, sockets } = await host((socket) => {
      socket.pause();
      socket.on("message", (data) => {
        const { id, params } = parse(data) as { id: number; params: Json };
        ids.push(id);
        socket.send(JSON.stringify({ jsonrpc: "2.0", id, result: { status: "accepted", commandId: params["commandId"] } }));
      });
    });
    const { sends, RecordingWebSocket } = recordingWebSocket();
    const maxBufferedBytes = 64 * 1024;
    const client = await connect(url, { WebSocket: RecordingWebSocket, maxBufferedBytes });
    const commands = await fill(client, sends, 3);
    const handed = sends.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sends).toHaveLength(handed); // nothing more reaches the socket while the host does not read
    expect(Math.max(...sends)).toBeLessThanOrEqual(maxBufferedBytes); // a frame is handed over only at or under the bound

    sockets[0]?.resume();
    const outcomes = await Promise.all(commands);
    expect(outcomes.every((outcome) => !(outcome instanceof Error))).toBe(true);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toHaveLength(commands.length);
    expect(Math.max(...sends)).toBeLessThanOrEqual(maxBufferedBytes);
  });

  it("past maxWriteBufferBytes the connection closes: every command settles connectionClosed, and the host sees 4008", async () => {
    const closes: number[] = [];
    const { url, sockets } = await host((socket) => {
      socket.pause();
      socket.on("close", (code) => closes.push(code));
    });
    const { sends, RecordingWebSocket } = recordingWebSocket();
    const client = await connect(url, { WebSocket: RecordingWebSocket, maxBufferedBytes: 64 * 1024, maxWriteBufferBytes: 1024 * 1024 });
    const commands: Array<Promise<unknown>> = [];
    while (!client.isClosed) {
      if (commands.length >= 400) throw new Error(`never closed: ${sends.length} frames sent`);
      commands.push(bigCommand(client, 128 * 1024).catch((e: unknown) => e));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const info = await client.closed;
    expect(info.reason).toMatch(/^the host is not reading its input: \d+ bytes queued \(maxWriteBufferBytes 1048576\)$/);
    const outcomes = await Promise.all(commands);
    const kinds = new Set(outcomes.map((outcome) => (MspError.is(outcome) ? outcome.kind : "resolved")));
    expect(kinds).toEqual(new Set(["connectionClosed"]));
    sockets[0]?.resume();
    await expect.poll(() => closes, { timeout: 5_000 }).toEqual([4008]);
  });
});
