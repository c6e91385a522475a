/**
 * Rows (t) and (t0), issue 23: cancel a tree. From the parent's `turn/cancel` sent to the parent's
 * `turn/completed` received, with N child turns running (each in its own child session, each
 * running a shell tool in its own process group), beside the floor of killing the same N tool
 * process groups directly, with no host.
 *
 * - (t) the real reference host (`packages/host/src/serve/main.ts serve --stdio --script … --data …
 *   --max-subagents-per-turn <largest N>`, a child process with its session logs on disk in a temp
 *   dir) plays a scripted model written here: one step with N `task` calls, each to the agent
 *   `sleeper`, whose turn runs the shell tool `echo started $$; exec sleep 60` (a `sleep` that
 *   exits on SIGTERM). Once every one of the N tools has printed its line (the SDK's `item/delta`,
 *   which the root client delivers for child sessions too) and `SETTLE_MS` more, the bench cancels
 *   the parent turn (`TurnHandle.cancel`); the clock stops when the parent's `turn/completed`
 *   arrives. Each run checks the tree: the parent ends `cancelled` (cause `user`), and before it N
 *   child turns ended `cancelled` with cause `parent`.
 * - (t0) the floor, in the same run: one bare Node process (this one) spawns N `/bin/sh -c` groups
 *   running the same command, detached with piped stdout and stderr as the host's shell tool
 *   spawns them, waits until each printed and `SETTLE_MS` more, SIGTERMs every group in one loop,
 *   and stops the clock when the last group's pipes closed (the host's shell tool waits for
 *   `close` too).
 *
 * Each repetition runs every N, tree then floor, so machine noise hits both alike. Median and p95
 * (nearest rank) per N, and how the gap grows with N: milliseconds per child beyond the floor.
 *
 * Alone: `npx tsx bench/subagentTree.ts [--sizes=1,10,50] [--reps=20] [--trace] [--tmp=DIR] [--write]`.
 * `--trace` runs the host with `MUSE_HOST_TRACE` (packages/host/src/server/traceMarks.ts) and breaks each cancel
 * down into stages on the one monotonic clock (where the time per child goes); `--write` stores
 * the result as `subagentTreeCancel` in bench/results.json, leaving its other rows as they were;
 * `--tmp=DIR` puts the host's data dir (its session logs) under DIR instead of the OS temp dir
 * (`--tmp=/dev/shm`: a tmpfs, where `fdatasync` costs next to nothing).
 * `npm run bench` runs it as the group `tree` (`--only=tree`).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TurnCompletedParams } from "../src/index.js";
import { spawnHost, type SpawnedHost } from "../src/node/index.js";
import { percentile, sleep, within } from "./timing.js";

const root = fileURLToPath(new URL("../", import.meta.url));

/** The command every tool runs, in the tree and in the floor: prints, then sleeps until SIGTERM. */
export const TOOL_COMMAND = "echo started $$; exec sleep 60";
/** After the last tool printed, before the cancel or the kill loop: the host has gone quiet. @unit milliseconds */
export const SETTLE_MS = 300;
/** The children counts measured by default. @unit child turns */
export const DEFAULT_SIZES: readonly number[] = [1, 10, 50];
/** A wait on real processes, bounded generously for a loaded machine. @unit milliseconds */
const WAIT_MS = 60_000;

/** Median and p95 of one series, and its samples in the order they were taken. @unit milliseconds */
export interface Spread {
  p50: number;
  p95: number;
  max: number;
  runs: number[];
}

/** One N: the tree's cancel and the floor's kill, and the gap between their medians. */
export interface TreeCancelSize {
  /** @unit child turns */
  children: number;
  tree: Spread;
  floor: Spread;
  /** Tree median minus floor median. @unit milliseconds */
  overFloorP50: number;
  /** Tree p95 minus floor p95. @unit milliseconds */
  overFloorP95: number;
}

