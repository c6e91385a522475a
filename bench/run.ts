/**
 * `npm run bench`: the SDK measured side by side with the floor, bare vscode-jsonrpc and its peers
 * (the MCP and ACP TypeScript SDKs, bench/peers/), in one run, against real child processes. Prints one table with ratios and writes bench/results.json
 * (rendered to docs/benchmarks.svg by scripts/bench-chart.ts). Not part of `npm test`.
 *
 * Usage: npm run bench [-- --quick] [--only=a,b,c,d,e,ws,cancel,stream,reconnect,tree,delta,browser,bridge] [--out=FILE]
 *
 * `--only` runs some row groups: (a) throughput (peers included), (b) round trips (peers included), (c) cancel latency, (d) recorder
 * heap, (e) bundle, `ws` the WebSocket rows (f, g, g0, h; f measures the SDK NDJSON row of (a) again, in
 * the same run, for its ratio), `cancel` the traced cancel breakdown and its floors (c1, c2),
 * `stream` the reference host as a streamer (s1, s2; they measure the SDK NDJSON row of (a) again
 * for their ratio), `reconnect` a socket drop to the first notification after the reconnect, the
 * session layer (r) beside its floor (r0), a bare socket and a raw resume (bench/reconnect.ts),
 * `tree` a cancel of a parent turn with N running subagents (t) beside the floor of killing their
 * N tool process groups directly (t0) (bench/subagentTree.ts), `delta` the item/delta flood (δ) through the floor, bare
 * vscode-jsonrpc, the SDK's client, `openSession`, MCP and ACP, with the parent's CPU per message (bench/deltaFlood.ts),
 * `browser` a 200 000-character answer and 2 MB of tool output streamed by the reference host into a React page in
 * Chromium (bench/browserStream.ts; not in a run without `--only`, as it needs Chromium). A
 * partial run prints its table and writes nothing, unless `--out` names a file
 * for its results (bench/results.json stays the full run's).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as rpc from "vscode-jsonrpc/node";
import type { TurnCompletedParams } from "../src/index.js";
import { TurnRecorder } from "../src/turns/turnRecorder.js";
import { buildCoreBundle } from "./coreBundle.js";
import { percentile, sleep } from "./timing.js";
import { spawnHost, type SpawnedHost } from "../src/node/index.js";
import { killStormFloor, webSocketCancelStorm, webSocketIdleRss, webSocketThroughput } from "./webSocket.js";
import { acpEcho, acpThroughput } from "./peers/acp.js";
import { DeliveryCount } from "./peers/deliveryCount.js";
import { mcpEcho, mcpThroughput } from "./peers/mcp.js";
import { fdatasyncFloor, idlePipeFloor, killFloor, tracedCancel } from "./cancelTrace.js";
import { hostStream } from "./hostStream.js";
import { reconnectLatency } from "./reconnect.js";
import { DEFAULT_SIZES, subagentTreeCancel, treeCancelRows } from "./subagentTree.js";
import { DELTA_ROWS, deltaFloodMeanBytes, deltaMeanBytes, type FloodRun } from "./deltaFlood.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const child = (name: string) => fileURLToPath(new URL(`./children/${name}`, import.meta.url));
/** The well-behaved echo host the leak tests use too: bare vscode-jsonrpc's round trips (Content-Length). */
const echoHost = fileURLToPath(new URL("../test/fixtures/faulty-hosts/echo.mjs", import.meta.url));
/** The echo child of the floor's, the SDK's and the peers' round trips (NDJSON): one child code for all. */
const peerHost = fileURLToPath(new URL("./peers/children/peerHost.mjs", import.meta.url));
const quick = process.argv.includes("--quick");
const N = quick ? 30_000 : 100_000;
const REPS = quick ? 1 : 3;
const RTT_ROUNDS = quick ? 1_000 : 5_000;
const CANCEL_RUNS = 50;
/** Concurrent clients of row (g), idle connections of row (h). */
const WS_CLIENTS = 200;
/** Row (g): the window over which the clients' independent stops are spread. @unit milliseconds */
const WS_STOP_WINDOW_MS = 2_000;
const WS_IDLE = 500;
/** Drops of each side of rows (r) and (r0). */
const RECONNECTS = quick ? 30 : 100;
/** Repetitions of rows (t) and (t0), each N = 1, 10, 50. */
const TREE_REPS = quick ? 3 : 10;
/** Notifications of each (δ) flood, and its interleaved rounds. */
const DELTA_N = quick ? 30_000 : 100_000;
const DELTA_ROUNDS = quick ? 1 : 5;
const only = process.argv
  .find((arg) => arg.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const out = process.argv.find((arg) => arg.startsWith("--out="))?.slice("--out=".length);
type Group = "a" | "b" | "c" | "d" | "e" | "ws" | "cancel" | "stream" | "reconnect" | "tree" | "delta" | "browser" | "bridge";
/** A group runs when `--only` names it, or in a full run (`browser` and `bridge` only when named: they need Chromium and Codex). */
const want = (group: Group) => (only === undefined ? group !== "browser" && group !== "bridge" : only.includes(group));
/** Stops of each side of rows (x). */
const BRIDGE_STOPS = quick ? 5 : 30;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const log = (s: string) => process.stderr.write(`${s}\n`);
/** The peers' versions, read from their installed package.json (pinned exactly in ours). */
const versionOf = (name: string) =>
  (JSON.parse(readFileSync(fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url)), "utf8")) as { version: string }).version;
