/**
 * The delta flood (issue 34): N `item/delta`-heavy MSP notifications (bench/children/floodBodies.mjs
 * `deltaBody`: per turn of 100, `turn/started`, `item/started`, 96 deltas of ~770 bytes, the whole
 * message in `item/completed`, `turn/completed`) from a real child process, received by the floor,
 * bare vscode-jsonrpc, the SDK's client, the SDK's session layer (`openSession`, a subscriber
 * reading every snapshot as React's `useSyncExternalStore` does), and, for the peers, MCP and ACP
 * floods of as many notifications of the same mean size. Each row counts every notification in
 * order (bench/peers/deliveryCount.ts) and reports notifications/s and this process's CPU per
 * notification, first to last. Run by bench/run.ts (`--only=delta`); alone, for a profile:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/deltaFlood.ts sdk 200000
 *   npx tsx bench/deltaFlood.ts session,sdk,floor 100000 3
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as rpc from "vscode-jsonrpc/node";
import { spawnHost, type SpawnedHost } from "../src/node/index.js";
import { openSession } from "../src/session/index.js";
import { DELTA_TURN, deltaBody } from "./children/floodBodies.mjs";
import { acpThroughput } from "./peers/acp.js";
import { DeliveryCount } from "./peers/deliveryCount.js";
import { mcpThroughput } from "./peers/mcp.js";

const flood = fileURLToPath(new URL("./children/flood.mjs", import.meta.url));

/** One row's run: notifications/s, and this process's CPU per notification. @unit messages/s, microseconds */
export interface FloodRun {
  rate: number;
  cpuUs: number;
}

/** The flood's mean notification size, in bytes of JSON (the peers' notifications are made this long). */
export function deltaFloodMeanBytes(n = DELTA_TURN * 10): number {
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += Buffer.byteLength(deltaBody(i));
  return Math.round(bytes / n);
}

/** The mean size of the flood's `item/delta` notifications alone. @unit bytes */
export function deltaMeanBytes(): number {
  let bytes = 0;
  let deltas = 0;
  for (let i = 0; i < DELTA_TURN; i++) {
    const body = deltaBody(i);
    if (!body.includes('"method":"item/delta"')) continue;
    bytes += Buffer.byteLength(body);
    deltas++;
  }
  return Math.round(bytes / deltas);
}

async function counted(count: DeliveryCount, stop: () => Promise<void>): Promise<FloodRun> {
  try {
    const rate = await count.rate;
    return { rate, cpuUs: count.cpuUsPerMessage as number };
  } finally {
    await stop();
  }
}

function stopChild(c: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve();
    c.once("exit", () => resolve());
    c.stdin?.end();
    setTimeout(() => c.kill("SIGKILL"), 2_000).unref();
  });
}

/** Floor: split lines on 0x0A and `JSON.parse` each, in the parent; nothing else. */
export function floorDeltas(n: number): Promise<FloodRun> {
  const c = spawn(process.execPath, [flood, String(n), "ndjson", "deltas"], { stdio: ["pipe", "pipe", "inherit"] });
  const count = new DeliveryCount("floor (deltas)", n);
  let rest: Buffer | undefined;
  c.stdout.on("data", (chunk: Buffer) => {
    const buf = rest === undefined ? chunk : Buffer.concat([rest, chunk]);
    let start = 0;
    let nl = buf.indexOf(10, start);
    while (nl >= 0) {
      const m = JSON.parse(buf.toString("utf8", start, nl)) as { emittedAtMs: number };
      count.note(m.emittedAtMs + 1);
      start = nl + 1;
      nl = buf.indexOf(10, start);
    }
    rest = start < buf.length ? buf.subarray(start) : undefined;
  });
  c.stdin.write("g");
  return counted(count, () => stopChild(c));
}

/** Bare vscode-jsonrpc over Content-Length: `StreamMessageReader` + `createMessageConnection`, a star handler. */
export function bareDeltas(n: number): Promise<FloodRun> {
  const c = spawn(process.execPath, [flood, String(n), "content-length", "deltas"], { stdio: ["pipe", "pipe", "inherit"] });
  const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(c.stdout), new rpc.StreamMessageWriter(c.stdin));
  const count = new DeliveryCount("bare vscode-jsonrpc (deltas)", n);
  // Its handler is given the method and params only: counted, the order not checked.
  connection.onNotification(() => count.note(undefined));
  connection.listen();
  c.stdin.write("g");
  return counted(count, async () => {
    connection.dispose();
    await stopChild(c);
  });
}

