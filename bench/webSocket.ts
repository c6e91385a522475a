/**
 * Bench rows of the WebSocket transport and host (issue 9 §6), run by bench/run.ts:
 * - (f) notifications/s through the SDK over WebSocket loopback, against the same flood over stdio;
 * - (g) N concurrent WebSocket clients on one reference host, each cancelling its turn mid-tool:
 *   `turn/cancel` sent → `turn/completed` received, with independent stops and with one burst;
 * - (g0) the floor under the burst: N bare shell groups SIGTERMed at once, no host;
 * - (h) the host's resident memory per idle authenticated WebSocket connection.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { WebSocket } from "ws";
import { spawnFixtureGroup } from "./cancelTrace.js";
import type { MspClient, TurnCompletedParams } from "../src/index.js";
import { spawnReferenceHost } from "../src/node/index.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../packages/protocol/src/index.js";
import { connectWebSocket } from "../src/websocket/index.js";
import { seededRandom } from "../test/helpers/seededRandom.js";
import { percentile, sleep, within } from "./timing.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const child = (name: string) => fileURLToPath(new URL(`./children/${name}`, import.meta.url));

/**
 * (f) The SDK's full path over WebSocket (connectWebSocket with `ws`: reader, connection,
 * recorder, ledger, events) receiving N notifications from bench/children/webSocketFlood.mjs.
 * Notifications per second, from the first to the last.
 */
export async function webSocketThroughput(n: number): Promise<number> {
  const flood = spawn(process.execPath, [child("webSocketFlood.mjs"), String(n)], { stdio: ["pipe", "pipe", "inherit"] });
  try {
    const port = await within(
      new Promise<number>((resolve) => {
        let text = "";
        flood.stdout.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
          const match = /port (\d+)/.exec(text);
          if (match !== null) resolve(Number(match[1]));
        });
      }),
      20_000,
      "the WebSocket flood child",
    );
    const client = await connectWebSocket(`ws://127.0.0.1:${port}/`, { WebSocket, defaultTimeoutMs: 120_000 });
    let count = 0;
    let first = 0;
    const done = new Promise<number>((resolve) => {
      client.onNotification(() => {
        if (count++ === 0) first = performance.now();
        if (count === n) resolve(n / ((performance.now() - first) / 1000));
      });
    });
    // Any message starts the flood; it never answers, so the command is dropped with the connection.
    client.command("host/info", {}).catch(() => {});
    const rate = await within(done, 120_000, "the WebSocket flood");
    await client.close();
    return rate;
  } finally {
    flood.stdin.end();
  }
}

/** How the clients of row (g) stop their turns once every tool runs. */
export type StopPattern =
  /** All in the same event-loop turn of the bench: the worst case, a synchronized burst. */
  | { kind: "burst" }
  /** Each at its own moment, drawn uniformly in `[0, windowMs)` (seeded): independent people pressing Stop. */
  | { kind: "independent"; windowMs: number; seed: number };