const PEER_VERSIONS = { mcp: versionOf("@modelcontextprotocol/sdk"), acp: versionOf("@agentclientprotocol/sdk"), codex: versionOf("@openai/codex") };

function stopChild(c: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once("exit", () => resolve());
    c.stdin?.end();
    setTimeout(() => c.kill("SIGKILL"), 2_000).unref();
  });
}

// ---------------------------------------------------------------- (a) notifications/s

type Throughput = () => Promise<number>;

/** Floor: split lines and JSON.parse in the parent, nothing else. */
const floor: Throughput = () =>
  new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [child("flood.mjs"), String(N), "ndjson"], { stdio: ["pipe", "pipe", "inherit"] });
    let count = 0;
    let first = 0;
    let rest: Buffer | undefined;
    let sink = 0;
    c.stdout.on("data", (chunk: Buffer) => {
      if (first === 0) first = performance.now();
      const buf = rest === undefined ? chunk : Buffer.concat([rest, chunk]);
      let start = 0;
      let nl = buf.indexOf(10, start);
      while (nl >= 0) {
        const m = JSON.parse(buf.toString("utf8", start, nl)) as { method: string };
        sink += m.method.length;
        count++;
        start = nl + 1;
        nl = buf.indexOf(10, start);
      }
      rest = start < buf.length ? buf.subarray(start) : undefined;
      if (count === N) {
        const rate = N / ((performance.now() - first) / 1000);
        void stopChild(c).then(() => resolve(rate + sink * 0));
      }
    });
    c.on("error", reject);
    c.stdin.write("g");
  });

/** Bare vscode-jsonrpc: StreamMessageReader (Content-Length) + createMessageConnection. */
const bare: Throughput = () =>
  new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [child("flood.mjs"), String(N), "content-length"], { stdio: ["pipe", "pipe", "inherit"] });
    const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(c.stdout), new rpc.StreamMessageWriter(c.stdin));
    let count = 0;
    let first = 0;
    connection.onNotification(() => {
      if (count++ === 0) first = performance.now();
      if (count === N) {
        const rate = N / ((performance.now() - first) / 1000);
        connection.dispose();
        void stopChild(c).then(() => resolve(rate));
      }
    });
    connection.listen();
    c.on("error", reject);
    c.stdin.write("g");
  });

/**
 * The SDK's full path: spawnHost (connect + recorder + ledger + events) and a notification handler,
 * with the count check the peer rows have (the flood's `emittedAtMs` is its index).
 */
const sdk =
  (framing: "ndjson" | "content-length"): Throughput =>
  async () => {
    const host = spawnHost({ command: process.execPath, args: [child("flood.mjs"), String(N), framing], framing, stderr: "inherit" });
    const count = new DeliveryCount(`SDK ${framing}`, N);
    host.onNotification(({ params }) => count.note((params?.["emittedAtMs"] as number) + 1));
    host.process.stdin?.write("g");
    try {
      return await count.rate;
    } finally {
      await host.close();
    }
  };

async function throughput() {
  const variants: Record<string, Throughput> = want("a")
    ? {
        floor,
        bare,
        sdk: sdk("ndjson"),
        sdkCL: sdk("content-length"),
        mcp: () => mcpThroughput(N, "typed"),
        mcpFallback: () => mcpThroughput(N, "fallback"),
        acp: () => acpThroughput(N, "typed"),
        acpFallback: () => acpThroughput(N, "fallback"),
      }
    : { sdk: sdk("ndjson") };
  if (want("ws")) variants["ws"] = () => webSocketThroughput(N);
  const runs: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  // Interleave the variants, so machine noise hits all of them alike.
  for (let r = 0; r < REPS; r++) {
    for (const [name, run] of Object.entries(variants)) {
      const rate = await run();
      runs[name]?.push(rate);
      log(`  (a) ${name} rep ${r + 1}: ${Math.round(rate).toLocaleString("en")} msg/s`);
    }
  }
  return Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, { median: median(v), runs: v }])) as Record<string, { median: number; runs: number[] }>;
}

// ---------------------------------------------------------------- (b) command() round trip

