/** Test helper: spawns the real `muse-host serve --stdio` and speaks raw NDJSON JSON-RPC to it. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { fileURLToPath } from "node:url";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { formatTranscriptEntry } from "../../src/testing/index.js";
import { repoRoot } from "../helpers/repoRoot.js";

/** A model fixture's absolute path. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/models/${name}`, import.meta.url));
}

/** One message read from the host's stdout. */
export type WireMessage = Record<string, unknown> & {
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

/** Limits a host child process starts under. */
export interface HostStartOptions {
  /** `ulimit -f`: 512-byte blocks. */
  fileSizeLimitBlocks?: number;
  /** `ulimit -n`: open file descriptors. */
  openFilesLimit?: number;
}

/**
 * A running host child process. Every message it writes is kept in `wire` (in order), and both
 * directions in `transcript`, for `checkTranscript`.
 *
 * @example
 * ```ts
 * const host = HostProcess.start(["--script", fixture("hello.json")]);
 * const created = await host.request("session/create", {});
 * await host.stop();
 * ```
 */
export class HostProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly wire: WireMessage[] = [];
  /** Every line each side wrote, as transcript lines, in the order this test saw them. */
  readonly transcript: string[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #nextId = 1;
  #listeners = new Set<() => void>();

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    const lines = new LineSplitter((line) => {
      this.transcript.push(formatTranscriptEntry({ dir: "server", raw: line }));
      this.wire.push(JSON.parse(line) as WireMessage);
    });
    child.stdout.on("data", (chunk: Buffer) => {
      lines.push(chunk);
      for (const l of [...this.#listeners]) l();
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  }

  /**
   * Starts `muse-host serve --stdio ...args`. `fileSizeLimitBlocks` runs it under `ulimit -f`
   * (512-byte blocks), so a session-log write past that size fails with EFBIG; `openFilesLimit`
   * under `ulimit -n` (soft and hard, so Node cannot raise it).
   */
  static start(args: string[], options: HostStartOptions = {}): HostProcess {
    const node = [process.execPath, "--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--stdio", ...args];
    const limits = [
      ...(options.fileSizeLimitBlocks === undefined ? [] : [`ulimit -f ${options.fileSizeLimitBlocks}`]),
      ...(options.openFilesLimit === undefined ? [] : [`ulimit -n ${options.openFilesLimit}`]),
    ];
    const [command, ...rest] = limits.length === 0 ? node : ["/bin/sh", "-c", `${limits.join("; ")}; exec "$@"`, "sh", ...node];
    const child = spawn(command!, rest, { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    return new HostProcess(child);
  }

  /** Writes one raw line. */
  writeLine(line: string): void {
    this.transcript.push(formatTranscriptEntry({ dir: "client", raw: line }));
    this.child.stdin.write(`${line}\n`);
  }

  /** Sends a request; returns its id. */
  send(method: string, params: Record<string, unknown>): number {
    const id = this.#nextId++;
    this.writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return id;
  }

  /** Sends a request and waits for its response (result or error). */
  async request(method: string, params: Record<string, unknown>, timeoutMs = 5000): Promise<WireMessage> {
    const id = this.send(method, params);
    return this.waitFor((m) => m.id === id && m.method === undefined, timeoutMs, `response to ${method}`);
  }

  /** Index in `wire` of the first message matching `predicate`, or -1. */
  indexOf(predicate: (m: WireMessage) => boolean): number {
    return this.wire.findIndex(predicate);
  }

  /** Waits (bounded) until a message matching `predicate` has arrived; resolves with it. */
  waitFor(predicate: (m: WireMessage) => boolean, timeoutMs = 5000, what = "message"): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.wire.find(predicate);
        if (found === undefined) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${this.stderr}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
      };
      const listener = () => void check();
      if (!check()) this.#listeners.add(listener);
    });
  }

  /** Notifications (in wire order) of one method, optionally about one turn. */
  notifications(method: string, turnId?: string): Array<Record<string, unknown>> {
    return this.wire
      .filter((m) => m.method === method && m.id === undefined)
      .map((m) => m.params ?? {})
      .filter((p) => turnId === undefined || p["turnId"] === turnId || (p["item"] as { turnId?: string } | undefined)?.turnId === turnId);
  }

  /** Closes stdin and waits (bounded) for exit; SIGKILLs it if it does not exit in time. */
  async stop(timeoutMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.stdin.end();
    return this.#bounded(timeoutMs);
  }

  /** SIGKILLs the host (if still running) and waits for it. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.#bounded(5000);
  }

  async #bounded(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs)));
    const outcome = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.child.kill("SIGKILL");
      await this.exited;
      throw new Error(`host did not exit within ${timeoutMs} ms`);
    }
    return outcome;
  }
}

/**
 * Per-test host processes and temp dirs, killed and removed after each test (pass or fail).
 *
 * @example
 * ```ts
 * const { start, tempDir } = useHostProcesses("muse-host-test-");
 * const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
 * ```
 */
export function useHostProcesses(prefix: string): {
  start(args: string[], options?: HostStartOptions): HostProcess;
  tempDir(): string;
} {
  const running: HostProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const host of running.splice(0)) await host.kill();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    start(args, options = {}) {
      const host = HostProcess.start(args, options);
      running.push(host);
      return host;
    },
    tempDir() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
  };
}
