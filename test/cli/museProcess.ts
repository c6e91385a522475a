/**
 * Test helper for the muse CLI: bundles `muse` (packages/host/src/cli/main.ts) and `muse-host` (packages/host/src/serve/main.ts)
 * once per test file with esbuild (the package's own name resolved to src/, npm packages left
 * external), so each test starts real processes in a fraction of tsx's start-up time; then runs
 * `muse` as a child process, or under a pseudo-terminal with script(1).
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { build, type Plugin } from "esbuild";
import { afterAll, beforeAll } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

const ENTRIES: Record<string, string> = {
  "@muse-code/sdk": "src/index.ts",
  "@muse-code/sdk/node": "src/node/index.ts",
  "@muse-code/sdk/testing": "src/testing/index.ts",
  "@muse-code/sdk/websocket": "src/websocket/index.ts",
  "@muse-code/sdk/framing": "src/framing/index.ts",
  "@muse-code/sdk/ui": "src/ui/index.ts",
  "@muse-code/host": "packages/host/src/index.ts",
};

/** Resolves the host package's own dependencies from its folder (ajv 8 there; the root's node_modules holds another major). */
const hostRequire = createRequire(join(repoRoot, "packages/host/package.json"));

/** Resolve the package's own name to its sources, as tsconfig paths do, and the host's dependencies to the host's copies. */
const selfReference: Plugin = {
  name: "self-reference",
  setup(b) {
    b.onResolve({ filter: /^ajv(\/.*)?$/ }, (args) => ({ path: hostRequire.resolve(args.path), external: true }));
    b.onResolve({ filter: /^@muse-code\/(sdk|host)(\/[a-z]+)?$/ }, (args) => {
      const path = ENTRIES[args.path];
      return path === undefined ? undefined : { path: join(repoRoot, path) };
    });
    b.onResolve({ filter: /^@muse-code\/protocol(\/.*)?$/ }, (args) => {
      const file = args.path === "@muse-code/protocol" ? "index.ts" : args.path.slice("@muse-code/protocol/".length).replace(/\.js$/, ".ts");
      return { path: join(repoRoot, "packages/protocol/src", file) };
    });
  },
};

/** The bundled programs of one test file. */
export interface MuseBundles {
  /** `node <muse>` runs the CLI. */
  muse: string;
  /** `node <host>` runs muse-host. */
  host: string;
}

/**
 * Bundle `muse` and `muse-host` before the file's tests (into the repo's .tmp/, so npm packages
 * resolve from its node_modules, and `muse --version` finds package.json two levels up), and remove
 * them after. Returns a getter: the paths exist once beforeAll has run.
 */
export function useMuseBundles(): () => MuseBundles {
  let bundles: MuseBundles | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    const base = join(repoRoot, ".tmp");
    await import("node:fs").then((fs) => fs.mkdirSync(base, { recursive: true }));
    dir = mkdtempSync(join(base, "cli-"));
    await build({
      entryPoints: { muse: join(repoRoot, "packages/host/src/cli/main.ts"), host: join(repoRoot, "packages/host/src/serve/main.ts") },
      outdir: dir,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      plugins: [selfReference],
      logLevel: "silent",
    });
    bundles = { muse: join(dir, "muse.mjs"), host: join(dir, "host.mjs") };
  }, 60_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (bundles === undefined) throw new Error("useMuseBundles: the bundles are built in beforeAll");
    return bundles;
  };
}

/** A `--spawn` value that starts the bundled reference host with `args` after `serve --stdio`. */
export function hostCommand(bundles: MuseBundles, args: string): string {
  return `${JSON.stringify(process.execPath)} ${JSON.stringify(bundles.host)} serve --stdio ${args}`;
}

/** A repository model's path (models/NAME.json), quoted for a --spawn line. */
export function modelPath(name: string): string {
  return JSON.stringify(join(repoRoot, "packages/host/models", `${name}.json`));
}