/** The whole row: every N, and the slopes over N (least squares on the medians). */
export interface TreeCancelResult {
  date: string;
  node: string;
  cpus: number;
  /** The 1, 5 and 15 minute load averages when the row started. */
  loadAverage: number[];
  reps: number;
  /** Where the host's data dir (its session logs) was: the OS temp dir unless `tmp` named one. */
  dataUnder: string;
  sizes: TreeCancelSize[];
  /** Slope of the tree's median over N. @unit milliseconds per child */
  treeMsPerChild: number;
  /** Slope of the floor's median over N. @unit milliseconds per child */
  floorMsPerChild: number;
  /** Slope of (tree median − floor median) over N: what each child adds beyond the floor. @unit milliseconds per child */
  msPerChildBeyondFloor: number;
  /** With `trace`: per N, the median of each stage of the tree's cancel (host marks). */
  stages?: Array<{ children: number; stages: Array<{ stage: string; p50: number; p95: number }> }>;
}

/** One measured cancel on the monotonic clock: the client's send and receive. @unit nanoseconds */
interface Timed {
  send: bigint;
  receive: bigint;
}

const now = () => process.hrtime.bigint();
const msBetween = (a: bigint, b: bigint) => Number(b - a) / 1e6;

const spread = (runs: number[]): Spread => ({ p50: percentile(runs, 50), p95: percentile(runs, 95), max: Math.max(...runs), runs });

/** Least-squares slope of ys over xs. */
function slope(xs: readonly number[], ys: readonly number[]): number {
  const mx = xs.reduce((s, x) => s + x, 0) / xs.length;
  const my = ys.reduce((s, y) => s + y, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] as number) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? NaN : num / den;
}

/** The scripted model of (t): turn i of the session delegates to `sizes[i % sizes.length]` sleepers. */
function treeModel(sizes: readonly number[]): unknown {
  return {
    description: "bench/subagentTree.ts: a parent delegating to N sleepers at once, each running a shell tool until cancelled.",
    turns: sizes.map((n) => ({
      steps: [
        {
          text: `Delegating to ${n}.`,
          toolCalls: Array.from({ length: n }, (_, i) => ({ tool: "task", args: { prompt: `part ${i}`, agent: "sleeper" } })),
        },
        { text: "All parts done." },
      ],
    })),
    agents: {
      sleeper: {
        turns: [{ steps: [{ text: "Sleeping.", toolCalls: [{ tool: "shell", args: { command: TOOL_COMMAND } }] }, { text: "Woke up." }] }],
      },
    },
  };
}

interface ToolDelta {
  item: { kind: string; itemId: string; visibleOutput?: string };
}

/**
 * One (t) measurement: start turn `run` of the session (the model makes it delegate to `n`
 * sleepers), wait until all n tools printed, cancel the parent, and take the client's marks on
 * the monotonic clock: `turn/cancel` about to be sent, the parent's `turn/completed` received.
 */
