/**
 * Leak probe, run in a child `node --expose-gc --import tsx` by leaks.test.ts: 100 000 command
 * round trips (some with a caller signal, some with terminal waits) plus 20 connect/close cycles
 * over an in-memory peer. Prints one JSON line: heap growth, live timers, abort listeners left
 * on the caller's signal, warnings, pending commands and waiters.
 */
import { connect, type MspClient } from "../../src/index.js";
import { createLinkedPair } from "../../src/testing/index.js";

const ROUND_TRIPS = Number(process.argv[2] ?? 100_000);
const CYCLES = 20;
const BATCH = 100;
/** Self-test: retain 1 KB per round trip, so the test can prove the probe sees a real leak. */
const PLANT = process.env["LEAK_PROBE_PLANT"] === "1";
const planted: string[] = [];

// Count live timers: every setTimeout until it fires or is cleared.
const live = new Set<unknown>();
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
  const handle: unknown = realSetTimeout(
    (...a: unknown[]) => {
      live.delete(handle);
      fn(...a);
    },
    ms,
    ...args,
  );
  live.add(handle);
  return handle;
}) as typeof setTimeout;
globalThis.clearTimeout = ((handle: unknown) => {
  live.delete(handle);
  realClearTimeout(handle as ReturnType<typeof setTimeout>);
}) as typeof clearTimeout;

const warnings: string[] = [];
process.on("warning", (w) => warnings.push(`${w.name}: ${w.message}`));

// A caller's signal whose abort listeners we count.
const controller = new AbortController();
const signal = controller.signal;
let abortListeners = 0;
const add = signal.addEventListener.bind(signal);
const remove = signal.removeEventListener.bind(signal);
signal.addEventListener = ((type: string, ...rest: unknown[]) => {
  if (type === "abort") abortListeners++;
  return (add as (...a: unknown[]) => void)(type, ...rest);
}) as typeof signal.addEventListener;
signal.removeEventListener = ((type: string, ...rest: unknown[]) => {
  if (type === "abort") abortListeners--;
  return (remove as (...a: unknown[]) => void)(type, ...rest);
}) as typeof signal.removeEventListener;

const enc = new TextEncoder();
const dec = new TextDecoder();
let cursor = 0;

/** An in-memory host that answers every request and, for turn/start, sends the turn's terminal first. */
function pair(): MspClient {
  const [clientSide, hostSide] = createLinkedPair();
  let buffer = "";
  hostSide.onData((chunk) => {
    buffer += dec.decode(chunk, { stream: true });
    let nl = buffer.indexOf("\n");
    let out = "";
    while (nl >= 0) {
      const m = JSON.parse(buffer.slice(0, nl)) as { id: number; method: string; params: { commandId: string; hang?: boolean } };
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      if (m.params.hang === true) continue;
      if (m.method === "turn/start") {
        const turnId = m.params.commandId;
        out += `${JSON.stringify({ jsonrpc: "2.0", method: "turn/completed", params: { sessionId: "s", viewCursor: `v:s:${++cursor}`, turnId, terminal: "completed", reason: "completed", durationMs: 1 } })}\n`;
        out += `${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { status: "accepted", commandId: turnId, turnId, startedNewTurn: true, disposition: "started" } })}\n`;
      } else out += `${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { status: "accepted", commandId: m.params.commandId } })}\n`;
    }
    if (out !== "") hostSide.write(enc.encode(out));
  });
  return connect(clientSide);
}

async function roundTrips(client: MspClient, n: number): Promise<void> {
  for (let done = 0; done < n; done += BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = 0; i < BATCH; i++) {
      const k = done + i;
      // At most 10 abort listeners on the caller's signal at once (Node warns beyond that; see
      // leaks.test.ts for that case on its own).
      if (k % 10 === 0) {
        const withSignal = k % 50 === 0 ? { signal } : {};
        const turn = client.startTurn({ sessionId: "s", input: [] }, withSignal);
        batch.push(turn.waitForTerminal({ ...withSignal, timeoutMs: 10_000 }));
      } else batch.push(client.command("host/info", {}, k % 33 === 0 ? { signal } : {}));
    }
    await Promise.all(batch);
    if (PLANT) for (let i = 0; i < BATCH; i++) planted.push(`${i}`.padEnd(1024, "x"));
  }
}

const gc = (globalThis as { gc?: () => void }).gc as () => void;
const heap = async () => {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
};

const main = async () => {
  // Warm up (JIT, and the connection's bounded tables reaching their steady size).
  const warm = pair();
  await roundTrips(warm, 10_000);
  await warm.close();
  const before = await heap();

  const client = pair();
  await roundTrips(client, ROUND_TRIPS);
  const counts = { pending: client.pendingCount, waiters: client.turns.waiterCount };
  await client.close();

  for (let c = 0; c < CYCLES; c++) {
    const cycle = pair();
    await roundTrips(cycle, 500);
    // Leave work pending across the close: it must all settle and clean up.
    const pending = [
      cycle.command("host/info", { hang: true }, { signal }),
      cycle.turns.terminalOf(`never-${c}`, { signal }),
      cycle.turns.terminalOf(`never-${c}`, { timeoutMs: Infinity }),
    ];
    await cycle.close();
    await Promise.allSettled(pending);
    if (cycle.pendingCount !== 0 || cycle.turns.waiterCount !== 0) counts.pending += 1000;
  }
  await new Promise((r) => setImmediate(r));
  const after = await heap();
  console.log(
    JSON.stringify({
      heapGrowthMB: (after - before) / (1024 * 1024),
      planted: planted.length,
      liveTimers: live.size,
      abortListeners,
      warnings,
      ...counts,
      activeResources: process.getActiveResourcesInfo(),
    }),
  );
};
void main();