/** The SDK's client: `spawnHost` (framing, guards, cursor check, ledger fold, typed events) and a notification handler. */
export async function sdkDeltas(n: number): Promise<FloodRun> {
  const host = spawnHost({ command: process.execPath, args: [flood, String(n), "ndjson", "deltas"], stderr: "inherit" });
  const count = new DeliveryCount("SDK client (deltas)", n);
  host.onNotification(({ emittedAtMs }) => count.note((emittedAtMs as number) + 1));
  host.process.stdin?.write("g");
  return counted(count, async () => void (await host.close()));
}

/**
 * The SDK's session layer: `openSession` on a `spawnHost` client (the child answers its
 * `session/create` with the flood's session), a subscriber reading the snapshot after every change,
 * as React's `useSyncExternalStore` does. Counted in the client's handler, which runs after the
 * session's listeners; at the end the last turn's message must be whole in the snapshot.
 */
export async function sessionDeltas(n: number): Promise<FloodRun> {
  let host: SpawnedHost | undefined;
  const count = new DeliveryCount("SDK openSession (deltas)", n);
  const warnings: string[] = [];
  const session = await openSession({
    connect: () => {
      host = spawnHost({ command: process.execPath, args: [flood, String(n), "ndjson", "deltas"], stderr: "inherit" });
      host.onNotification(({ emittedAtMs }) => count.note((emittedAtMs as number) + 1));
      return Promise.resolve(host);
    },
    reconnect: false,
    onWarning: (message) => warnings.push(message),
  });
  let reads = 0;
  const unsubscribe = session.subscribe(() => {
    if (session.getSnapshot().turns.length > 0) reads++;
  });
  return counted(count, async () => {
    unsubscribe();
    const turns = session.getSnapshot().turns;
    const last = turns[turns.length - 1];
    const lastBody = JSON.parse(deltaBody(Math.floor((n - 1) / DELTA_TURN) * DELTA_TURN + DELTA_TURN - 2)) as { params: { item: { text: string } } };
    const text = (last?.items[0] as { text?: string } | undefined)?.text;
    await session.close();
    if (warnings.length > 0) throw new Error(`openSession warned: ${warnings[0]}`);
    if (n % DELTA_TURN === 0 && text !== lastBody.params.item.text) throw new Error("openSession: the last message is not whole in the snapshot");
    if (reads === 0) throw new Error("openSession: the subscriber never read a snapshot");
  });
}

/** MCP's `Client` (typed handler), the same number of `notifications/message` of the flood's mean size. */
export async function mcpDeltas(n: number, handler: "typed" | "fallback" = "typed"): Promise<FloodRun> {
  let count: DeliveryCount | undefined;
  const rate = await mcpThroughput(n, handler, deltaFloodMeanBytes(), (c) => (count = c));
  return { rate, cpuUs: count?.cpuUsPerMessage as number };
}

/** ACP's `client()` app (typed handler), the same number of `session/update` chunks of the flood's mean size. */
export async function acpDeltas(n: number, handler: "typed" | "fallback" = "typed"): Promise<FloodRun> {
  let count: DeliveryCount | undefined;
  const rate = await acpThroughput(n, handler, deltaFloodMeanBytes(), (c) => (count = c));
  return { rate, cpuUs: count?.cpuUsPerMessage as number };
}

/** Every row of the delta flood, by name. */
export const DELTA_ROWS = {
  floor: floorDeltas,
  bare: bareDeltas,
  sdk: sdkDeltas,
  session: sessionDeltas,
  mcp: (n: number) => mcpDeltas(n),
  acp: (n: number) => acpDeltas(n),
} as const satisfies Record<string, (n: number) => Promise<FloodRun>>;

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = (process.argv[2] ?? "floor,sdk,session").split(",") as Array<keyof typeof DELTA_ROWS>;
  const n = Number(process.argv[3] ?? 100_000);
  const reps = Number(process.argv[4] ?? 1);
  for (let r = 0; r < reps; r++) {
    for (const name of names) {
      const run = await DELTA_ROWS[name](n);
      process.stderr.write(`${name} rep ${r + 1}: ${Math.round(run.rate).toLocaleString("en")} msg/s, ${run.cpuUs.toFixed(2)} us CPU/msg\n`);
    }
  }
  process.exit(0);
}
