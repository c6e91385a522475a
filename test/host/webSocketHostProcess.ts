/**
 * Test helper: the real `muse-host serve --ws 127.0.0.1:0` as a child process (packages/host/src/serve/main.ts
 * under tsx), its port and token read from the ready line, and raw HTTP requests to it over
 * real sockets, for what a WebSocket client library would not send (a forged Host, no token).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { WebSocket } from "ws";
import { connectWebSocket, type WebSocketConnectOptions } from "../../src/websocket/index.js";
import type { MspClient } from "../../src/index.js";
import { bearerSubprotocol, MSP_SUBPROTOCOL } from "../../packages/protocol/src/index.js";
import { repoRoot } from "../helpers/repoRoot.js";

const READY = /^muse-host: open http:\/\/127\.0\.0\.1:(\d+)\/#token=(\S+)$/m;

/** A running `muse-host serve --ws` child. */
export interface WebSocketHostProcess {
  child: ChildProcessWithoutNullStreams;
  port: number;
  token: string;
  /** `ws://127.0.0.1:PORT/msp` */
  url: string;
  /** Everything the host wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal) once the host has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts `muse-host serve --ws 127.0.0.1:0 ...args`; resolves once the ready line is out (bounded). */
export async function startWebSocketHost(args: readonly string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 15_000): Promise<WebSocketHostProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "packages/host/src/serve/main.ts", "serve", "--ws", "127.0.0.1:0", ...args], {
    cwd: repoRoot,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
      const match = READY.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`host exited (${signal ?? code}) before its ready line; stderr:\n${stderr}`));
    });
  });
  const port = Number(ready[1]);
  const token = decodeURIComponent(ready[2] ?? "");
  return {
    child,
    port,
    token,
    url: `ws://127.0.0.1:${port}/msp`,
    stderr: () => stderr,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** An SDK client over `ws` (as on Node 20), bounded. */
export function wsClient(url: string, options: WebSocketConnectOptions = {}): Promise<MspClient> {
  return connectWebSocket(url, { WebSocket, handshakeTimeoutMs: 5_000, defaultTimeoutMs: 10_000, ...options });
}

/** The status line, headers and body of one raw HTTP answer. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/**
 * Sends one raw HTTP/1.1 request over a fresh TCP connection and resolves with the answer: the
 * status once a 101 arrives (then the socket is dropped), or everything until the server closes.
 */
export function rawRequest(port: number, request: string, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; got ${JSON.stringify(text)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const [head = "", body = ""] = text.split("\r\n\r\n", 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body });
    };
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (/^HTTP\/1\.1 101 /.test(text) && text.includes("\r\n\r\n")) done();
    });
    socket.on("end", done);
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.write(request);
  });
}

/** A WebSocket upgrade request; each header defaults to what a correct client sends (`null` leaves it out). */
export function upgradeRequest(
  port: number,
  options: { path?: string; host?: string | null; origin?: string | null; protocols?: string | null; token?: string } = {},
): string {
  const protocols =
    options.protocols !== undefined
      ? options.protocols
      : options.token === undefined
        ? MSP_SUBPROTOCOL
        : `${MSP_SUBPROTOCOL}, ${bearerSubprotocol(options.token)}`;
  const host = options.host !== undefined ? options.host : `127.0.0.1:${port}`;
  const headers = [
    `GET ${options.path ?? "/msp"} HTTP/1.1`,
    ...(host === null ? [] : [`Host: ${host}`]),
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
    ...(protocols === null ? [] : [`Sec-WebSocket-Protocol: ${protocols}`]),
    ...(options.origin === undefined || options.origin === null ? [] : [`Origin: ${options.origin}`]),
  ];
  return `${headers.join("\r\n")}\r\n\r\n`;
}

/** Occurrences of `needle` in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}
