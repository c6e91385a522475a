/**
 * Bench rows of cancel latency explained (issue 11 §3), run by bench/run.ts (`--only=cancel`):
 * - (c1) one cancel at a time on the reference host, traced end to end: the client's send and
 *   receive marks plus the host's own (`MUSE_HOST_TRACE`, packages/host/src/server/traceMarks.ts) on the one
 *   monotonic clock, as median and p99 per stage;
 * - (c2) the floor under it on this machine: a bare `/bin/sh` group like the fixture's, SIGTERMed
 *   once its grandchild printed, timed to `exit` and to its pipes closing, with no host at all;
 *   and a bare `write` + `fdatasync` of a ~600-byte line in the data dir's file system.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { TurnCompletedParams } from "../src/index.js";
import { spawnHost } from "../src/node/index.js";
import { percentile, sleep } from "./timing.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const now = () => process.hrtime.bigint();
const ms = (a: bigint, b: bigint) => Number(b - a) / 1e6;

/** Median and p99 of one stage, in milliseconds. */
export interface Stage {
  stage: string;
  p50: number;
  p99: number;
}

/** The stages of one cancel, each from the mark before it (the host's marks are in packages/host/src). */
const STAGES: Array<[string, string, string]> = [
  ["client send -> host reads stdin (SDK send path, pipe)", "client.send", "stdio.read"],
  ["host reads stdin -> cancel dispatched (split, parse, route)", "stdio.read", "cancel.received"],
  ["host receive -> SIGTERM sent (abort)", "cancel.received", "tool.sigterm"],
  ["(aside) SIGTERM sent -> cancelRequested durable", "tool.sigterm", "cancel.logged"],
  ["SIGTERM -> tool exit seen ('exit')", "tool.sigterm", "tool.exit"],
  ["tool exit -> pipes closed ('close')", "tool.exit", "tool.closed"],
  ["pipes closed -> item/completed written", "tool.closed", "item/completed.write"],
  ["item/completed written -> turn/completed written", "item/completed.write", "turn/completed.write"],
  ["turn/completed written -> both durable (fdatasync)", "turn/completed.write", "turn/completed.durable"],
  ["turn/completed durable -> sent", "turn/completed.durable", "turn/completed.sent"],
  ["turn/completed sent -> client receives", "turn/completed.sent", "client.receive"],
  ["total: client send -> client receives", "client.send", "client.receive"],
];

/**
 * (c1) `runs` cancels, one at a time, of `shell-sleep.json`'s tool once it has printed, on a host
 * with `MUSE_HOST_TRACE` set; the per-stage breakdown and the total.
 */
export async function tracedCancel(runs: number): Promise<{ stages: Stage[]; n: number }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-cancel-trace-"));
  const traceFile = join(dir, "trace.txt");
  const host = spawnHost({
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      "packages/host/src/serve/main.ts",
      "serve",
      "--stdio",
      "--script",
      "test/fixtures/models/shell-sleep.json",
      "--kill-grace-ms",
      "500",
    ],
    cwd: root,
    stderr: "ignore",
    killGraceMs: 500,
    env: { ...process.env, MUSE_HOST_TRACE: traceFile },
  });
  const client: Array<{ send: bigint; receive: bigint }> = [];
  try {
    const { sessionId } = await host.command("session/create", {}, { timeoutMs: 20_000 });
    for (let i = 0; i < runs; i++) {
      const running = new Promise<string>((resolve) => {
        const onItem = (p: { item: { kind: string; turnId: string; visibleOutput?: string } }) => {
          if (p.item.kind === "toolCall" && (p.item.visibleOutput ?? "").includes("grandchild")) {
            host.events.off("item/delta", onItem);
            resolve(p.item.turnId);
          }
        };
        host.events.on("item/delta", onItem);
      });
      const turn = host.startTurn({ sessionId, input: [{ type: "text", text: `run ${i}` }] });
      const turnId = await Promise.race([running, sleep(10_000).then(() => Promise.reject(new Error("the tool never started")))]);
      const received = new Promise<bigint>((resolve) => {
        const onDone = (p: TurnCompletedParams) => {
          if (p.turnId !== turnId) return;
          const at = now();
          host.events.off("turn/completed", onDone);
          resolve(at);
        };
        host.events.on("turn/completed", onDone);
      });
      const send = now();
      const outcome = await turn.cancel({ timeoutMs: 10_000 });
      if (outcome.turnCompleted.terminal !== "cancelled") throw new Error(`expected cancelled, got ${outcome.turnCompleted.terminal}`);
      client.push({ send, receive: await received });
    }
  } finally {
    await host.close(); // the host writes its trace at exit
  }
  const marks = readFileSync(traceFile, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [at, label] = line.split(" ");
      return { at: BigInt(at as string), label: label as string };
    });
  rmSync(dir, { recursive: true, force: true });
  const starts = marks.flatMap((m, i) => (m.label === "cancel.received" ? [i] : []));
  if (starts.length !== runs) throw new Error(`expected ${runs} traced cancels, found ${starts.length}`);
  const perStage = new Map<string, number[]>(STAGES.map(([name]) => [name, []]));
  for (let r = 0; r < runs; r++) {
    const slice = marks.slice(starts[r], starts[r + 1] ?? marks.length);
    const at = new Map<string, bigint>([
      ["client.send", client[r]!.send],
      ["client.receive", client[r]!.receive],
    ]);
    for (const m of slice) if (!at.has(m.label)) at.set(m.label, m.at);
    // The stdin read that carried the cancel: the last one before the host dispatched it.
    for (let i = (starts[r] as number) - 1; i >= 0; i--) {
      if (marks[i]!.label !== "stdio.read") continue;
      at.set("stdio.read", marks[i]!.at);
      break;
    }
    for (const [name, from, to] of STAGES) {
      const a = at.get(from);
      const b = at.get(to);
      if (a === undefined || b === undefined) throw new Error(`run ${r}: no mark ${a === undefined ? from : to}`);
      perStage.get(name)!.push(ms(a, b));
    }
  }
  const stages = STAGES.map(([name]) => {
    const xs = perStage.get(name)!;
    return { stage: name, p50: percentile(xs, 50), p99: percentile(xs, 99) };
  });
  return { stages, n: runs };
}

