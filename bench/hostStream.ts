/**
 * Bench rows of the reference host as a streamer (issue 11 §4), run by bench/run.ts
 * (`--only=stream`): `item/delta` notifications per second from one reference host
 * (`serve --stdio`, session logs on in its temp data dir) to one SDK client,
 * - (s1) from one session streaming a long scripted answer, and
 * - (s2) from 100 sessions streaming at once (one turn each, all started together).
 * The scripted model streams without pauses (`chunkDelayMs: 0`), 2 characters a chunk, so every
 * notification is the item's whole text so far: about 800 bytes on average, like row (a).
 * `hostCpuUs` is the host's CPU time (user + system) per notification over the same span,
 * `hostSystemUs` the part of it spent in the kernel (writes to the pipe and the log, syncs).
 * `BENCH_HOST_CPU_PROF=<dir>` runs the host under `node --cpu-prof` into that directory, sampling
 * every `BENCH_HOST_CPU_PROF_INTERVAL` microseconds (default 1000).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TurnCompletedParams } from "../src/index.js";
import { spawnHost } from "../src/node/index.js";

const root = fileURLToPath(new URL("../", import.meta.url));
/** Characters of each step's answer; with 2 per chunk, each step sends half as many item/delta. */
const STEP_CHARS = 1000;
const CHUNK = 2;
const PER_STEP = STEP_CHARS / CHUNK;

/**
 * CPU time the process has used so far, user and system (from `/proc/<pid>/stat`), or `undefined`
 * off Linux. @unit milliseconds, in steps of the clock tick (10 ms)
 */
function cpuMs(pid: number): { user: number; system: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }; // utime, stime: fields 14 and 15, in ticks of 1/100 s
  } catch {
    return undefined;
  }
}

/** A scripted model whose one turn streams `steps` answers of {@link STEP_CHARS} characters. */
function writeModel(dir: string, steps: number): string {
  const text = "lorem ipsum dolor sit amet, ".repeat(Math.ceil(STEP_CHARS / 28)).slice(0, STEP_CHARS);
  const path = join(dir, "stream.json");
  const turn = { steps: Array.from({ length: steps }, () => ({ text, chunkSize: CHUNK, chunkDelayMs: 0 })) };
  writeFileSync(path, JSON.stringify({ turns: Array.from({ length: 4 }, () => turn) }));
  return path;
}

/**
 * `sessions` sessions each run one turn of `steps` streamed answers at once; `item/delta`
 * notifications per second received by the client, from the first to the last. Checks the count,
 * and that each session's cursors only increase.
 */
export async function hostStream(
  sessions: number,
  steps: number,
): Promise<{ rate: number; notifications: number; sessions: number; hostCpuUs: number | undefined; hostSystemUs: number | undefined }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-stream-bench-"));
  const profile = process.env["BENCH_HOST_CPU_PROF"];
  const host = spawnHost({
    command: process.execPath,
    args: [
      ...(profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profile, "--cpu-prof-interval", process.env["BENCH_HOST_CPU_PROF_INTERVAL"] ?? "1000"]),
      "--import",
      "tsx",
      "packages/host/src/serve/main.ts",
      "serve",
      "--stdio",
      "--script",
      writeModel(dir, steps),
    ],
    cwd: root,
    stderr: "inherit",
    defaultTimeoutMs: 120_000,
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) ids.push((await host.command("session/create", {}, { timeoutMs: 20_000 })).sessionId);
    const expected = sessions * steps * PER_STEP;
    let count = 0;
    let first = 0;
    let last = 0;
    const lastCursor = new Map<string, number>();
    let outOfOrder = 0;
    let cpuAtFirst: ReturnType<typeof cpuMs>;
    host.events.on("item/delta", (p: { sessionId: string; viewCursor: string }) => {
      if (count++ === 0) {
        first = performance.now();
        cpuAtFirst = cpuMs(host.pid);
      }
      last = performance.now();
      const n = Number(p.viewCursor.slice(p.viewCursor.lastIndexOf(":") + 1));
      if (n <= (lastCursor.get(p.sessionId) ?? 0)) outOfOrder++;
      lastCursor.set(p.sessionId, n);
    });
    const done = ids.map(
      (sessionId) =>
        new Promise<void>((resolve) => {
          const onDone = (p: TurnCompletedParams) => {
            if (p.sessionId !== sessionId) return;
            host.events.off("turn/completed", onDone);
            resolve();
          };
          host.events.on("turn/completed", onDone);
        }),
    );
    for (const sessionId of ids) void host.startTurn({ sessionId, input: [{ type: "text", text: "stream" }] });
    await Promise.all(done);
    const cpuAtLast = cpuMs(host.pid);
    if (count !== expected) throw new Error(`expected ${expected} item/delta, got ${count}`);
    if (outOfOrder !== 0) throw new Error(`${outOfOrder} item/delta came with a cursor that did not increase`);
    const per = (ms: number) => (ms * 1000) / count;
    const spent =
      cpuAtFirst === undefined || cpuAtLast === undefined
        ? undefined
        : { user: cpuAtLast.user - cpuAtFirst.user, system: cpuAtLast.system - cpuAtFirst.system };
    return {
      rate: count / ((last - first) / 1000),
      notifications: count,
      sessions,
      hostCpuUs: spent === undefined ? undefined : per(spent.user + spent.system),
      hostSystemUs: spent === undefined ? undefined : per(spent.system),
    };
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
