/**
 * An ACP agent as a child process and the ACP client connection to it: the command is spawned in
 * its own process group (and session), connected through the ACP SDK's own client
 * (`@agentclientprotocol/sdk` 2.4.0, `client()` over `ndJsonStream` on its stdio), initialized,
 * and stopped in bounded steps (stdin EOF, then SIGTERM, then SIGKILL of its group). Its
 * `session/update` notifications go to one callback, its `session/request_permission` requests
 * to another; every other agent request is refused by the SDK (method not found).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { isLive, scanProcesses } from "../processTree.js";
import {
  client,
  ndJsonStream,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ClientConnection,
  type InitializeResponse,
  type LoadSessionResponse,
  type NewSessionResponse,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";

/**
 * Options of {@link AcpAgentProcess.start}.
 *
 * @example
 * ```ts
 * const options: AcpAgentProcessOptions = { command: "gemini", args: ["--acp"], onUpdate: () => {}, onPermission: async () => ({ outcome: { outcome: "cancelled" } }) };
 * ```
 */
export interface AcpAgentProcessOptions {
  /** The agent's command (`muse serve --agent acp -- CMD ARGS…`: CMD). */
  command: string;
  /** Its arguments (ARGS…). */
  args?: readonly string[];
  /** The agent's working directory. @defaultValue process.cwd() */
  cwd?: string;
  /** The agent's environment. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  /** How long spawning and `initialize` may take. @unit milliseconds @defaultValue 30000 */
  startTimeoutMs?: number;
  /** Every `session/update` the agent sends, in wire order. */
  onUpdate: (notification: SessionNotification) => void;
  /** Answers the agent's `session/request_permission`; `withdrawn` aborts when the agent takes the request back (`$/cancel_request`) or the connection ends. */
  onPermission: (request: RequestPermissionRequest, withdrawn: AbortSignal) => Promise<RequestPermissionResponse>;
  /** Debug lines: the agent's stderr. */
  logger?: (line: string) => void;
}

/**
 * Why an agent's connection ended: the process exited (its code or signal), or {@link AcpAgentProcess.close}.
 *
 * @example
 * ```ts
 * const why = await agent.closed; // AcpAgentExitedError: "the ACP agent was killed by SIGKILL"
 * ```
 */
export class AcpAgentExitedError extends Error {
  override readonly name = "AcpAgentExitedError";
}

/**
 * The bound on each step of {@link AcpAgentProcess.close}. @unit milliseconds
 *
 * @example
 * ```ts
 * await agent.close(ACP_CLOSE_STEP_MS);
 * ```
 */
export const ACP_CLOSE_STEP_MS = 3000;
const STDERR_TAIL_CHARS = 2000;

/**
 * What the bridge tells the agent it can do: no `fs/*` and no `terminal/*` methods, and the
 * `terminal_output` extension of `_meta` (Zed's, read by codex-acp): the agent runs its commands
 * itself and streams their output as `tool_call_update._meta.terminal_output.data`
 * (./acpUpdates.ts). Without it codex-acp 0.16.0 shows a command's output only once it ended, so a
 * Stop would find nothing shown of a running command. An agent that does not know the key ignores
 * it, as ACP's `_meta` rules say.
 */
const CLIENT_CAPABILITIES: ClientCapabilities = { _meta: { terminal_output: true } };

/**
 * A running ACP agent and the client connection to it.
 *
 * @example
 * ```ts
 * const agent = await AcpAgentProcess.start({ command: "codex-acp", onUpdate: (n) => console.log(n.update), onPermission: async () => ({ outcome: { outcome: "cancelled" } }) });
 * const { sessionId } = await agent.newSession(process.cwd());
 * const { stopReason } = await agent.prompt(sessionId, "hello");
 * await agent.close();
 * ```
 */
