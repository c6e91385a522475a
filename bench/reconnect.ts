/**
 * Rows (r) and (r0), issue 21: from a socket drop to the first notification after the reconnect,
 * on loopback, through the real reference host (`muse-host serve --ws … --token-file … --data …
 * --script …`, a child process with its session logs on disk) and a TCP proxy in front of it.
 *
 * - (r) the session layer: `openSession` over `connectWebSocket` (the `ws` class), with
 *   `reconnect.initialDelayMs: 0`, so the backoff adds only its `setTimeout(0)`. The clock stops
 *   when the session's snapshot (in a `subscribe` listener) shows the item of the first
 *   notification that arrived on the new connection, at that notification's revision.
 * - (r0) the floor, in the same run, on the same host, through the same kind of proxy: a bare `ws`
 *   socket, no SDK, that opens a new socket (`msp.v1` and the bearer subprotocol) as soon as the old
 *   one closes, writes a raw JSON-RPC `session/resume` with the last `viewCursor` it saw, and stops
 *   the clock at the first notification frame.
 *
 * Each side has its own session, whose one turn streams a text 1 character every `CADENCE_MS`
 * (an `item/delta` each), for longer than the bench runs. A measurement: the proxy stops passing
 * the host's frames on for `HOLD_MS` (so the host has sent notifications the client never saw, and
 * every resume has something to replay: without it the figure would include waiting for the
 * model's next chunk), then destroys the client's TCP connection and the host's (t0). The sides
 * alternate in blocks on the one host, after a few warm-up drops each.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import type { Item, MspClient } from "../src/index.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../packages/protocol/src/index.js";
import { openSession, type MspSession, type SessionSnapshot } from "../src/session/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../src/websocket/index.js";
import { startWsHost } from "../test/helpers/wsHost.js";
import { percentile, sleep, within } from "./timing.js";

/** The model's pace: one `item/delta` per session every this often. @unit milliseconds */
export const CADENCE_MS = 10;
/** How long the proxy holds back the host's frames before the cut. @unit milliseconds */
export const HOLD_MS = 40;
/** After a measurement, before the next drop: the replay is delivered and the stream is live again. @unit milliseconds */
const SETTLE_MS = 30;
const WARMUP = 5;
const BLOCK = 10;

/** A promise and its resolve. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

// ---------------------------------------------------------------- the proxy

/** A TCP proxy to the host (as test/helpers/wsHost.ts's) that can also hold back the host's frames before a cut. */
interface HoldingProxy {
  readonly port: number;
  /** Stop passing the host's bytes on for `holdMs` (they are dropped), then destroy every connection; resolves with the moment of the cut. */
  holdThenCut(holdMs: number): Promise<number>;
  close(): Promise<void>;
}

