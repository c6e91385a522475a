/**
 * The reference host's data-dir figures, with real `muse-host` processes (not part of `npm test`):
 *
 * 1. startup with one big session log: a log of LOG_MB megabytes (logged the way hosts before
 *    deltas logged it: every `item/updated` carrying the whole output so far, many turns, the last
 *    one left open as a crash leaves it) is generated in a temp dir; the host is started on it and
 *    timed until it says it is serving (recovery done), and its peak RSS (VmHWM) is read then.
 *    The same is measured on an empty data dir, for the baseline.
 * 2. descriptors with SESSIONS sessions: that many `session/create`, pipelined, then the host's
 *    open descriptors are counted in /proc/<pid>/fd.
 *
 * Usage: npx tsx bench/host-data.ts [--log-mb 600] [--sessions 10000]
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { uuidv7 } from "../packages/protocol/src/uuidv7.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const LOG_MB = arg("--log-mb", 600);
const SESSIONS = arg("--sessions", 10_000);
/** `--max-live-sessions` for the sessions row (0: the host's default). */
const MAX_LIVE = arg("--max-live-sessions", 0);
const MB = 1024 * 1024;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Writes a session log of about `bytes` under `data`; returns its size. */
function writeLog(data: string, bytes: number): number {
  const sessionId = uuidv7();
  mkdirSync(join(data, "sessions"), { recursive: true });
  const path = join(data, "sessions", `${sessionId}.jsonl`);
  const fd = openSync(path, "w");
  let n = 0;
  const at = Date.now();
  const note = (method: string, body: Record<string, unknown>) => {
    n += 1;
    return JSON.stringify({ type: "notification", at, n, method, params: { sessionId, viewCursor: `v:${sessionId}:${n}`, emittedAtMs: at, ...body } });
  };
  writeSync(fd, `${JSON.stringify({ type: "session", at, sessionId, model: "default" })}\n`);
  let written = 0;
  let turnBytes = 0;
  const chunk = "x".repeat(4096);
  for (let turn = 0, last = false; !last; turn++) {
    last = written + 2 * turnBytes >= bytes; // the last turn is left open
    const turnId = uuidv7();
    const base = { itemId: uuidv7(), kind: "toolCall", turnId, revision: 1, status: "inProgress", recordedAt: new Date(at).toISOString() };
    const item = { ...base, tool: "shell", callId: `call_${turn}`, args: '{"command":"make test"}', visibleOutput: "", truncated: false };
    const lines = [
      JSON.stringify({ type: "turnAccepted", at, turnId, input: [{ type: "text", text: "run the tests" }], disposition: "started" }),
      JSON.stringify({ type: "turnStarted", at, turnId, turn }),
      note("turn/started", { turnId, model: "default" }),
      note("item/started", { item }),
    ];
    let output = "";
    for (let r = 2; r <= 17; r++) {
      output += chunk;
      lines.push(note("item/updated", { item: { ...item, revision: r, visibleOutput: output } }));
    }
    if (!last) {
      lines.push(note("item/completed", { item: { ...item, revision: 18, status: "completed", visibleOutput: output } }));
      lines.push(note("turn/completed", { turnId, terminal: "completed", reason: "completed", durationMs: 1 }));
      lines.push(JSON.stringify({ type: "turnCompleted", at, turnId, terminal: "completed", reason: "completed" }));
    }
    turnBytes = writeSync(fd, `${lines.join("\n")}\n`);
    written += turnBytes;
  }
  closeSync(fd);
  return statSync(path).size;
}

function startHost(data: string, extra: string[] = []): { child: ChildProcessWithoutNullStreams; serving: Promise<number>; stderr: () => string } {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--stdio", "--script", "packages/host/models/hello.json", "--data", data, ...extra],
    {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  const serving = new Promise<number>((resolve, reject) => {
    child.stderr.on("data", (text: string) => {
      stderr += text;
      if (/serving on stdio/.test(stderr)) resolve(performance.now() - t0);
    });
    child.on("exit", (code) => reject(new Error(`host exited ${code}: ${stderr}`)));
  });
  return { child, serving, stderr: () => stderr };
}

const peakRss = (pid: number) => Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.stdin.end();
  await exited;
}

async function startup(bytes: number): Promise<{ ms: number; rss: number; size: number; stderr: string }> {
  const data = mkdtempSync(join(tmpdir(), "muse-bench-"));
  try {
    const size = bytes === 0 ? 0 : writeLog(data, bytes);
    const host = startHost(data);
    const ms = await host.serving;
    const rss = peakRss(host.child.pid!);
    await stop(host.child);
    return { ms, rss, size, stderr: host.stderr() };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

async function sessions(count: number): Promise<{ before: number; after: number; rss: number; ms: number }> {
  const data = mkdtempSync(join(tmpdir(), "muse-bench-"));
  try {
    const host = startHost(data, MAX_LIVE > 0 ? ["--max-live-sessions", String(MAX_LIVE)] : []);
    await host.serving;
    const pid = host.child.pid!;
    const before = fds(pid);
    let answered = 0;
    let errors = 0;
    let buffered = "";
    const t0 = performance.now();
    const done = new Promise<void>((resolve) => {
      host.child.stdout.setEncoding("utf8");
      host.child.stdout.on("data", (text: string) => {
        buffered += text;
        let nl: number;
        while ((nl = buffered.indexOf("\n")) !== -1) {
          const message = JSON.parse(buffered.slice(0, nl)) as { error?: unknown };
          buffered = buffered.slice(nl + 1);
          answered += 1;
          if (message.error !== undefined) errors += 1;
          if (answered === count) resolve();
        }
      });
    });
    for (let id = 1; id <= count; id++) host.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "session/create", params: {} })}\n`);
    await done;
    const ms = performance.now() - t0;
    if (errors > 0) throw new Error(`${errors} session/create failed`);
    const after = fds(pid);
    const rss = peakRss(pid);
    await stop(host.child);
    return { before, after, rss, ms };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const limit = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1];
log(`node ${process.version}, ulimit -n ${limit}`);
const empty = await startup(0);
log(`startup, empty data dir: ${empty.ms.toFixed(0)} ms, peak RSS ${(empty.rss / MB).toFixed(1)} MB`);
const big = await startup(LOG_MB * 1_000_000);
if (!/recovered session .*: closed 1 turn\(s\)/.test(big.stderr)) throw new Error(`recovery did not close the open turn: ${big.stderr}`);
log(`startup, one ${(big.size / 1_000_000).toFixed(0)} MB session log: ${big.ms.toFixed(0)} ms, peak RSS ${(big.rss / MB).toFixed(1)} MB`);
const many = await sessions(SESSIONS);
log(
  `${SESSIONS} sessions${MAX_LIVE > 0 ? ` (--max-live-sessions ${MAX_LIVE})` : ""}: ${many.after} descriptors held (${many.before} before the first), ${(many.ms / SESSIONS).toFixed(2)} ms per session/create, peak RSS ${(many.rss / MB).toFixed(1)} MB`,
);
