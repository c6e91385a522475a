/**
 * `muse-host` without `--data` works in a temp dir of its own and removes it on every way out:
 * stdin EOF, SIGTERM, SIGINT, SIGHUP, a second signal during the drain, a session-log failure and
 * an uncaught exception. Real processes, each with a private TMPDIR so the check is exact.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { fixture } from "./hostProcess.js";

const tmpDirs: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of tmpDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function privateTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), "muse-tmpdir-test-"));
  tmpDirs.push(dir);
  return dir;
}

/** What the host left in `tmp` (tsx keeps its compile cache there too; that is not the host's). */
function leftBehind(tmp: string): string[] {
  return readdirSync(tmp).filter((name) => name.startsWith("muse-host-"));
}

interface Host {
  child: ChildProcessWithoutNullStreams;
  stdout: string;
  stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  until(what: () => boolean, label: string): Promise<void>;
}

/** `muse-host serve --stdio …args` with TMPDIR=`tmp`; `nodeArgs` go before the script (e.g. an extra `--import`). */
function startHost(tmp: string, args: string[], options: { nodeArgs?: string[]; fileSizeLimitBlocks?: number } = {}): Host {
  const node = [process.execPath, "--import", "tsx", ...(options.nodeArgs ?? []), "packages/host/src/serve/main.ts", "serve", "--stdio", ...args];
  const [command, ...rest] =
    options.fileSizeLimitBlocks === undefined ? node : ["/bin/sh", "-c", `ulimit -f ${options.fileSizeLimitBlocks}; exec "$@"`, "sh", ...node];
  const child = spawn(command!, rest, { cwd: repoRoot, env: { ...process.env, TMPDIR: tmp }, stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  const host: Host = {
    child,
    stdout: "",
    stderr: "",
    exited: new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal }))),
    async until(what, label) {
      const deadline = Date.now() + 8_000;
      while (!what()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}; stderr:\n${host.stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (host.stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (host.stderr += chunk));
  return host;
}

/** Starts a host in `tmp` and waits until it serves from its own `muse-host-*` dir there. */
async function serving(tmp: string, args: string[], options: Parameters<typeof startHost>[2] = {}): Promise<{ host: Host; dataDir: string }> {
  const host = startHost(tmp, args, options);
  await host.until(() => /serving on stdio/.test(host.stderr), "the host to serve");
  const dataDir = /serving on stdio \(data (\S+),/.exec(host.stderr)?.[1] ?? "";
  expect(dataDir.startsWith(join(tmp, "muse-host-"))).toBe(true);
  expect(existsSync(dataDir)).toBe(true);
  return { host, dataDir };
}

/** Starts a turn whose shell tool keeps running, and waits until the tool has printed. */
async function runningTool(host: Host): Promise<void> {
  host.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} })}\n`);
  await host.until(() => /"sessionId":"([^"]+)"/.test(host.stdout), "session/create");
  const sessionId = /"sessionId":"([^"]+)"/.exec(host.stdout)?.[1];
  host.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "turn/start", params: { sessionId, input: [] } })}\n`);
  await host.until(() => /stubborn \d+|chatty \d+/.test(host.stdout), "the tool's first output");
}

describe("muse-host without --data", () => {
  it("removes its temp dir on stdin EOF (and writes its session logs there meanwhile)", async () => {
    const tmp = privateTmp();
    const { host, dataDir } = await serving(tmp, ["--script", fixture("hello.json")]);
    host.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/create", params: {} })}\n`);
    await host.until(() => host.stdout.includes('"id":1'), "session/create");
    expect(readdirSync(join(dataDir, "sessions"))).toHaveLength(1);
    host.child.stdin.end();
    expect(await host.exited).toEqual({ code: 0, signal: null });
    expect(leftBehind(tmp)).toEqual([]);
  });

  for (const [signal, code] of [
    ["SIGTERM", 0],
    ["SIGINT", 0],
    ["SIGHUP", 0],
  ] as const) {
    it(`removes its temp dir on ${signal}`, async () => {
      const tmp = privateTmp();
      const { host } = await serving(tmp, ["--script", fixture("hello.json")]);
      host.child.kill(signal);
      expect(await host.exited).toEqual({ code, signal: null });
      expect(leftBehind(tmp)).toEqual([]);
    });
  }

  it("removes its temp dir when a second SIGTERM cuts the drain short (exit 143)", async () => {
    const tmp = privateTmp();
    const { host } = await serving(tmp, ["--script", fixture("shell-stubborn.json"), "--kill-grace-ms", "10000"]);
    await runningTool(host);
    host.child.kill("SIGTERM");
    await host.until(() => /draining tools/.test(host.stderr), "the drain to begin");
    host.child.kill("SIGTERM");
    expect(await host.exited).toEqual({ code: 143, signal: null });
    expect(leftBehind(tmp)).toEqual([]);
  });

  it("removes its temp dir after a session-log write failure (exit 1)", async () => {
    const tmp = privateTmp();
    const { host } = await serving(tmp, ["--script", fixture("shell-chatty.json"), "--kill-grace-ms", "300"], { fileSizeLimitBlocks: 16 });
    await runningTool(host);
    expect(await host.exited).toEqual({ code: 1, signal: null });
    expect(host.stderr).toMatch(/session log of .* failed/);
    expect(leftBehind(tmp)).toEqual([]);
  }, 15_000);

  it("removes its temp dir when the process dies of an uncaught exception", async () => {
    const tmp = privateTmp();
    // A preloaded module throws from a SIGUSR2 handler: an uncaught exception inside the running host.
    const boom = `data:text/javascript,process.on("SIGUSR2", () => { throw new Error("boom from a test") })`;
    const { host } = await serving(tmp, ["--script", fixture("hello.json")], { nodeArgs: ["--import", boom] });
    host.child.kill("SIGUSR2");
    const exit = await host.exited;
    expect(exit.code).not.toBe(0);
    expect(host.stderr).toMatch(/boom from a test/);
    expect(leftBehind(tmp)).toEqual([]);
  });

  it("creates nothing when it cannot start (bad arguments or a bad script)", async () => {
    const tmp = privateTmp();
    const host = startHost(tmp, ["--script", join(tmp, "missing.json")]);
    expect(await host.exited).toEqual({ code: 2, signal: null });
    expect(leftBehind(tmp)).toEqual([]);
  });
});

describe("createHost without dataDir (in process)", () => {
  it("shutdown() removes the temp dir the host created, and leaves a given dataDir alone", async () => {
    const models = new Map([["default", loadScriptedModel(fixture("hello.json"), "default")]]);
    const own = createHost({ models, defaultModel: "default" });
    expect(existsSync(join(own.dataDir, "sessions"))).toBe(true);
    await own.shutdown();
    expect(existsSync(own.dataDir)).toBe(false);

    const given = privateTmp();
    const host = createHost({ models, defaultModel: "default", dataDir: given });
    await host.shutdown();
    expect(existsSync(join(given, "sessions"))).toBe(true);
  });
});