async function roundTrips() {
  const sdkHost: SpawnedHost = spawnHost({ command: process.execPath, args: [peerHost, "msp", "0"], stderr: "inherit" });
  const c = spawn(process.execPath, [echoHost, "content-length"], { stdio: ["pipe", "pipe", "inherit"] });
  // The peers: each its own client library on a child that answers every request at once.
  const mcp = await mcpEcho();
  const acp = await acpEcho();
  const bareConnection = rpc.createMessageConnection(new rpc.StreamMessageReader(c.stdout), new rpc.StreamMessageWriter(c.stdin));
  bareConnection.listen();
  // Floor: the same echo child over raw stdio, one line out, one line back, JSON.parse: no library.
  const raw = spawn(process.execPath, [peerHost, "msp", "0"], { stdio: ["pipe", "pipe", "inherit"] });
  let onLine: (() => void) | undefined;
  let rawRest = "";
  raw.stdout.setEncoding("utf8");
  raw.stdout.on("data", (text: string) => {
    rawRest += text;
    let nl = rawRest.indexOf("\n");
    while (nl >= 0) {
      JSON.parse(rawRest.slice(0, nl));
      rawRest = rawRest.slice(nl + 1);
      nl = rawRest.indexOf("\n");
      onLine?.();
    }
  });
  let rawId = 0;
  const rawRoundTrip = () =>
    new Promise<void>((resolve) => {
      onLine = resolve;
      raw.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++rawId, method: "host/info", params: { commandId: "c" } })}\n`);
    });
  const clients: Record<"sdk" | "bare" | "floor" | "mcp" | "acp", () => Promise<unknown>> = {
    sdk: () => sdkHost.command("host/info", {}),
    bare: () => bareConnection.sendRequest("host/info", { commandId: "c" }),
    floor: rawRoundTrip,
    mcp: mcp.roundTrip,
    acp: acp.roundTrip,
  };
  const times: Record<keyof typeof clients, number[]> = { sdk: [], bare: [], floor: [], mcp: [], acp: [] };
  const WARMUP = 300;
  // Alternate blocks, so every client sees the same machine.
  for (let block = 0; block < 10; block++) {
    for (const [name, roundTrip] of Object.entries(clients) as Array<[keyof typeof clients, () => Promise<unknown>]>) {
      for (let i = 0; i < WARMUP / 10 + RTT_ROUNDS / 10; i++) {
        const t0 = performance.now();
        await roundTrip();
        if (i >= WARMUP / 10) times[name].push((performance.now() - t0) * 1000);
      }
    }
  }
  await mcp.close();
  await acp.close();
  await stopChild(raw);
  await sdkHost.close();
  bareConnection.dispose();
  await stopChild(c);
  const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length });
  return { sdk: stats(times.sdk), bare: stats(times.bare), floor: stats(times.floor), mcp: stats(times.mcp), acp: stats(times.acp) };
}

// ---------------------------------------------------------------- (δ) the item/delta flood

/** Every (δ) row, interleaved over rounds so machine noise hits all alike; the median rate and CPU of each. */
async function deltaFlood() {
  const runs: Record<string, FloodRun[]> = Object.fromEntries(Object.keys(DELTA_ROWS).map((k) => [k, []]));
  for (let r = 0; r < DELTA_ROUNDS; r++) {
    for (const [name, row] of Object.entries(DELTA_ROWS)) {
      const run = await row(DELTA_N);
      runs[name]?.push(run);
      log(`  (δ) ${name} round ${r + 1}: ${Math.round(run.rate).toLocaleString("en")} msg/s, ${run.cpuUs.toFixed(2)} us CPU/msg`);
    }
  }
  return Object.fromEntries(
    Object.entries(runs).map(([k, v]) => [k, { rate: median(v.map((x) => x.rate)), cpuUs: median(v.map((x) => x.cpuUs)), runs: v }]),
  ) as Record<keyof typeof DELTA_ROWS, { rate: number; cpuUs: number; runs: FloodRun[] }>;
}

// ---------------------------------------------------------------- (c) cancel latency

/**
 * turn/cancel sent → turn/completed received, once the model's shell tool has printed `marker`.
 * The host's kill grace is 500 ms: a tool that ignores SIGTERM is SIGKILLed after it.
 */
async function cancelLatency(model = "shell-sleep.json", marker = "grandchild", runs = CANCEL_RUNS) {
  const host = spawnHost({
    command: process.execPath,
    args: ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--stdio", "--script", `test/fixtures/models/${model}`, "--kill-grace-ms", "500"],
    cwd: root,
    stderr: "ignore",
    killGraceMs: 500,
  });
  const { sessionId } = await host.command("session/create", {}, { timeoutMs: 20_000 });
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const toolRunning = new Promise<string>((resolve) => {
      const onItem = (p: { item: { kind: string; turnId: string; visibleOutput?: string } }) => {
        // The tool is running once its process printed its first line.
        if (p.item.kind === "toolCall" && (p.item.visibleOutput ?? "").includes(marker)) {
          host.events.off("item/delta", onItem);
          resolve(p.item.turnId);
        }
      };
      host.events.on("item/delta", onItem);
    });
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: `run ${i}` }] });
    const turnId = await Promise.race([toolRunning, sleep(10_000).then(() => Promise.reject(new Error("the tool never started")))]);
    const t0 = performance.now();
    const completedAt = new Promise<number>((resolve) => {
      const onDone = (p: TurnCompletedParams) => {
        if (p.turnId === turnId) {
          host.events.off("turn/completed", onDone);
          resolve(performance.now());
        }
      };
      host.events.on("turn/completed", onDone);
    });
    const outcome = await turn.cancel({ timeoutMs: 10_000 });
    if (outcome.turnCompleted.terminal !== "cancelled") throw new Error(`expected cancelled, got ${outcome.turnCompleted.terminal}`);
    times.push((await completedAt) - t0);
  }
  await host.close();
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times), n: times.length };
}

// ---------------------------------------------------------------- (d) recorder heap

async function recorderHeap() {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc (npm run bench does)");
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await sleep(10);
    }
  };
  await settle();
  const before = process.memoryUsage().heapUsed;
  const recorder = new TurnRecorder();
  const TERMINALS = 1_000_000;
  for (let i = 0; i < TERMINALS; i++) {
    const turnId = `0198f0aa-2222-7000-8000-${String(i).padStart(12, "0")}`;
    recorder.record({
      sessionId: "0198f0aa-1111-7000-8000-0000000000aa",
      viewCursor: `v:s:${i}`,
      turnId,
      terminal: "completed",
      reason: "completed",
      durationMs: 5,
      emittedAtMs: i,
    } as TurnCompletedParams);
  }
  await settle();
  const after = process.memoryUsage().heapUsed;
  const retained = recorder.size;
  return { heapMB: (after - before) / (1024 * 1024), terminals: TERMINALS, retained };
}

// ---------------------------------------------------------------- (e) browser bundle

async function bundleSize() {
  const { code, metafile, minBytes, gzipBytes } = await buildCoreBundle();
  const text = new TextDecoder().decode(code);
  const nodeImports = Object.keys(metafile.inputs)
    .filter((p) => p.startsWith("node:"))
    .concat(/\bfrom\s*["']node:|require\(["']node:|import\(["']node:/.test(text) ? ["(in output)"] : []);
  const byPackage: Record<string, number> = {};
  for (const [path, input] of Object.entries(metafile.outputs[Object.keys(metafile.outputs)[0] as string]?.inputs ?? {})) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? "sdk (src)";
    byPackage[pkg] = (byPackage[pkg] ?? 0) + input.bytesInOutput;
  }
  return { minBytes, gzipBytes, nodeImports, byPackage };
}

// ---------------------------------------------------------------- table

async function main() {
  log(`bench: N=${N} notifications x ${REPS} reps, ${RTT_ROUNDS} round trips, ${CANCEL_RUNS} cancels (node ${process.version})`);
  const a = want("a") || want("ws") || want("stream") ? await throughput() : {};
  if (want("b")) log("  (b) round trips…");
  const b = want("b") ? await roundTrips() : undefined;
  if (want("c")) log("  (c) cancel latency…");
  const c = want("c") ? await cancelLatency() : undefined;
  const cStubborn = want("c") ? await cancelLatency("shell-stubborn.json", "stubborn", 5) : undefined;
  if (want("d")) log("  (d) recorder heap…");
  const d = want("d") ? await recorderHeap() : undefined;
  if (want("e")) log("  (e) bundle…");
  const e = want("e") ? await bundleSize() : undefined;
  if (want("ws")) log(`  (g) ${WS_CLIENTS} WebSocket clients cancelling mid-tool…`);
  const g = want("ws") ? await webSocketCancelStorm(WS_CLIENTS, { kind: "independent", windowMs: WS_STOP_WINDOW_MS, seed: 9 }) : undefined;
  const gBurst = want("ws") ? await webSocketCancelStorm(WS_CLIENTS, { kind: "burst" }) : undefined;
  const g0 = want("ws") ? await killStormFloor(WS_CLIENTS) : undefined;
  if (want("ws")) log(`  (h) RSS of ${WS_IDLE} idle WebSocket connections…`);
  const h = want("ws") ? await webSocketIdleRss(WS_IDLE) : undefined;
  if (want("cancel")) log(`  (c1) ${CANCEL_RUNS} traced cancels, (c2) their floor…`);
  const c1 = want("cancel") ? await tracedCancel(CANCEL_RUNS) : undefined;
  const c2 = want("cancel") ? { kill: await killFloor(CANCEL_RUNS), sync: fdatasyncFloor(200), pipe: await idlePipeFloor(CANCEL_RUNS) } : undefined;
  if (want("stream")) log("  (s1, s2) the reference host streaming item/delta…");
  const s1 = want("stream") ? await hostStream(1, quick ? 20 : 40) : undefined;
  const s2 = want("stream") ? await hostStream(100, quick ? 1 : 2) : undefined;
  if (want("reconnect")) log(`  (r, r0) ${RECONNECTS} socket drops each, the session layer and its floor…`);
  const r = want("reconnect") ? await reconnectLatency(RECONNECTS, log) : undefined;
  if (want("tree")) log(`  (t, t0) a tree of N = ${DEFAULT_SIZES.join(", ")} running subagents cancelled, ${TREE_REPS} reps, and its floor…`);
  const treeCancel = want("tree") ? await subagentTreeCancel(DEFAULT_SIZES, TREE_REPS, { log }) : undefined;
  if (want("delta")) log(`  (δ) the item/delta flood, ${DELTA_N} notifications x ${DELTA_ROUNDS} interleaved rounds…`);
  const delta = want("delta") ? await deltaFlood() : undefined;
  if (want("browser")) log("  (w) the browser stream: reference host -> WebSocket -> openSession -> React 19, in Chromium…");
  const browser = want("browser") ? await (await import("./browserStream.js")).browserStream({ log }) : undefined;
  if (want("bridge")) log(`  (x) the honest stop: Codex alone vs muse serve --agent codex, ${BRIDGE_STOPS} stops each…`);
  const bridge = want("bridge") ? await (await import("./bridgeStop.js")).bridgeStop(BRIDGE_STOPS, log) : undefined;

  const fl = a["floor"]?.median ?? NaN;
  const br = a["bare"]?.median ?? NaN;
  const sd = a["sdk"]?.median ?? NaN;
  const cl = a["sdkCL"]?.median ?? NaN;
  const ws = a["ws"]?.median ?? NaN;
  const peerRate = (name: string) => a[name]?.median ?? NaN;
  const k = (x: number) => `${Math.round(x / 1000)}k/s`;
  const ok = (pass: boolean) => (pass ? "met" : "MISSED");
  const rows: Array<[string, string, string, string]> = [];
  if (want("a")) {
    rows.push(
      ["(a) floor: split lines + JSON.parse", "-", k(fl), ""],
      ["(a) bare vscode-jsonrpc (Content-Length)", "-", k(br), ""],
      [
        "(a) SDK NDJSON, full path",
        ">= 0.5x floor, >= 1.5x bare",
        `${k(sd)} = ${(sd / fl).toFixed(2)}x floor, ${(sd / br).toFixed(2)}x bare`,
        ok(sd / fl >= 0.5 && sd / br >= 1.5),
      ],
      ["(a) SDK Content-Length, full path", ">= 1.2x bare", `${k(cl)} = ${(cl / br).toFixed(2)}x bare, ${(cl / fl).toFixed(2)}x floor`, ok(cl / br >= 1.2)],
      ["(a) SDK NDJSON: the throughput row kept", ">= 0.9x floor", `${(sd / fl).toFixed(2)}x floor`, ok(sd / fl >= 0.9)],
    );
    for (const [name, label] of [
      ["mcp", `(a) MCP SDK ${PEER_VERSIONS.mcp} Client + stdio, typed handler`],
      ["mcpFallback", `(a) MCP SDK ${PEER_VERSIONS.mcp}, fallbackNotificationHandler`],
      ["acp", `(a) ACP SDK ${PEER_VERSIONS.acp} client() + ndJsonStream, typed handler`],
      ["acpFallback", `(a) ACP SDK ${PEER_VERSIONS.acp}, "*" fallback handler`],
    ] as const) {
      rows.push([label, "-", `${k(peerRate(name))}: SDK NDJSON = ${(sd / peerRate(name)).toFixed(2)}x this`, ""]);
    }
  }
  if (b !== undefined) {
    const us = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(0)} us, p99 ${x.p99.toFixed(0)} us`;
    rows.push(
      [
        "(b) command() round trip, SDK",
        "p50 <= 1.3x floor, <= 0.8x MCP; p99 <= MCP",
        `${us(b.sdk)}: p50 ${(b.sdk.p50 / b.floor.p50).toFixed(2)}x floor, ${(b.sdk.p50 / b.mcp.p50).toFixed(2)}x MCP; p99 ${(b.sdk.p99 / b.mcp.p99).toFixed(2)}x MCP`,
        ok(b.sdk.p50 <= 1.3 * b.floor.p50 && b.sdk.p50 <= 0.8 * b.mcp.p50 && b.sdk.p99 <= b.mcp.p99),
      ],
      ["(b) round trip floor: raw stdio line + JSON.parse", "-", us(b.floor), ""],
      [`(b) MCP SDK ${PEER_VERSIONS.mcp} ping() round trip`, "-", `${us(b.mcp)} (SDK/MCP p50 ${(b.sdk.p50 / b.mcp.p50).toFixed(2)}x)`, ""],
      [`(b) ACP SDK ${PEER_VERSIONS.acp} request() round trip`, "-", `${us(b.acp)} (SDK/ACP p50 ${(b.sdk.p50 / b.acp.p50).toFixed(2)}x)`, ""],
      [
        "(b) sendRequest round trip, bare vscode-jsonrpc",
        "-",
        `p50 ${b.bare.p50.toFixed(0)} us, p99 ${b.bare.p99.toFixed(0)} us (SDK/bare p50 ${(b.sdk.p50 / b.bare.p50).toFixed(2)}x)`,
        "",
      ],
    );
  }
  if (c !== undefined && cStubborn !== undefined) {
    rows.push(
      [
        "(c) turn/cancel -> turn/completed, reference host",
        "p99 <= 50 ms",
        `p50 ${c.p50.toFixed(1)} ms, p99 ${c.p99.toFixed(1)} ms (n=${c.n})`,
        ok(c.p99 <= 50),
      ],
      [
        "(c) same, a tool that ignores SIGTERM (kill grace 500 ms)",
        "-",
        `p50 ${cStubborn.p50.toFixed(0)} ms, max ${cStubborn.max.toFixed(0)} ms (n=${cStubborn.n})`,
        "",
      ],
    );
  }
  if (d !== undefined) {
    rows.push([
      "(d) recorder heap, 1 000 000 terminals, default capacity",
      "<= 64 MB",
      `${d.heapMB.toFixed(1)} MB (${d.retained.toLocaleString("en")} retained)`,
      ok(d.heapMB <= 64),
    ]);
  }
  if (e !== undefined) {
    rows.push([
      "(e) browser core bundle, esbuild min+gzip",
      "<= 24 KB, no node:",
      `${(e.gzipBytes / 1024).toFixed(1)} KB gz (${(e.minBytes / 1024).toFixed(1)} KB min), node: imports ${e.nodeImports.length}`,
      ok(e.gzipBytes <= 24 * 1024 && e.nodeImports.length === 0),
    ]);
  }
  if (g !== undefined && h !== undefined) {
    rows.push(
      [
        "(f) SDK over WebSocket loopback, full path",
        ">= 0.7x SDK NDJSON",
        `${k(ws)} = ${(ws / sd).toFixed(2)}x SDK NDJSON (${k(sd)} this run)`,
        ok(ws / sd >= 0.7),
      ],
      [
        `(g) ${g.n} WebSocket clients, tools all running, each stops once within ${WS_STOP_WINDOW_MS / 1000} s: turn/cancel -> turn/completed`,
        "p99 <= 50 ms",
        `p50 ${g.p50.toFixed(1)} ms, p99 ${g.p99.toFixed(1)} ms, max ${g.max.toFixed(1)} ms`,
        ok(g.p99 <= 50),
      ],
      [
        `(g) same, all ${gBurst!.n} stop in one burst`,
        "p99 <= 50 ms",
        `p50 ${gBurst!.p50.toFixed(1)} ms, p99 ${gBurst!.p99.toFixed(1)} ms = ${(gBurst!.p99 / g0!.p99).toFixed(1)}x the floor's p99`,
        ok(gBurst!.p99 <= 50),
      ],
      [
        `(g0) floor of the burst: ${g0!.n} bare sh groups SIGTERMed at once -> pipes closed, no host`,
        "-",
        `p50 ${g0!.p50.toFixed(1)} ms, p99 ${g0!.p99.toFixed(1)} ms (the kill loop alone ${g0!.killLoopMs.toFixed(1)} ms)`,
        "",
      ],
      [
        `(h) host RSS per idle WebSocket connection (${h.n} open)`,
        "<= 100 KB",
        `${h.perConnectionKiB.toFixed(1)} KiB (VmRSS ${(h.beforeKiB / 1024).toFixed(1)} -> ${(h.afterKiB / 1024).toFixed(1)} MiB)`,
        ok(h.perConnectionKiB <= 100),
      ],
    );
  }
  if (c1 !== undefined && c2 !== undefined) {
    const t = (x: number) => `${x < 1 ? x.toFixed(3) : x.toFixed(2)} ms`;
    for (const s of c1.stages) {
      const total = s.stage.startsWith("total");
      rows.push([
        `(c1) ${s.stage}`,
        total ? "p50 <= 2.5 ms, p99 <= 5 ms" : "-",
        `p50 ${t(s.p50)}, p99 ${t(s.p99)}${total ? ` (n=${c1.n})` : ""}`,
        total ? ok(s.p50 <= 2.5 && s.p99 <= 5) : "",
      ]);
    }
    rows.push(
      [`(c2) floor: bare sh group, ${c2.kill.exit.stage}`, "-", `p50 ${t(c2.kill.exit.p50)}, p99 ${t(c2.kill.exit.p99)} (n=${c2.kill.n})`, ""],
      [`(c2) floor: bare sh group, ${c2.kill.close.stage}`, "-", `p50 ${t(c2.kill.close.p50)}, p99 ${t(c2.kill.close.p99)}`, ""],
      [`(c2) floor: ${c2.sync.stage}`, "-", `p50 ${t(c2.sync.p50)}, p99 ${t(c2.sync.p99)} (n=200)`, ""],
      [`(c2) floor: ${c2.pipe.there.stage}, after 20 ms idle`, "-", `p50 ${t(c2.pipe.there.p50)}, p99 ${t(c2.pipe.there.p99)} (n=${c2.pipe.n})`, ""],
      [`(c2) floor: ${c2.pipe.back.stage}, after 20 ms idle`, "-", `p50 ${t(c2.pipe.back.p50)}, p99 ${t(c2.pipe.back.p99)}`, ""],
    );
  }
  if (s1 !== undefined && s2 !== undefined) {
    for (const s of [s1, s2]) {
      rows.push([
        `(s${s === s1 ? 1 : 2}) reference host -> SDK, item/delta, ${s.sessions} session${s.sessions === 1 ? "" : "s"} streaming, logs on`,
        ">= 0.5x SDK NDJSON",
        `${k(s.rate)} = ${(s.rate / sd).toFixed(2)}x SDK NDJSON (${k(sd)} this run; n=${s.notifications})`,
        ok(s.rate / sd >= 0.5),
      ]);
    }
  }
  if (r !== undefined) {
    const ms = (x: { p50: number; p99: number }) => `p50 ${x.p50.toFixed(1)} ms, p99 ${x.p99.toFixed(1)} ms`;
    rows.push(
      [
        `(r) socket drop -> the session's snapshot shows the first notification after the reconnect (initialDelayMs 0)`,
        "-",
        `${ms(r.session)} = ${(r.session.p50 / r.floor.p50).toFixed(2)}x / ${(r.session.p99 / r.floor.p99).toFixed(2)}x the floor's (n=${r.n})`,
        "",
      ],
      [`(r0) floor: bare ws socket, raw session/resume -> first notification frame`, "-", `${ms(r.floor)} (n=${r.n})`, ""],
    );
  }
  if (treeCancel !== undefined) rows.push(...treeCancelRows(treeCancel));
  if (delta !== undefined) {
    const { floor: f, bare: bd, sdk: sc, session: ss, mcp: m, acp: ac } = delta;
    const rate = (x: { rate: number; cpuUs: number }) => `${k(x.rate)}, ${x.cpuUs.toFixed(1)} us CPU/msg`;
    const sizes = `${deltaMeanBytes()}-byte deltas, ${deltaFloodMeanBytes()} bytes a message on average`;
    rows.push(
      [`(δ) floor: split lines + JSON.parse, item/delta flood (${sizes})`, "-", rate(f), ""],
      ["(δ) bare vscode-jsonrpc (Content-Length), same flood", "-", `${rate(bd)}: SDK = ${(sc.rate / bd.rate).toFixed(2)}x this`, ""],
      [
        "(δ) SDK client: item/delta folded into the ledger, typed events",
        ">= 0.7x floor, >= 3x MCP and ACP",
        `${rate(sc)} = ${(sc.rate / f.rate).toFixed(2)}x floor, ${(sc.rate / m.rate).toFixed(2)}x MCP, ${(sc.rate / ac.rate).toFixed(2)}x ACP`,
        ok(sc.rate / f.rate >= 0.7 && sc.rate / m.rate >= 3 && sc.rate / ac.rate >= 3),
      ],
      [
        "(δ) SDK openSession (Node): the same flood into the session's snapshot, read after every change",
        "-",
        `${rate(ss)} = ${(ss.rate / f.rate).toFixed(2)}x floor`,
        "",
      ],
      [
        `(δ) MCP SDK ${PEER_VERSIONS.mcp} Client + stdio, typed handler, as many messages of the same mean size`,
        "-",
        `${rate(m)}: SDK = ${(sc.rate / m.rate).toFixed(2)}x this`,
        "",
      ],
      [`(δ) ACP SDK ${PEER_VERSIONS.acp} client() + ndJsonStream, typed handler, same`, "-", `${rate(ac)}: SDK = ${(sc.rate / ac.rate).toFixed(2)}x this`, ""],
    );
  }
  if (b !== undefined && delta !== undefined) {
    rows.push([
      "(δ) round trip p50 beside the floor (row b, this run)",
      "<= 1.3x floor",
      `${b.sdk.p50.toFixed(0)} us vs ${b.floor.p50.toFixed(0)} us = ${(b.sdk.p50 / b.floor.p50).toFixed(2)}x floor`,
      ok(b.sdk.p50 <= 1.3 * b.floor.p50),
    ]);
  }
  if (browser !== undefined) rows.push(...browser.rows);
  if (bridge !== undefined) {
    const ms = (q: { p50: number; p95: number }) => `p50 ${q.p50.toFixed(0)} ms, p95 ${q.p95.toFixed(0)} ms`;
    const gone = (s: typeof bridge.bridged) => (s.stopToGoneMs === undefined ? `${s.outlived} of ${s.n} still ran 2 s after the terminal` : ms(s.stopToGoneMs));
    rows.push(
      [`(x) Codex ${PEER_VERSIONS.codex} alone: turn/interrupt -> turn/completed (N=${bridge.codexAlone.n})`, "-", ms(bridge.codexAlone.stopToTerminalMs), ""],
      ["(x) Codex alone: turn/interrupt -> the sleep gone", "-", gone(bridge.codexAlone), ""],
      [`(x) muse serve --agent codex: turn/cancel -> turn/completed (N=${bridge.bridged.n})`, "-", ms(bridge.bridged.stopToTerminalMs), ""],
      ["(x) through the bridge: turn/cancel -> the sleep gone", "none outlives the Stop", gone(bridge.bridged), ok(bridge.bridged.outlived === 0)],
    );
  }
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]?.length ?? 0), ["what", "target", "measured", "status"][i]?.length ?? 0));
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  console.log(line(["what", "target", "measured", "status"]));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(r));
  if (only !== undefined && out === undefined) {
    log("a partial run (--only): bench/results.json left as it was");
    return;
  }
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: (await import("node:os")).cpus().length,
    config: {
      notifications: N,
      reps: REPS,
      roundTrips: RTT_ROUNDS,
      cancels: CANCEL_RUNS,
      webSocketClients: WS_CLIENTS,
      idleWebSockets: WS_IDLE,
      reconnects: RECONNECTS,
      treeReps: TREE_REPS,
    },
    throughput: a,
    ratios: {
      sdkOverFloor: sd / fl,
      sdkOverBare: sd / br,
      sdkClOverBare: cl / br,
      webSocketOverSdk: ws / sd,
      sdkOverMcp: sd / peerRate("mcp"),
      sdkOverMcpFallback: sd / peerRate("mcpFallback"),
      sdkOverAcp: sd / peerRate("acp"),
      sdkOverAcpFallback: sd / peerRate("acpFallback"),
      roundTripP50OverFloor: b === undefined ? NaN : b.sdk.p50 / b.floor.p50,
      roundTripP50OverMcp: b === undefined ? NaN : b.sdk.p50 / b.mcp.p50,
      roundTripP99OverMcp: b === undefined ? NaN : b.sdk.p99 / b.mcp.p99,
      reconnectP50OverFloor: r === undefined ? NaN : r.session.p50 / r.floor.p50,
      reconnectP99OverFloor: r === undefined ? NaN : r.session.p99 / r.floor.p99,
      deltaSdkOverFloor: delta === undefined ? NaN : delta.sdk.rate / delta.floor.rate,
      deltaSdkOverMcp: delta === undefined ? NaN : delta.sdk.rate / delta.mcp.rate,
      deltaSdkOverAcp: delta === undefined ? NaN : delta.sdk.rate / delta.acp.rate,
      deltaSessionOverFloor: delta === undefined ? NaN : delta.session.rate / delta.floor.rate,
    },
    peers: PEER_VERSIONS,
    roundTrip: b,
    cancel: c,
    cancelIgnoringSigterm: cStubborn,
    recorder: d,
    bundle: e,
    webSocketCancel: g,
    webSocketCancelBurst: gBurst,
    webSocketCancelFloor: g0,
    webSocketIdleRss: h,
    cancelTrace: c1,
    cancelFloor: c2,
    hostStream: { oneSession: s1, hundredSessions: s2, sdkNdjson: sd },
    reconnect: r,
    subagentTreeCancel: treeCancel,
    deltaFlood:
      delta === undefined
        ? undefined
        : { notifications: DELTA_N, rounds: DELTA_ROUNDS, deltaBytes: deltaMeanBytes(), meanBytes: deltaFloodMeanBytes(), ...delta },
    browserStream: browser?.figures,
    bridgeStop: bridge,
    table: rows,
  };
  const file = out ?? fileURLToPath(new URL("./results.json", import.meta.url));
  writeFileSync(file, `${JSON.stringify({ ...results, only: only ?? "all" }, null, 2)}\n`);
  log(`wrote ${file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
