/**
 * spawnHost: start an MSP host as a child process (its own process group) and connect to it
 * over stdio. `close()` ends stdin, then SIGTERMs, then SIGKILLs the whole group.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { MessageReader, MessageWriter } from "vscode-jsonrpc";
import type { ConnectOptions } from "../client/connect.js";
import { MspClient, type MspClientOptions } from "../client/mspClient.js";
import type { CloseInfo } from "../types/closeInfo.js";
import { assertCapacities } from "../turns/mspDispatcher.js";
import type { ByteChannel } from "../framing/byteChannel.js";
import { assertFraming, createFraming, type Framing } from "../framing/createFraming.js";
import { assertMaxWriteBufferBytes } from "../framing/framedWriter.js";
import { groupAlive, signalGroup } from "./processGroup.js";
import { streamChannel } from "./streamChannel.js";

/**
 * Options of {@link spawnHost}.
 *
 * @example
 * ```ts
 * const options: SpawnHostOptions = {
 *   command: "muse-host",
 *   args: ["serve", "--stdio", "--script", "model.json"],
 *   stderr: "pipe",
 *   killGraceMs: 500,
 *   defaultTimeoutMs: 30_000,
 * };
 * const host = spawnHost(options);
 * ```
 */
export interface SpawnHostOptions extends Omit<ConnectOptions, "framing"> {
  command: string;
  /** How messages are framed on the host's stdio: MSP's NDJSON, or LSP's Content-Length. @defaultValue "ndjson" */
  framing?: Framing;
  args?: readonly string[];
  /** Environment of the host. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where the host's stderr goes. @defaultValue "inherit" */
  stderr?: "inherit" | "pipe" | "ignore";
  /** How long each step of `close()` waits before the next, harder one. @unit milliseconds @defaultValue 2 000 */
  killGraceMs?: number;
  /**
   * Wrap the stdio channel before the client reads it, e.g. with `recordingChannel` from
   * `@muse-code/sdk/testing` to record the wire as a transcript.
   */
  wrapChannel?: (channel: ByteChannel) => ByteChannel;
}

/**
 * How a spawned host ended.
 *
 * @example
 * ```ts
 * const host = spawnHost({ command: "muse-host", args: ["serve", "--stdio", "--script", "model.json"] });
 * await host.close();
 * const { exitCode, signal }: HostExit = await host.exited;
 * console.log(signal ?? `exit code ${exitCode}`);
 * ```
 */
export interface HostExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** Process groups of hosts still alive; killed if this process exits first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function killLiveGroups(): void {
  for (const pid of liveGroups) signalGroup(pid, "SIGKILL");
}

/** After a pipe to the host closes or breaks, how long to wait for its exit status before reporting without it. @unit milliseconds */
const EXIT_STATUS_WAIT_MS = 50;

/**
 * An {@link MspClient} connected to a child-process host. `close()` stops the host; so does
 * leaving an `await using` block (`[Symbol.asyncDispose]` calls `close()`). Until then the
 * open pipes to the host keep the Node process alive.
 *
 * @example
 * ```ts
 * {
 *   await using host = spawnHost({ command: "muse-host", args: ["serve", "--stdio", "--script", "model.json"] });
 *   console.log(host.pid);
 * } // the host is stopped here, its process group included
 * ```
 */
export class SpawnedHost extends MspClient {
  /** The host's `ChildProcess`. */
  readonly process: ChildProcess;
  /** Resolves with the host's exit code or signal once it has exited. */
  readonly exited: Promise<HostExit>;
  readonly #killGraceMs: number;
  #closing: Promise<CloseInfo> | undefined;

  /** @internal Use {@link spawnHost}. */
  constructor(reader: MessageReader, writer: MessageWriter, options: MspClientOptions, child: ChildProcess, exited: Promise<HostExit>, killGraceMs: number) {
    super(reader, writer, options);
    this.process = child;
    this.exited = exited;
    this.#killGraceMs = killGraceMs;
    const pid = child.pid;
    if (pid !== undefined) liveGroups.add(pid);
    // If this process exits first, take the host's whole group with it (one listener for all hosts).
    if (liveGroups.size > 0 && !exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", killLiveGroups);
    }
    void exited.then(() => {
      if (pid === undefined) return;
      // Grandchildren may outlive the host: the group goes with it.
      if (groupAlive(pid)) signalGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
      if (liveGroups.size === 0 && exitHookInstalled) {
        exitHookInstalled = false;
        process.off("exit", killLiveGroups);
      }
    });
  }

  /** The host's process id (its process group id too). */
  get pid(): number {
    return this.process.pid as number;
  }