/** How a muse run ended. */
export interface MuseResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A `muse` process a test watches, signals or writes to while it runs (see {@link startMuse}). */
export interface RunningMuse {
  /** The process: `child.stdin` is null unless it was started with `stdin: "pipe"`. */
  child: ChildProcessByStdio<Writable | null, Readable, Readable>;
  /** How it ended. */
  result: Promise<MuseResult>;
  /** Its stdout so far. */
  output(): string;
  /**
   * Wait until its stdout so far passes `test`, polling every 20 ms for at most `timeoutMs`;
   * whether it did (it does not throw: the caller decides what a timeout means).
   */
  waitFor(test: (stdout: string) => boolean, timeoutMs?: number): Promise<boolean>;
}

/**
 * Start `node <muse> ...args` from the repo root with stdout and stderr piped (not a TTY), and
 * stdin ignored or, with `stdin: "pipe"`, the test's to write. With `timeoutMs` it is killed
 * (SIGKILL) once that long has passed; without, it runs until it exits.
 */
export function startMuse(
  bundles: MuseBundles,
  args: readonly string[],
  options: { stdin?: "ignore" | "pipe"; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): RunningMuse {
  const started = Date.now();
  const child = spawn(process.execPath, [bundles.muse, ...args], {
    cwd: repoRoot,
    env: { ...process.env, NO_COLOR: "", ...options.env },
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  const result = new Promise<MuseResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
  return {
    child,
    result,
    output: () => stdout,
    async waitFor(test, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!test(stdout) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return test(stdout);
    },
  };
}

/** Run `node <muse> ...args` with piped stdio (stdout not a TTY), bounded by `timeoutMs` (15 s by default). */
export function runMuse(bundles: MuseBundles, args: readonly string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<MuseResult> {
  return startMuse(bundles, args, { ...options, timeoutMs: options.timeoutMs ?? 15_000 }).result;
}

const ESC = "\u001b";

/** ANSI escape sequences and carriage returns, removed: what a terminal's final screen shows, roughly. */
export function stripAnsi(text: string): string {
  return text.replace(new RegExp(`${ESC}\\[[0-9;]*[A-Za-z]`, "g"), "").replace(/\r/g, "");
}

/**
 * `muse` running under a pseudo-terminal (script(1)): its stdout is a TTY, and a `\x03` written to
 * the terminal is the line discipline's Ctrl-C, a SIGINT to muse's foreground process group.
 */
export class MuseTerminal {
  readonly #child;
  #output = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters = new Set<() => void>();

  constructor(bundles: MuseBundles, args: readonly string[]) {
    const line = [process.execPath, bundles.muse, ...args].map(shellQuote).join(" ");
    // -q: no banner; -e: exit with the child's code; -f: flush output at once; -c: the command.
    this.#child = spawn("script", ["-qefc", line, "/dev/null"], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: "", TERM: "xterm", COLUMNS: "120" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const take = (chunk: string) => {
      this.#output += chunk;
      for (const wake of this.#waiters) wake();
    };
    this.#child.stdout.setEncoding("utf8").on("data", take);
    this.#child.stderr.setEncoding("utf8").on("data", take);
    this.exited = new Promise((resolve) => this.#child.on("close", (code, signal) => resolve({ code, signal })));
  }

  /** Everything the terminal showed so far, escape sequences removed. */
  get text(): string {
    return stripAnsi(this.#output);
  }

  /** The raw bytes the terminal received. */
  get raw(): string {
    return this.#output;
  }

  /** Press Ctrl-C. */
  interrupt(): void {
    this.#child.stdin.write("\u0003");
  }

  /** Type `keys` on the terminal (raw bytes: `y`, `\r`, …). */
  type(keys: string): void {
    this.#child.stdin.write(keys);
  }

  /** Wait (bounded) until the screen text matches. */
  async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.text);
      if (match !== null) return match;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the terminal never showed ${pattern}; it shows:\n${this.text}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 200));
        this.#waiters.add(wake);
      });
    }
  }

  /** Kill script and muse (cleanup after a failed test). */
  kill(): void {
    this.#child.kill("SIGKILL");
  }
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A fresh directory, and its removal. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