async function cancelOneTree(host: SpawnedHost, sessionId: string, n: number, run: number): Promise<Timed> {
  const printed = new Set<string>();
  let allPrinted: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (allPrinted = resolve));
  const onDelta = (p: ToolDelta) => {
    if (p.item.kind !== "toolCall" || !(p.item.visibleOutput ?? "").includes("started")) return;
    printed.add(p.item.itemId);
    if (printed.size === n) allPrinted();
  };
  const ends: TurnCompletedParams[] = [];
  const onEnd = (p: TurnCompletedParams) => ends.push(p);
  host.events.on("item/delta", onDelta);
  host.events.on("turn/completed", onEnd);
  try {
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: `tree ${run}` }] });
    const { turnId } = await within(turn.accepted, WAIT_MS, "the parent turn's acceptance");
    await within(running, WAIT_MS, `${n} running tools (${printed.size} printed)`);
    await sleep(SETTLE_MS);
    let receive = 0n;
    const parentEnded = new Promise<void>((resolve) => {
      const onParent = (p: TurnCompletedParams) => {
        if (p.turnId !== turnId) return;
        receive = now();
        host.events.off("turn/completed", onParent);
        resolve();
      };
      host.events.on("turn/completed", onParent);
    });
    const send = now();
    const outcome = await turn.cancel({ timeoutMs: WAIT_MS });
    await within(parentEnded, WAIT_MS, "the parent's turn/completed");
    // The tree ended as issue 23 says: every child before the parent, cause parent; the parent cause user.
    if (outcome.turnCompleted.terminal !== "cancelled" || outcome.turnCompleted.cause?.kind !== "user")
      throw new Error(`parent: expected cancelled (user), got ${outcome.turnCompleted.terminal} (${outcome.turnCompleted.cause?.kind})`);
    const parentAt = ends.findIndex((e) => e.turnId === turnId);
    const children = ends.slice(0, parentAt);
    const stopped = children.filter((e) => e.terminal === "cancelled" && e.cause?.kind === "parent").length;
    if (children.length !== n || stopped !== n)
      throw new Error(`expected ${n} children ended cancelled (parent) before the parent, got ${children.length} ended, ${stopped} so`);
    return { send, receive };
  } finally {
    host.events.off("item/delta", onDelta);
    host.events.off("turn/completed", onEnd);
  }
}

/**
 * One (t0) measurement: n bare `/bin/sh` groups running the tools' command, spawned as the host's
 * shell tool spawns them; once all printed and `SETTLE_MS` more, SIGTERM each group in one loop and
 * time to the last group's pipes closing. Milliseconds.
 */