  /**
   * Close the connection (pending work settles `connectionClosed` at once), end stdin, then
   * SIGTERM and finally SIGKILL the host's process group, each after `killGraceMs`.
   *
   * @example
   * ```ts
   * const host = spawnHost({ command: "muse-host", args: ["serve", "--stdio", "--script", "model.json"] });
   * await host.close(); // no orphan left, grandchildren included
   * ```
   */
  override close(reason?: string): Promise<CloseInfo> {
    this.#closing ??= this.#stop(reason);
    return this.#closing;
  }

  async #stop(reason: string | undefined): Promise<CloseInfo> {
    const info = await super.close(reason);
    const pid = this.process.pid;
    if (pid === undefined) return info;
    const exitedWithin = (ms: number) =>
      Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())]);
    if (!(await exitedWithin(this.#killGraceMs))) {
      signalGroup(pid, "SIGTERM");
      if (!(await exitedWithin(this.#killGraceMs))) signalGroup(pid, "SIGKILL");
    }
    await this.exited;
    if (groupAlive(pid)) signalGroup(pid, "SIGKILL");
    return info;
  }
}

/**
 * Spawn an MSP host and connect to it over its stdio (NDJSON by default). If the host exits,
 * everything pending settles as `connectionClosed` with `exitCode` or `signal` in `data`.
 *
 * @example
 * ```ts
 * const host = spawnHost({ command: process.execPath, args: ["node_modules/@muse-code/host/dist/serve/main.js", "serve", "--stdio", "--script", "m.json"] });
 * const { sessionId } = await host.command("session/create", {});
 * ```
 */
export function spawnHost(options: SpawnHostOptions): SpawnedHost {
  const {
    command,
    args = [],
    env,
    cwd,
    stderr = "inherit",
    killGraceMs = 2_000,
    framing,
    maxMessageBytes,
    maxWriteBufferBytes,
    wrapChannel,
    ...clientOptions
  } = options;
  // A mistake in the options is thrown before a process exists that could be orphaned.
  assertFraming(framing);
  assertMaxWriteBufferBytes(maxWriteBufferBytes);
  assertCapacities(clientOptions);
  const child = spawn(command, [...args], {
    stdio: ["pipe", "pipe", stderr],
    detached: true,
    ...(env === undefined ? {} : { env }),
    ...(cwd === undefined ? {} : { cwd }),
  });
  const stdin = child.stdin;
  const stdout = child.stdout;
  if (stdin === null || stdout === null) throw new Error("spawnHost: the child has no stdio pipes");
  let exitStatus: HostExit | undefined;
  let pipeDown: string | undefined;
  let reportTimer: ReturnType<typeof setTimeout> | undefined;
  // stdout's end, or a broken pipe (EPIPE), usually comes a moment before the exit status:
  // wait briefly for it so pending work can say how the host ended.
  const pipeClosed = (why: string) => {
    pipeDown ??= why;
    if (exitStatus !== undefined) report();
    else reportTimer ??= setTimeout(report, EXIT_STATUS_WAIT_MS).unref();
  };
  const channel = streamChannel(stdout, stdin, {
    onPipeError: (error) => pipeClosed(`the pipe to the host broke: ${error instanceof Error ? error.message : String(error)}`),
  });
  const exited = new Promise<HostExit>((resolve) => {
    child.once("error", (error) => {
      // The host never started (ENOENT, EACCES): there is no exit to wait for.
      if (child.pid === undefined) {
        exitStatus = { exitCode: null, signal: null };
        resolve(exitStatus);
        channel.emitEnd({ reason: `could not start ${command}: ${error.message}` });
      }
    });
    child.once("exit", (exitCode, signal) => {
      exitStatus = { exitCode, signal };
      resolve(exitStatus);
      if (pipeDown !== undefined) report();
      else reportTimer ??= setTimeout(report, EXIT_STATUS_WAIT_MS).unref();
    });
  });
  const report = () => {
    if (reportTimer !== undefined) clearTimeout(reportTimer);
    channel.emitEnd(
      exitStatus === undefined
        ? { reason: pipeDown ?? "the host closed its stdout" }
        : { exitCode: exitStatus.exitCode, signal: exitStatus.signal, reason: describeExit(exitStatus) },
    );
  };
  stdout.once("end", () => pipeClosed("the host closed its stdout"));
  const wire = wrapChannel === undefined ? channel : wrapChannel(channel);
  const { reader, writer } = createFraming(wire, framing, { maxMessageBytes, maxWriteBufferBytes });
  return new SpawnedHost(reader, writer, clientOptions, child, exited, killGraceMs);
}

function describeExit(exit: HostExit): string {
  return exit.signal !== null ? `the host was killed by ${exit.signal}` : `the host exited with code ${exit.exitCode}`;
}