async function startHoldingProxy(target: number): Promise<HoldingProxy> {
  const sockets = new Set<Socket>();
  let holding = false;
  const server: Server = createServer((inbound) => {
    const outbound = tcpConnect(target, "127.0.0.1");
    // As a reverse proxy does (nginx's tcp_nodelay): no Nagle delay on either leg.
    inbound.setNoDelay(true);
    outbound.setNoDelay(true);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    // The host checks the Host header against its own port: the upgrade request names the host's port.
    inbound.once("data", (head: Buffer) => {
      outbound.write(head.toString("latin1").replace(/\r\nhost: [^\r]*/i, `\r\nHost: 127.0.0.1:${target}`), "latin1");
      inbound.pipe(outbound);
    });
    outbound.on("data", (chunk: Buffer) => {
      if (!holding) inbound.write(chunk);
    });
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    async holdThenCut(holdMs) {
      holding = true;
      await sleep(holdMs);
      const t0 = performance.now();
      for (const s of sockets) s.destroy();
      holding = false;
      return t0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------- the two sides

/** One drop, as each side saw it; times from `performance.now()`. */
interface Drop {
  t0: number;
  /** The old connection's end noticed (the session: `reconnecting` shown; the floor: the socket's `close`). */
  closed?: number;
  /** The new socket open (the session: `connect()` resolved). */
  opened?: number;
  /** The floor only: the answer to its `session/resume` received (the replay follows it). */
  answered?: number;
  /** The first notification on the new connection: dispatched by the new MspClient / its frame received. */
  arrived?: number;
  /** The session only: its snapshot shows that notification. */
  shown?: number;
  done: { promise: Promise<void>; resolve: () => void };
}

interface Side {
  /** Waits until the stream is live on the current connection, then drops it once; resolves when the side stopped its clock. */
  drop(): Promise<Drop>;
  close(): Promise<void>;
}

const ITEM_EVENTS = ["item/started", "item/updated", "item/completed", "item/delta"] as const;

/** (r) The session layer, with a listener on each new MspClient (before the session's own) that notes the first item notification. */
async function sessionSide(proxy: HoldingProxy, token: string): Promise<Side> {
  let current: Drop | undefined;
  let expected: { itemId: string; revision: number } | undefined;
  let live = deferred();
  const session: MspSession = await openSession({
    connect: async () => {
      const client: MspClient = await connectWebSocket(`ws://127.0.0.1:${proxy.port}/`, {
        token,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        defaultTimeoutMs: 10_000,
      });
      const drop = current;
      if (drop !== undefined && drop.opened === undefined) drop.opened = performance.now();
      const onItem = ({ item }: { item: Item }) => {
        live.resolve();
        if (drop === undefined || drop.arrived !== undefined) return;
        drop.arrived = performance.now();
        expected = { itemId: item.itemId, revision: item.revision };
      };
      for (const event of ITEM_EVENTS) client.events.on(event, onItem);
      return client;
    },
    reconnect: { initialDelayMs: 0, maxDelayMs: 50, maxAttempts: 20 },
    onWarning: (message) => process.stderr.write(`  (r) session warning: ${message}\n`),
  });
  const shows = (s: SessionSnapshot, want: { itemId: string; revision: number }) =>
    s.turns.some((turn) => turn.items.some((item) => item.itemId === want.itemId && item.revision >= want.revision));
  session.subscribe(() => {
    const drop = current;
    if (drop === undefined) return;
    if (drop.closed === undefined && session.getSnapshot().connection.state !== "open") drop.closed = performance.now();
    if (drop.arrived === undefined || drop.shown !== undefined || expected === undefined) return;
    if (!shows(session.getSnapshot(), expected)) return;
    drop.shown = performance.now();
    drop.done.resolve();
  });
  session.startTurn("stream");
  return {
    async drop() {
      await within(live.promise, 10_000, "(r) the session's stream");
      const drop: Drop = { t0: NaN, done: deferred() };
      expected = undefined;
      current = drop;
      drop.t0 = await proxy.holdThenCut(HOLD_MS);
      await within(drop.done.promise, 10_000, "(r) the first notification after the reconnect");
      current = undefined;
      live = deferred();
      return drop;
    },
    close: () => session.close(),
  };
}

/** (r0) The floor: a bare `ws` socket, raw JSON-RPC, no SDK. */
async function floorSide(proxy: HoldingProxy, token: string): Promise<Side> {
  const url = `ws://127.0.0.1:${proxy.port}/`;
  const protocols = [MSP_SUBPROTOCOL, bearerSubprotocol(token)];
  let id = 0;
  let sessionId = "";
  let lastCursor: string | undefined;
  let current: Drop | undefined;
  let live = deferred();
  const answers = new Map<number, (result: Record<string, unknown>) => void>();
  let socket: WebSocket;

  const open = () => {
    const s = new WebSocket(url, protocols);
    s.on("error", () => {});
    s.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as { id?: number; method?: string; params?: { viewCursor?: string }; result?: Record<string, unknown> };
      if (message.method !== undefined && message.id === undefined) {
        const drop = current;
        // A frame on the old socket (written before the hold, read after `current` was set) is not the one.
        if (drop !== undefined && drop.opened !== undefined && drop.arrived === undefined && s === socket) {
          drop.arrived = performance.now();
          drop.done.resolve();
        }
        if (typeof message.params?.viewCursor === "string") lastCursor = message.params.viewCursor;
        live.resolve();
      } else if (message.id !== undefined) {
        if (current !== undefined && current.opened !== undefined && s === socket) current.answered ??= performance.now();
        answers.get(message.id)?.(message.result ?? {});
        answers.delete(message.id);
      }
    });
    s.once("close", () => {
      const drop = current;
      if (drop === undefined || s !== socket) return;
      drop.closed = performance.now();
      socket = open();
      socket.once("open", () => {
        drop.opened = performance.now();
        socket.send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "session/resume", params: { sessionId, afterCursor: lastCursor } }));
      });
    });
    return s;
  };
  const command = (method: string, params: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      answers.set(++id, resolve);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });

  socket = open();
  await within(new Promise((resolve) => socket.once("open", resolve)), 10_000, "(r0) the floor's socket");
  sessionId = (await within(command("session/create", {}), 10_000, "(r0) session/create"))["sessionId"] as string;
  await within(command("turn/start", { sessionId, input: [{ type: "text", text: "stream" }] }), 10_000, "(r0) turn/start");
  return {
    async drop() {
      await within(live.promise, 10_000, "(r0) the floor's stream");
      const drop: Drop = { t0: NaN, done: deferred() };
      current = drop;
      drop.t0 = await proxy.holdThenCut(HOLD_MS);
      await within(drop.done.promise, 10_000, "(r0) the first notification after the reconnect");
      current = undefined;
      live = deferred();
      return drop;
    },
    close: async () => {
      current = undefined;
      socket.terminate();
    },
  };
}