/**
 * A bare `/bin/sh` process group running the command of the fixture shell-sleep.json (a shell that
 * waits on a grandchild `sleep 30`), detached as the shell tool spawns it, with no host at all;
 * `printed` resolves once the grandchild has printed its line (the group is whole).
 */
export function spawnFixtureGroup(): { shell: ChildProcessByStdio<null, Readable, Readable>; printed: Promise<void> } {
  const shell = spawn("/bin/sh", ["-c", "echo started $$; sh -c 'echo grandchild $$; exec sleep 30' & wait"], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const printed = new Promise<void>((resolve) => {
    let text = "";
    shell.stdout.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (text.includes("grandchild")) resolve();
    });
  });
  return { shell, printed };
}

/**
 * (c2) The floor: `runs` times, spawn the fixture's command as a detached `/bin/sh` group, wait
 * for its grandchild's line, SIGTERM the group, and time `exit` and `close` (all pipes closed).
 */
export async function killFloor(runs: number): Promise<{ exit: Stage; close: Stage; n: number }> {
  const exits: number[] = [];
  const closes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { shell: child, printed } = spawnFixtureGroup();
    await printed;
    const done = new Promise<void>((resolve) => {
      let t0 = 0n;
      child.once("exit", () => exits.push(ms(t0, now())));
      child.once("close", () => {
        closes.push(ms(t0, now()));
        resolve();
      });
      t0 = now();
      process.kill(-(child.pid as number), "SIGTERM");
    });
    await done;
  }
  const stage = (name: string, xs: number[]) => ({ stage: name, p50: percentile(xs, 50), p99: percentile(xs, 99) });
  return { exit: stage("SIGTERM -> exit", exits), close: stage("SIGTERM -> pipes closed", closes), n: runs };
}

/** (c2) `runs` appends of a ~600-byte line, each `fdatasync`ed, in a file under `dir`. */
export function fdatasyncFloor(runs: number, dir = tmpdir()): Stage {
  const work = mkdtempSync(join(dir, "muse-fdatasync-"));
  const fd = openSync(join(work, "log.jsonl"), "a");
  const times: number[] = [];
  const line = `${JSON.stringify({ type: "notification", pad: "x".repeat(560) })}\n`;
  try {
    for (let i = 0; i < runs; i++) {
      const t0 = now();
      writeSync(fd, line);
      fdatasyncSync(fd);
      times.push(ms(t0, now()));
    }
  } finally {
    closeSync(fd);
    rmSync(work, { recursive: true, force: true });
  }
  return { stage: `write + fdatasync (${dir})`, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/**
 * (c2) The floor of a message between two idle Node processes over a pipe, each way, on the one
 * monotonic clock: `runs` times, after `idleMs` of silence, the parent writes one line to a bare
 * Node child's stdin; the child takes its time in its `data` handler and writes it back at once;
 * the parent takes its time in its own `data` handler (after five unmeasured exchanges). "there" is parent write → child reads (the
 * floor of "client send → host reads stdin"), "back" is child write → parent reads (the floor of
 * "turn/completed sent → client receives"). Milliseconds.
 */
export async function idlePipeFloor(runs: number, idleMs = 20): Promise<{ there: Stage; back: Stage; n: number }> {
  const echo = `process.stdin.on("data", () => process.stdout.write(process.hrtime.bigint() + "\\n"));`;
  const child = spawn(process.execPath, ["-e", echo], { stdio: ["pipe", "pipe", "inherit"] });
  const there: number[] = [];
  const back: number[] = [];
  try {
    // Five unmeasured exchanges first: the child's start-up is not the floor.
    for (let i = -5; i < runs; i++) {
      await sleep(idleMs);
      const reply = new Promise<{ at: bigint; text: string }>((resolve) =>
        child.stdout.once("data", (chunk: Buffer) => resolve({ at: now(), text: chunk.toString("utf8") })),
      );
      const sent = now();
      child.stdin.write("x\n");
      const { at, text } = await reply;
      const childRead = BigInt(text.trim());
      if (i < 0) continue;
      there.push(ms(sent, childRead));
      back.push(ms(childRead, at));
    }
  } finally {
    child.stdin.end();
  }
  const stage = (name: string, xs: number[]) => ({ stage: name, p50: percentile(xs, 50), p99: percentile(xs, 99) });
  return { there: stage("idle pipe, parent write -> child reads", there), back: stage("idle pipe, child write -> parent reads", back), n: runs };
}
