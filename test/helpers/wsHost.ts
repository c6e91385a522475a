/**
 * The real reference host over a real WebSocket, for the session layer's tests: `muse-host serve
 * --ws 127.0.0.1:PORT --token-file F --data D --script MODEL` as a child process, which a test can
 * crash (SIGKILL) and start again on the same port, data and token file; and a TCP proxy in front
 * of it, whose connections a test can cut (the page sees 1006) or refuse (the host unreachable),
 * and which records every WebSocket message it passes on, both ways.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendantsOf, killGroups } from "../../recipes/processTree.js";
import { repoRoot } from "./repoRoot.js";
import { webSocketTextTap } from "./webSocketFrames.js";

/** A host the test owns. */
export interface WsHost {
  readonly port: number;
  readonly token: string;
  readonly dataDir: string;
  /** SIGKILL the host and its tools, and wait for its exit. */
  crash(): Promise<void>;
  /** Start it again on the same port, data dir and token file. */
  restart(): Promise<void>;
  /** Every record of every session log, in file order. */
  logRecords(): Record<string, unknown>[];
  /** The `turn/cancel` commands the host logged. */
  cancelsLogged(): Record<string, unknown>[];
  /** SIGTERM, bounded, and remove the data dir. */
  stop(): Promise<void>;
}

const READY = /^muse-host: serving on \S*?127\.0\.0\.1:(\d+)/m;

/** Start the reference host with `model` on a free port (or `port`). */
export async function startWsHost(model: string, options: { port?: number; args?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<WsHost> {
  const dataDir = mkdtempSync(join(tmpdir(), "muse-session-host-"));
  const tokenFile = join(dataDir, "token");
  const token = "session-test-token";
  writeFileSync(tokenFile, `${token}\n`);
  let child: ChildProcess;
  let exited: Promise<void>;
  let port = options.port ?? 0;
  const launch = async () => {
    child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(repoRoot, "packages/host/src/serve/main.ts"),
        "serve",
        "--ws",
        `127.0.0.1:${port}`,
        "--token-file",
        tokenFile,
        "--script",
        model,
        "--data",
        join(dataDir, "data"),
        ...(options.args ?? []),
      ],
      { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"], detached: true, ...(options.env === undefined ? {} : { env: options.env }) },
    );
    let stderr = "";
    exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line within 20 s:\n${stderr}`)), 20_000);
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        const found = READY.exec(stderr);
        if (found !== null) {
          clearTimeout(timer);
          resolve(found);
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`the host exited before it was ready:\n${stderr}`));
      });
    });
    port = Number(match[1]);
  };
  await launch();
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const pid = child.pid as number;
    if (signal === "SIGKILL") killGroups([pid, ...descendantsOf(pid)]);
    else process.kill(-pid, signal);
    const bound = setTimeout(() => killGroups([pid, ...descendantsOf(pid)]), 10_000);
    await exited;
    clearTimeout(bound);
  };
  const records = () => {
    const dir = join(dataDir, "data", "sessions");
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
    } catch {
      return [];
    }
    return names.flatMap((name) =>
      readFileSync(join(dir, name), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    );
  };
  return {
    get port() {
      return port;
    },
    token,
    dataDir,
    crash: () => kill("SIGKILL"),
    restart: launch,
    logRecords: records,
    cancelsLogged: () => records().filter((record) => record["type"] === "cancelRequested"),
    async stop() {
      await kill("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One WebSocket message that went through the proxy, parsed: `toHost` from the page, `toPage` from the host. */
export interface ProxiedMessage {
  readonly direction: "toHost" | "toPage";
  /** Which of the proxy's connections carried it, counted from 1. */
  readonly connection: number;
  readonly message: Record<string, unknown>;
}

/** A TCP proxy to `127.0.0.1:target` (each request's Host header rewritten to the target's port): `cut()` drops every connection; `refuse(true)` drops WebSocket upgrades (pages still load). */
export interface TcpProxy {
  readonly port: number;
  /** Every WebSocket message it passed on, parsed, in the order it passed each side's bytes on. */
  messages(): readonly ProxiedMessage[];
  cut(): void;
  refuse(on: boolean): void;
  close(): Promise<void>;
}

export async function startProxy(target: () => number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let refusing = false;
  let connections = 0;
  const messages: ProxiedMessage[] = [];
  const server: Server = createServer((inbound) => {
    const outbound = tcpConnect(target(), "127.0.0.1");
    const connection = ++connections;
    const record = (direction: ProxiedMessage["direction"]) =>
      webSocketTextTap((text) => messages.push({ direction, connection, message: JSON.parse(text) as Record<string, unknown> }));
    const toHost = record("toHost");
    const toPage = record("toPage");
    outbound.on("data", toPage);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    // The host checks the Host header against its own port (DNS rebinding): each request head
    // names the host's port instead of the proxy's, as a reverse proxy would. (A browser's frames
    // are masked, so the text never shows up in them.)
    inbound.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1");
      // Refusing: a WebSocket upgrade is dropped unanswered (the host unreachable for sockets); a page request still goes through.
      if (refusing && /\r\nupgrade: websocket/i.test(text)) {
        inbound.destroy();
        return void outbound.destroy();
      }
      toHost(chunk);
      outbound.write(/\r\nhost: /i.test(text) ? text.replace(/\r\nhost: [^\r]*/gi, `\r\nHost: 127.0.0.1:${target()}`) : chunk, "latin1");
    });
    outbound.pipe(inbound);
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    messages: () => messages,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    refuse: (on) => {
      refusing = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