export async function killGroupsFloor(n: number): Promise<number> {
  const shells = Array.from({ length: n }, () => spawn("/bin/sh", ["-c", TOOL_COMMAND], { detached: true, stdio: ["ignore", "pipe", "pipe"] }));
  try {
    const printed = shells.map(
      (shell) =>
        new Promise<void>((resolve) => {
          let text = "";
          shell.stdout.on("data", (chunk: Buffer) => {
            text += chunk.toString("utf8");
            if (text.includes("started")) resolve();
          });
        }),
    );
    const closed = shells.map((shell) => new Promise<bigint>((resolve) => shell.once("close", () => resolve(now()))));
    await within(Promise.all(printed), WAIT_MS, `${n} bare shell groups`);
    await sleep(SETTLE_MS);
    const t0 = now();
    for (const shell of shells) process.kill(-(shell.pid as number), "SIGTERM");
    const closes = await within(Promise.all(closed), WAIT_MS, "the bare groups closing");
    return msBetween(
      t0,
      closes.reduce((a, b) => (a > b ? a : b)),
    );
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

/** The stages of one traced tree cancel, each from the mark before it (the host's marks are in packages/host/src). */
const TREE_STAGES = [
  "client send -> host receives the parent's cancel",
  "-> first tool SIGTERMed",
  "first -> last tool SIGTERMed",
  "last SIGTERM -> last tool's pipes closed",
  "-> last child turn/completed sent",
  "-> parent turn/completed sent",
  "-> client receives",
] as const;

/**
 * With a trace: the stages of each measured cancel. The host's marks are `<ns> <label> <key>`
 * (key: a sessionId for `cancel.received` and `turn/completed.*`, a pid for `tool.*`); cancel `r`
 * is the `r`th `cancel.received` of the measured session, up to that session's next
 * `turn/completed.sent`. Milliseconds per stage.
 */
function traceStages(traceFile: string, sessionId: string, timed: readonly Timed[]): number[][] {
  const marks = readFileSync(traceFile, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [at, label, key] = line.split(" ");
      return { at: BigInt(at as string), label: label as string, key: key as string };
    });
  const starts = marks.flatMap((m, i) => (m.label === "cancel.received" && m.key === sessionId ? [i] : []));
  if (starts.length !== timed.length) throw new Error(`expected ${timed.length} traced cancels, found ${starts.length}`);
  return timed.map(({ send, receive }, r) => {
    const from = starts[r] as number;
    const end = marks.findIndex((m, i) => i > from && m.label === "turn/completed.sent" && m.key === sessionId);
    if (end < 0) throw new Error(`cancel ${r}: no turn/completed.sent of the parent`);
    const slice = marks.slice(from, end + 1);
    const at = (label: string, pick: "first" | "last", child = false) => {
      const hits = slice.filter((m) => m.label === label && (!child || m.key !== sessionId));
      const hit = pick === "first" ? hits[0] : hits[hits.length - 1];
      if (hit === undefined) throw new Error(`cancel ${r}: no mark ${label}`);
      return hit.at;
    };
    const points = [
      send,
      marks[from]!.at,
      at("tool.sigterm", "first"),
      at("tool.sigterm", "last"),
      at("tool.closed", "last"),
      at("turn/completed.sent", "last", true),
      marks[end]!.at,
      receive,
    ];
    return points.slice(1).map((p, i) => msBetween(points[i] as bigint, p));
  });
}

/**
 * Rows (t) and (t0): `reps` repetitions of every N in `sizes`, tree then floor, on one reference
 * host (one session; each turn delegates to N children). `trace` runs the host with
 * `MUSE_HOST_TRACE` and adds the stages of the tree's cancel.
 */
export async function subagentTreeCancel(
  sizes: readonly number[] = DEFAULT_SIZES,
  reps = 20,
  options: { trace?: boolean; tmp?: string; log?: (line: string) => void } = {},
): Promise<TreeCancelResult> {
  const log = options.log ?? (() => undefined);
  const loadAverage = loadavg().map((x) => Math.round(x * 100) / 100);
  const dir = mkdtempSync(join(options.tmp ?? tmpdir(), "muse-bench-tree-"));
  const modelFile = join(dir, "tree.json");
  const traceFile = join(dir, "trace.txt");
  writeFileSync(modelFile, JSON.stringify(treeModel(sizes)));
  const host = spawnHost({
    command: process.execPath,
    args: [
      ...["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--stdio", "--script", modelFile, "--data", join(dir, "data")],
      ...["--max-subagents-per-turn", String(Math.max(...sizes))],
    ],
    cwd: root,
    stderr: "ignore",
    defaultTimeoutMs: WAIT_MS,
    ...(options.trace === true ? { env: { ...process.env, MUSE_HOST_TRACE: traceFile } } : {}),
  });
  const tree = new Map<number, Timed[]>(sizes.map((n) => [n, []]));
  const floor = new Map<number, number[]>(sizes.map((n) => [n, []]));
  const order: Array<{ n: number; timed: Timed }> = [];
  let sessionId: string | undefined;
  try {
    // One unmeasured tree first, in a session of its own (turn 0 plays sizes[0]): the host's first
    // child sessions are not the row.
    const warmUp = await host.command("session/create", {}, { timeoutMs: WAIT_MS });
    await cancelOneTree(host, warmUp.sessionId, sizes[0] as number, 0);
    ({ sessionId } = await host.command("session/create", {}, { timeoutMs: WAIT_MS }));
    let turn = 0;
    for (let rep = 0; rep < reps; rep++) {
      // Turn i of the session plays sizes[i % sizes.length]: keep the order.
      for (const n of sizes) {
        const timed = await cancelOneTree(host, sessionId, n, turn++);
        const f = await killGroupsFloor(n);
        tree.get(n)?.push(timed);
        floor.get(n)?.push(f);
        order.push({ n, timed });
        log(`  (t) rep ${rep + 1}/${reps}, N=${n}: tree ${msBetween(timed.send, timed.receive).toFixed(1)} ms, floor ${f.toFixed(1)} ms`);
      }
    }
  } finally {
    await host.close(); // a traced host writes its marks at exit
  }
  let stages: TreeCancelResult["stages"];
  try {
    if (options.trace === true && sessionId !== undefined) {
      const perCancel = traceStages(
        traceFile,
        sessionId,
        order.map((o) => o.timed),
      );
      stages = sizes.map((n) => {
        const mine = perCancel.filter((_, i) => order[i]?.n === n);
        return {
          children: n,
          stages: TREE_STAGES.map((stage, k) => {
            const xs = mine.map((row) => row[k] as number);
            return { stage, p50: percentile(xs, 50), p95: percentile(xs, 95) };
          }),
        };
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = sizes.map((n): TreeCancelSize => {
    const t = spread((tree.get(n) ?? []).map((x) => msBetween(x.send, x.receive)));
    const f = spread(floor.get(n) ?? []);
    return { children: n, tree: t, floor: f, overFloorP50: t.p50 - f.p50, overFloorP95: t.p95 - f.p95 };
  });
  const xs = rows.map((r) => r.children);
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage,
    reps,
    dataUnder: options.tmp ?? tmpdir(),
    sizes: rows,
    treeMsPerChild: slope(
      xs,
      rows.map((r) => r.tree.p50),
    ),
    floorMsPerChild: slope(
      xs,
      rows.map((r) => r.floor.p50),
    ),
    msPerChildBeyondFloor: slope(
      xs,
      rows.map((r) => r.overFloorP50),
    ),
    ...(stages === undefined ? {} : { stages }),
  };
}

/** The table rows of (t) and (t0), as bench/run.ts prints them: what, target, measured, status. */
export function treeCancelRows(r: TreeCancelResult): Array<[string, string, string, string]> {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const rows: Array<[string, string, string, string]> = [];
  for (const s of r.sizes) {
    rows.push(
      [
        `(t) cancel a tree of ${s.children} running child${s.children === 1 ? "" : "ren"}: parent turn/cancel -> parent turn/completed`,
        "-",
        `p50 ${ms(s.tree.p50)}, p95 ${ms(s.tree.p95)} = floor + ${ms(s.overFloorP50)} (p95 + ${ms(s.overFloorP95)}) (n=${s.tree.runs.length})`,
        "",
      ],
      [
        `(t0) floor: ${s.children} bare sh group${s.children === 1 ? "" : "s"} SIGTERMed -> all pipes closed, no host`,
        "-",
        `p50 ${ms(s.floor.p50)}, p95 ${ms(s.floor.p95)}`,
        "",
      ],
    );
  }
  rows.push([
    "(t) growth with N (slope of the medians)",
    "-",
    `tree ${r.treeMsPerChild.toFixed(2)} ms/child, floor ${r.floorMsPerChild.toFixed(2)} ms/child: ${r.msPerChildBeyondFloor.toFixed(2)} ms per child beyond the floor`,
    "",
  ]);
  for (const { children, stages } of r.stages ?? []) {
    for (const s of stages) rows.push([`(t) N=${children}, traced: ${s.stage}`, "-", `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}`, ""]);
  }
  return rows;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const sizes = value("sizes")?.split(",").map(Number) ?? DEFAULT_SIZES;
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes wants positive integers, got ${value("sizes")}`);
  const reps = Number(value("reps") ?? 20);
  if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps wants a positive integer, got ${value("reps")}`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(
    `(t) cancel a tree: N = ${sizes.join(", ")}, ${reps} reps (node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")})`,
  );
  const tmp = value("tmp");
  const result = await subagentTreeCancel(sizes, reps, { trace: args.includes("--trace"), ...(tmp === undefined ? {} : { tmp }), log });
  const rows = treeCancelRows(result);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  for (const row of rows)
    console.log(
      `| ${row
        .slice(0, 3)
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join(" | ")} |`,
    );
  log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  if (args.includes("--write")) {
    const file = fileURLToPath(new URL("./results.json", import.meta.url));
    const results = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    results["subagentTreeCancel"] = result;
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote subagentTreeCancel into ${file}`);
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