export class AcpAgentProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #connection: ClientConnection;
  readonly #closed: Promise<AcpAgentExitedError>;
  #exited = false;
  #stderrTail = "";
  /** What `initialize` answered. */
  info: InitializeResponse | undefined;

  private constructor(child: ChildProcessWithoutNullStreams, options: AcpAgentProcessOptions) {
    const logger = options.logger ?? (() => {});
    this.#child = child;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_CHARS);
      logger(`acp agent stderr: ${text.trimEnd()}`);
    });
    // A write after the agent exited is the connection's end, not this process's crash.
    child.stdin.on("error", () => {});
    const app = client({ name: "muse-bridge" });
    app.onNotification("session/update", ({ params }) => options.onUpdate(params));
    app.onRequest("session/request_permission", ({ params, signal }) => options.onPermission(params, signal));
    this.#connection = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
    this.#closed = new Promise((resolve) => {
      const describe = (code: number | null, signal: NodeJS.Signals | null): string => {
        const how = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
        const tail = this.#stderrTail.trim().split("\n").slice(-3).join(" | ");
        return `the ACP agent ${how}${tail === "" ? "" : ` (${tail})`}`;
      };
      child.on("exit", (code, signal) => {
        this.#exited = true;
        const error = new AcpAgentExitedError(describe(code, signal));
        this.#connection.close(error);
        resolve(error);
      });
      child.on("error", (error) => {
        this.#exited = true;
        const failed = new AcpAgentExitedError(`could not run ${child.spawnfile}: ${error.message}`);
        this.#connection.close(failed);
        resolve(failed);
      });
      void this.#connection.closed.then(() => {
        if (!this.#exited) resolve(new AcpAgentExitedError("the ACP connection closed"));
      });
    });
  }

  /** Spawns the agent and initializes it; rejects (the child stopped) when it cannot run or `initialize` fails or times out. */
  static async start(options: AcpAgentProcessOptions): Promise<AcpAgentProcess> {
    const child = spawn(options.command, [...(options.args ?? [])], {
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      // Its own process group and session: a signal to the group reaches it and nothing of ours.
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const agent = new AcpAgentProcess(child, options);
    const timeoutMs = options.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`initialize got no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      const ended = agent.closed.then((error) => Promise.reject(error));
      agent.info = await Promise.race([
        agent.#connection.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: CLIENT_CAPABILITIES }),
        timeout,
        ended,
      ]);
      return agent;
    } catch (error) {
      await agent.close();
      throw new Error(`the ACP agent ${options.command} did not start: ${(error as Error).message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The agent's pid (also its process-group and session id). */
  get pid(): number {
    return this.#child.pid!;
  }

  /** Resolves, once, with why the connection ended (the agent exited, or {@link close}). */
  get closed(): Promise<AcpAgentExitedError> {
    return this.#closed;
  }

  /** `session/new` in `cwd`, with no MCP servers. */
  newSession(cwd: string): Promise<NewSessionResponse> {
    return this.#connection.agent.request("session/new", { cwd, mcpServers: [] });
  }

  /** Whether `initialize` said the agent can load a session it ran before (`agentCapabilities.loadSession`). */
  get loadsSessions(): boolean {
    return this.info?.agentCapabilities?.loadSession === true;
  }

  /**
   * `session/load` of `sessionId` in `cwd`, with no MCP servers: the agent replays the session's
   * history as `session/update`s, then answers.
   */
  loadSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    return this.#connection.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
  }

  /** `session/prompt` with one text block: its answer is the prompt turn's end. */
  prompt(sessionId: string, text: string): Promise<PromptResponse> {
    return this.#connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  }

  /** The `session/cancel` notification. */
  cancel(sessionId: string): Promise<void> {
    return this.#connection.agent.notify("session/cancel", { sessionId });
  }

  /**
   * Stops the agent, each step bounded by `stepMs`: closes the connection (pending requests
   * reject), ends its stdin and SIGTERMs its process group at once (an ACP agent need not exit
   * when its stdin closes: codex-acp does not), then SIGKILLs it. The group is signalled while
   * any member of it lives, also once the agent itself has exited (a child it started in its
   * group may outlive it).
   */
  async close(stepMs = ACP_CLOSE_STEP_MS): Promise<void> {
    this.#connection.close(new AcpAgentExitedError("the bridge closed the ACP agent"));
    if (this.#child.pid === undefined) return;
    if (!this.#exited) this.#child.stdin.end();
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (this.#exited && !this.#groupLives()) return;
      this.#signalGroup(signal);
      if (await this.#stoppedWithin(stepMs)) return;
    }
  }

  /** Whether a live process (not a zombie) is in the agent's process group. */
  #groupLives(): boolean {
    for (const p of scanProcesses().values()) if (p.pgid === this.pid && isLive(p)) return true;
    return false;
  }

  /** Whether the agent has exited and its group has no live member within `ms`. @param ms - @unit milliseconds */
  async #stoppedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    if (!(await this.#exitedWithin(ms))) return false;
    while (this.#groupLives()) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }

  #signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }

  async #exitedWithin(ms: number): Promise<boolean> {
    if (this.#exited) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const exited = await Promise.race([new Promise<true>((resolve) => this.#child.once("exit", () => resolve(true))), timeout]);
    clearTimeout(timer);
    return exited || this.#exited;
  }
}