/** Latencies of one (g) run, in milliseconds. */
export interface StormResult {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/**
 * (g) `clients` WebSocket clients on one reference host (`serve --stdio --ws`, session logs in its
 * own temp data dir on disk): each creates a session and starts a turn whose shell tool runs
 * `sleep 30` in a grandchild. Once every client has seen its own tool print (all `clients` tools
 * run at once) and the host has had `settleMs` to go quiet, each client sends `turn/cancel` as
 * `stops` says; the time from that send to the turn's `turn/completed` arriving, per client. The
 * host's kill grace is 500 ms. Every turn must end `cancelled`, or the run throws.
 */
export async function webSocketCancelStorm(clients: number, stops: StopPattern, settleMs = 500): Promise<StormResult> {
  const host = spawnReferenceHost({
    script: `${root}test/fixtures/models/shell-sleep.json`,
    toolKillGraceMs: 500,
    stderr: "ignore",
    webSocket: { readyTimeoutMs: 30_000 },
  });
  const open: MspClient[] = [];
  // A burst is a window of 0 ms: every delay 0.
  const windowMs = stops.kind === "independent" ? stops.windowMs : 0;
  const next = seededRandom(stops.kind === "independent" ? stops.seed : 0);
  const delays = Array.from({ length: clients }, () => next() * windowMs);
  let running = 0;
  let allRunning!: () => void;
  const everyToolRuns = new Promise<void>((resolve) => (allRunning = resolve));
  try {
    const { url, token } = await host.webSocket;
    for (let i = 0; i < clients; i++) open.push(await connectWebSocket(url, { token, WebSocket, defaultTimeoutMs: 60_000 }));
    const go = within(everyToolRuns, 120_000, `all ${clients} tools running`).then(() => sleep(settleMs));
    const times = await Promise.all(
      open.map(async (client, i) => {
        const { sessionId } = await client.command("session/create", {});
        const toolRuns = new Promise<void>((resolve) => {
          const onItem = (p: { item: { kind: string; visibleOutput?: string } }) => {
            if (p.item.kind === "toolCall" && (p.item.visibleOutput ?? "").includes("grandchild")) {
              client.events.off("item/delta", onItem);
              resolve();
            }
          };
          client.events.on("item/delta", onItem);
        });
        const turn = client.startTurn({ sessionId, input: [{ type: "text", text: `run ${i}` }] });
        await within(toolRuns, 120_000, `client ${i}'s tool`);
        const turnId = (await turn.accepted).turnId;
        if (++running === clients) allRunning();
        const completedAt = new Promise<number>((resolve) => {
          const onDone = (p: TurnCompletedParams) => {
            if (p.turnId !== turnId) return;
            client.events.off("turn/completed", onDone);
            resolve(performance.now());
          };
          client.events.on("turn/completed", onDone);
        });
        await go;
        if (delays[i]! > 0) await sleep(delays[i]!);
        const t0 = performance.now();
        const outcome = await turn.cancel({ timeoutMs: 30_000 });
        if (outcome.turnCompleted.terminal !== "cancelled") throw new Error(`client ${i}: expected cancelled, got ${outcome.turnCompleted.terminal}`);
        return (await completedAt) - t0;
      }),
    );
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times), n: times.length };
  } finally {
    await Promise.all(open.map((client) => client.close()));
    await host.close();
  }
}

/**
 * (g0) The floor under a (g) burst on this machine, with no host, no protocol and no log: one bare
 * Node process spawns `groups` `/bin/sh` process groups running the (g) fixture's command, waits
 * until every grandchild has printed and `settleMs` more, then SIGTERMs every group in one loop and
 * times each group's pipes closing (Node's `close`) from the first kill. Milliseconds.
 */
export async function killStormFloor(groups: number, settleMs = 500): Promise<StormResult & { killLoopMs: number }> {
  const groupsRunning = Array.from({ length: groups }, () => spawnFixtureGroup());
  const shells = groupsRunning.map((g) => g.shell);
  try {
    const closed = shells.map((shell) => new Promise<number>((resolve) => shell.once("close", () => resolve(performance.now()))));
    await within(Promise.all(groupsRunning.map((g) => g.printed)), 60_000, `${groups} bare shell groups`);
    await sleep(settleMs);
    const t0 = performance.now();
    for (const shell of shells) process.kill(-(shell.pid as number), "SIGTERM");
    const killLoopMs = performance.now() - t0;
    const times = (await within(Promise.all(closed), 30_000, "the bare groups closing")).map((t) => t - t0);
    return { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times), n: times.length, killLoopMs };
  } finally {
    for (const shell of shells) {
      try {
        process.kill(-(shell.pid as number), "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

function vmRssKiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** Opens one authenticated WebSocket to the host and waits until it is open. */
function openIdle(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [MSP_SUBPROTOCOL, bearerSubprotocol(token)]);
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * (h) The host's VmRSS (from /proc) before and after `connections` authenticated WebSocket
 * connections that do nothing, after a warm-up connection that ran one command (so the code
 * paths are loaded before the first reading). KiB per connection.
 */
export async function webSocketIdleRss(connections: number): Promise<{ perConnectionKiB: number; beforeKiB: number; afterKiB: number; n: number }> {
  const host = spawnReferenceHost({ stderr: "ignore", webSocket: { readyTimeoutMs: 30_000 } });
  const sockets: WebSocket[] = [];
  try {
    const { url, token } = await host.webSocket;
    const warm = await connectWebSocket(url, { token, WebSocket });
    await warm.command("host/info", {});
    await warm.close();
    await sleep(1_000);
    const beforeKiB = vmRssKiB(host.pid);
    for (let i = 0; i < connections; i++) sockets.push(await openIdle(url, token));
    await sleep(1_000);
    const afterKiB = vmRssKiB(host.pid);
    return { perConnectionKiB: (afterKiB - beforeKiB) / connections, beforeKiB, afterKiB, n: connections };
  } finally {
    for (const socket of sockets) socket.terminate();
    await host.close();
  }
}
