/**
 * For the Stop-button app's browser tests and screenshots: build the app (from the sources, so no
 * `npm run build` is needed), start the real reference host on it (`muse-host serve --ws
 * 127.0.0.1:0 --ui-dir DIR --script models/demo.json --data DIR`, a real child process on a real
 * socket), read the page's URL from the host's one ready line, read the host's session log, and
 * kill the host the hard way; with `restartable`, on a fixed port with `--token-file`, so it can
 * be started again on the same port, data and token. And a page proxy: a TCP proxy in front of
 * the host that serves the page and its socket from its own port, whose connections a test can
 * cut (the page sees its socket drop, as on a network failure) or refuse.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendantsOf, killGroups } from "../../recipes/processTree.js";
import { buildDemo } from "../../scripts/build-demo.js";
import type { TurnCompletedParams } from "../../src/index.js";
import { describeEnding } from "../../src/ui/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy } from "../helpers/wsHost.js";

/** A `turnCompleted` record of the host's session log as the app words it (`describeEnding`, whose own tests pin the words). */
export function pageWords(record: Record<string, unknown>): string {
  return describeEnding(record as unknown as TurnCompletedParams);
}

/** Builds the app into a fresh temporary directory (removed by `remove()`). */
export async function buildDemoPage(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-demo-ui-"));
  await buildDemo({ outDir: dir, sdk: "src" });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A running `muse-host serve --ws --ui-dir`. */
export interface DemoHost {
  /** `http://127.0.0.1:PORT/#token=…`, as printed. */
  pageUrl: string;
  token: string;
  port: number;
  /** The host's `--data` directory: its session logs are in `sessions/`. */
  dataDir: string;
  readonly pid: number;
  /** Everything the host wrote on stderr so far. */
  stderr(): string;
  /** The records of the host's one session log (the page opens one session). */
  sessionLog(): Record<string, unknown>[];
  /** The records of every session log: the page's session and, with subagents, their child sessions (issue 23), in no particular order. */
  sessionLogs(): Record<string, unknown>[][];
  /** SIGKILL the host and its tools' process groups at once (a crash), and wait for its exit. */
  crash(): Promise<void>;
  /** Start it again on the same port, `--data` and `--token-file` (only with `restartable`). */
  restart(): Promise<void>;
  /** Stop the host (SIGTERM: it cancels and drains), bounded, and remove its data dir. */
  stop(): Promise<void>;
}

const READY = /^muse-host: open (http:\/\/127\.0\.0\.1:(\d+)\/#token=(\S+))$/m;

/** Options of {@link startDemoHost}. */
export interface DemoHostOptions {
  /** The model. @defaultValue models/demo.json */
  model?: string;
  /** What runs the turns instead of `--script MODEL`, e.g. `["--agent", "codex"]` for a bridged host. */
  turnsBy?: string[];
  /** The host's working directory (a bridged agent works here). @defaultValue the repository root */
  cwd?: string;
  env?: Record<string, string>;
  /** A fixed port (found free first) and a `--token-file`, so that `restart()` brings the host back where the page left it. */
  restartable?: boolean;
  /** More `--allow-origin` origins (a page served through a proxy has the proxy's origin). */
  allowOrigins?: string[];
}

/** Starts the reference host serving the app from `uiDir`; resolves once it printed its ready line. */
export async function startDemoHost(uiDir: string, options: DemoHostOptions = {}): Promise<DemoHost> {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-demo-data-"));
  const model = options.model ?? join(repoRoot, "packages/host/models", "demo.json");
  // What runs the turns goes last: an ACP agent's command follows `--`.
  const turnsBy = options.turnsBy ?? ["--script", model];
  const args = ["--data", dataDir, ...(options.allowOrigins ?? []).flatMap((origin) => ["--allow-origin", origin])];
  let listen = "127.0.0.1:0";
  if (options.restartable === true) {
    const tokenFile = join(dataDir, "token");
    writeFileSync(tokenFile, "demo-session-test-token\n", { mode: 0o600 });
    args.push("--token-file", tokenFile);
    listen = `127.0.0.1:${await freePort()}`;
  }
  let child: ChildProcess;
  let stderr = "";
  let exited: Promise<void> = Promise.resolve();
  const launch = async (): Promise<RegExpExecArray> => {
    child = spawn(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "packages/host/src/serve/main.ts"), "serve", "--ws", listen, "--ui-dir", uiDir, ...args, ...turnsBy],
      {
        cwd: options.cwd ?? repoRoot,
        stdio: ["ignore", "ignore", "pipe"],
        detached: true,
        env: { ...process.env, ...options.env },
      },
    );
    const from = stderr.length;
    exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const thisExit = exited;
    return new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the host printed no ready line within 20 s; its stderr:\n${stderr}`)), 20_000);
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        const match = READY.exec(stderr.slice(from));
        if (match !== null) {
          clearTimeout(timer);
          resolve(match);
        }
      });
      void thisExit.then(() => {
        clearTimeout(timer);
        reject(new Error(`the host exited before it was ready; its stderr:\n${stderr}`));
      });
    });
  };
  const match = await launch();
  const killAll = (signal: NodeJS.Signals) => {
    const pid = child.pid as number;
    const groups = [pid, ...descendantsOf(pid)];
    if (signal === "SIGKILL") killGroups(groups);
    else process.kill(-pid, signal);
  };
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pageUrl: match[1] as string,
    port: Number(match[2]),
    token: decodeURIComponent(match[3] as string),
    dataDir,
    get pid() {
      return child.pid as number;
    },
    stderr: () => stderr,
    sessionLog() {
      const dir = join(dataDir, "sessions");
      const logs = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
      if (logs.length !== 1) throw new Error(`expected one session log in ${dir}, found ${logs.length}: ${logs.join(", ")}`);
      return readLog(join(dir, logs[0] as string));
    },
    sessionLogs() {
      const dir = join(dataDir, "sessions");
      return readdirSync(dir)
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => readLog(join(dir, name)));
    },
    async crash() {
      if (running()) killAll("SIGKILL");
      await exited;
    },
    async restart() {
      if (options.restartable !== true) throw new Error("restart() needs a host started with { restartable: true }");
      if (running()) throw new Error("restart(): the host is still running; crash() it first");
      await launch();
    },
    async stop() {
      if (running()) {
        killAll("SIGTERM");
        const bound = setTimeout(() => killAll("SIGKILL"), 10_000);
        await exited;
        clearTimeout(bound);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A session log's records, one per line. */
function readLog(path: string): Record<string, unknown>[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A port free right now (the host is then started on it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A TCP proxy in front of a host: the page is opened at `pageUrl(host)` and its socket goes through it too. */
export interface PageProxy {
  readonly port: number;
  /** `http://127.0.0.1:PROXY/#token=…`: the page, served through the proxy. */
  pageUrl(host: DemoHost): string;
  /** Drop every connection now (the page sees its socket close without a close frame: 1006). */
  cut(): void;
  /** Drop every new WebSocket upgrade at once while `on` (the host looks unreachable to the page's socket; pages still load). */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

/**
 * Start a proxy to `127.0.0.1:target()` (test/helpers/wsHost.ts's, which rewrites each request's
 * Host header to the host's port, as a reverse proxy would: the host checks it against DNS
 * rebinding); the page's origin is the proxy's, so start the host with
 * `allowOrigins: [proxy's origin]` (make the proxy first: `target` is read per connection).
 */
export async function startPageProxy(target: () => number): Promise<PageProxy> {
  const proxy = await startProxy(target);
  return {
    port: proxy.port,
    pageUrl: (host) => `http://127.0.0.1:${proxy.port}/#token=${encodeURIComponent(host.token)}`,
    cut: proxy.cut,
    refuse: proxy.refuse,
    close: proxy.close,
  };
}
