/**
 * openedHost: the host a `muse` command talks to, opened from `--spawn` (a child process over
 * stdio, via spawnHost) or `--ws` (connectWebSocket), with `--record` wired in; it tells a close
 * `muse` asked for from a connection that was lost.
 */
import { readFileSync } from "node:fs";
import type { CloseInfo, MspClient } from "@muse-code/sdk";
import { signalGroup, spawnHost, tokenFromFile, type SpawnedHost } from "@muse-code/sdk/node";
import { recordingChannel, recordingWebSocket } from "@muse-code/sdk/testing";
import { connectWebSocket } from "@muse-code/sdk/websocket";
import type { HostTarget } from "./args.js";
import { openTranscriptFile, type TranscriptFile } from "./transcriptFile.js";
import { webSocketClass } from "./webSocketClass.js";

/** Lines of a spawned host's stderr kept to explain a lost connection. @unit lines */
const STDERR_TAIL_LINES = 20;
/** After the second Ctrl-C, how long a spawned host has to exit on its signals before SIGKILL. @unit milliseconds */
const KILL_WAIT_MS = 300;
/** Default bound of every command. @unit milliseconds */
const COMMAND_TIMEOUT_MS = 30_000;

/** A host `muse` opened: its client, and how to close it (and stop a spawned host). */
export interface OpenedHost {
  readonly client: MspClient;
  /**
   * Resolves when the connection closed without `muse` asking, with why (the host exited,
   * the socket dropped); never resolves after {@link OpenedHost.close} or `kill`.
   */
  readonly lost: Promise<CloseInfo>;
  /** The last lines a spawned host wrote on stderr (empty for a WebSocket). */
  stderrTail(): string[];
  /** Close gently: a spawned host gets EOF on stdin, then SIGTERM, then SIGKILL, each after a grace. */
  close(): Promise<void>;
  /**
   * Close at once (the second Ctrl-C): the connection closes, and a spawned host's process group
   * gets SIGTERM and SIGINT (a host that drains on one signal stops draining on a second: the
   * reference host then kills its tools' process groups), then SIGKILL if still alive shortly after.
   */
  kill(): Promise<void>;
}

/**
 * Where `muse` finds the WebSocket token: `--token-file` (read by `tokenFromFile`, as `muse-host` reads it),
 * else `$MUSE_HOST_TOKEN`, else none.
 */
export function readToken(target: Extract<HostTarget, { kind: "ws" }>, env: NodeJS.ProcessEnv): string | undefined {
  if (target.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(target.tokenFile, "utf8");
    } catch (error) {
      throw new Error(`cannot read --token-file ${target.tokenFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
    return tokenFromFile(text, target.tokenFile);
  }
  // Trimmed, as muse-host reads the same variable: both sides hold the same token.
  const fromEnv = env["MUSE_HOST_TOKEN"]?.trim();
  return fromEnv === undefined || fromEnv === "" ? undefined : fromEnv;
}

/**
 * Open the connection to `target`. Rejects with an `Error` (or the SDK's `MspError`) whose message
 * is one line: a WebSocket that refuses the handshake, a token file that cannot be read, a
 * `--record` file that cannot be created. A spawned host that fails to start shows as a `lost`
 * connection on the first command.
 */
export async function openHost(target: HostTarget, options: { record?: string; env?: NodeJS.ProcessEnv }): Promise<OpenedHost> {
  const transcript: TranscriptFile | undefined = options.record === undefined ? undefined : openTranscriptFile(options.record);
  let closing = false;
  const finish = (client: MspClient, spawned: SpawnedHost | undefined, tail: string[]): OpenedHost => {
    const lost = new Promise<CloseInfo>((resolve) => {
      void client.closed.then((info) => {
        transcript?.close();
        if (!closing) resolve(info);
      });
    });
    return {
      client,
      lost,
      stderrTail: () => [...tail],
      async close() {
        closing = true;
        await client.close();
        transcript?.close();
      },
      async kill() {
        closing = true;
        const pid = spawned?.process.pid;
        const exited = spawned?.exited;
        if (pid !== undefined) {
          signalGroup(pid, "SIGTERM");
          signalGroup(pid, "SIGINT");
        }
        await client.close("closed by Ctrl-C");
        if (pid !== undefined && exited !== undefined) {
          const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(r, KILL_WAIT_MS, false).unref())]);
          if (!gone) signalGroup(pid, "SIGKILL");
        }
        transcript?.close();
      },
    };
  };
  try {
    if (target.kind === "spawn") {
      const host = spawnHost({
        command: target.command,
        args: target.args,
        framing: target.framing,
        stderr: target.showStderr === true ? "inherit" : "pipe",
        killGraceMs: 2_000,
        defaultTimeoutMs: COMMAND_TIMEOUT_MS,
        ...(transcript === undefined
          ? {}
          : { wrapChannel: (channel) => recordingChannel(channel, (entry) => transcript.write(entry), { framing: target.framing }) }),
      });
      const tail: string[] = [];
      let partial = "";
      host.process.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        tail.push(...lines);
        if (tail.length > STDERR_TAIL_LINES) tail.splice(0, tail.length - STDERR_TAIL_LINES);
      });
      host.process.stderr?.on("end", () => {
        if (partial !== "") tail.push(partial);
        partial = "";
      });
      return finish(host, host, tail);
    }
    const token = readToken(target, options.env ?? process.env);
    const Base = await webSocketClass();
    const WebSocket = transcript === undefined ? Base : recordingWebSocket(Base, (entry) => transcript.write(entry));
    const client = await connectWebSocket(target.url, { WebSocket, defaultTimeoutMs: COMMAND_TIMEOUT_MS, ...(token === undefined ? {} : { token }) });
    return finish(client, undefined, []);
  } catch (error) {
    transcript?.close();
    throw error;
  }
}
