/**
 * For the Stop-button app's browser tests and screenshots: build the app (from the sources, so no
 * `npm run build` is needed), start the real reference host on it (`muse-host serve --ws
 * 127.0.0.1:0 --ui-dir DIR --script models/demo.json --data DIR`, a real child process on a real
 * socket), read the page's URL from the host's one ready line, read the host's session log, and
 * kill the host the hard way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendantsOf, killGroups } from "../../recipes/processTree.js";
import { buildDemo } from "../../scripts/build-demo.js";
import { repoRoot } from "../helpers/repoRoot.js";

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
  pid: number;
  /** Everything the host wrote on stderr so far. */
  stderr(): string;
  /** The records of the host's one session log (the page opens one session). */
  sessionLog(): Record<string, unknown>[];
  /** SIGKILL the host and its tools' process groups at once (a crash), and wait for its exit. */
  crash(): Promise<void>;
  /** Stop the host (SIGTERM: it cancels and drains), bounded, and remove its data dir. */
  stop(): Promise<void>;
}

const READY = /^muse-host: open (http:\/\/127\.0\.0\.1:(\d+)\/#token=(\S+))$/m;

/** Starts the reference host serving the app from `uiDir`; resolves once it printed its ready line. */
export async function startDemoHost(uiDir: string, options: { model?: string; env?: Record<string, string> } = {}): Promise<DemoHost> {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-demo-data-"));
  const model = options.model ?? join(repoRoot, "models", "demo.json");
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "src/host/cli.ts"), "serve", "--ws", "127.0.0.1:0", "--ui-dir", uiDir, "--script", model, "--data", dataDir],
    { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"], detached: true, env: { ...process.env, ...options.env } },
  );
  let stderr = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the host printed no ready line within 20 s; its stderr:\n${stderr}`)), 20_000);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match = READY.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the host exited before it was ready; its stderr:\n${stderr}`));
    });
  });
  const match = await ready;
  const pid = child.pid as number;
  const killAll = (signal: NodeJS.Signals) => {
    const groups = [pid, ...descendantsOf(pid)];
    if (signal === "SIGKILL") killGroups(groups);
    else process.kill(-pid, signal);
  };
  return {
    pageUrl: match[1] as string,
    port: Number(match[2]),
    token: decodeURIComponent(match[3] as string),
    dataDir,
    pid,
    stderr: () => stderr,
    sessionLog() {
      const dir = join(dataDir, "sessions");
      const logs = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
      if (logs.length !== 1) throw new Error(`expected one session log in ${dir}, found ${logs.length}: ${logs.join(", ")}`);
      return readFileSync(join(dir, logs[0] as string), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    async crash() {
      killAll("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        killAll("SIGTERM");
        const bound = setTimeout(() => killAll("SIGKILL"), 10_000);
        await exited;
        clearTimeout(bound);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