// ---------------------------------------------------------------- the row

/** Percentiles of one stage. @unit milliseconds */
export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

/** A row's spread and every measurement, in the order taken. @unit milliseconds */
export interface Row extends Spread {
  times: number[];
}

/** The result of rows (r) and (r0). @unit milliseconds */
export interface ReconnectResult {
  n: number;
  holdMs: number;
  cadenceMs: number;
  /** (r): drop → the session's snapshot shows the first notification of the new connection. */
  session: Row & { stages: Record<"closed" | "opened" | "arrived" | "shown", Spread> };
  /** (r0): drop → the bare socket's first notification frame after its resume. */
  floor: Row & { stages: Record<"closed" | "opened" | "answered" | "arrived", Spread> };
}

const spread = (xs: number[]): Spread => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), max: Math.max(...xs) });

/**
 * Rows (r) and (r0): `n` drops of each side (after `WARMUP` each), alternating in blocks of
 * `BLOCK` on one reference host, each side through its own proxy.
 */
export async function reconnectLatency(n: number, log: (line: string) => void = () => {}): Promise<ReconnectResult> {
  const dir = mkdtempSync(join(tmpdir(), "muse-bench-reconnect-"));
  // One message streamed 1 character a chunk: far longer than the bench runs.
  const model = join(dir, "stream.json");
  const text = "The session layer reconnects and resumes from its cursor. ".repeat(400);
  writeFileSync(model, JSON.stringify({ turns: [{ steps: [{ text, chunkSize: 1, chunkDelayMs: CADENCE_MS }] }] }));
  const host = await startWsHost(model);
  const sides: Side[] = [];
  const proxies: HoldingProxy[] = [];
  try {
    const sessionProxy = await startHoldingProxy(host.port);
    const floorProxy = await startHoldingProxy(host.port);
    proxies.push(sessionProxy, floorProxy);
    const session = await sessionSide(sessionProxy, host.token);
    const floor = await floorSide(floorProxy, host.token);
    sides.push(session, floor);
    const drops: { session: Drop[]; floor: Drop[] } = { session: [], floor: [] };
    for (let i = 0; i < WARMUP; i++) {
      await session.drop();
      await sleep(SETTLE_MS);
      await floor.drop();
      await sleep(SETTLE_MS);
    }
    for (let done = 0; done < n; done += BLOCK) {
      for (const [name, side] of [
        ["session", session],
        ["floor", floor],
      ] as const) {
        for (let i = done; i < Math.min(n, done + BLOCK); i++) {
          drops[name].push(await side.drop());
          await sleep(SETTLE_MS);
        }
      }
      log(`  (r) ${Math.min(n, done + BLOCK)}/${n} drops each`);
    }
    const since = (ds: Drop[], stage: "closed" | "opened" | "answered" | "arrived" | "shown") => spread(ds.map((d) => (d[stage] as number) - d.t0));
    const times = (ds: Drop[], stage: "arrived" | "shown") => ds.map((d) => Math.round(((d[stage] as number) - d.t0) * 100) / 100);
    const s = since(drops.session, "shown");
    const f = since(drops.floor, "arrived");
    const stages = (ds: Drop[], names: ReadonlyArray<"closed" | "opened" | "answered" | "arrived" | "shown">) =>
      names.map((name) => `${name} ${since(ds, name).p50.toFixed(1)}/${since(ds, name).p99.toFixed(1)}`).join(", ");
    log(`  (r) stages after the drop, p50/p99 ms: ${stages(drops.session, ["closed", "opened", "arrived", "shown"])}`);
    log(`  (r0) stages after the drop, p50/p99 ms: ${stages(drops.floor, ["closed", "opened", "answered", "arrived"])}`);
    return {
      n,
      holdMs: HOLD_MS,
      cadenceMs: CADENCE_MS,
      session: {
        ...s,
        times: times(drops.session, "shown"),
        stages: {
          closed: since(drops.session, "closed"),
          opened: since(drops.session, "opened"),
          arrived: since(drops.session, "arrived"),
          shown: s,
        },
      },
      floor: {
        ...f,
        times: times(drops.floor, "arrived"),
        stages: { closed: since(drops.floor, "closed"), opened: since(drops.floor, "opened"), answered: since(drops.floor, "answered"), arrived: f },
      },
    };
  } finally {
    for (const side of sides) await side.close();
    for (const proxy of proxies) await proxy.close();
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
