/**
 * A `codex app-server` child process and its JSON-RPC connection: spawned in its own process
 * group (and session), with CODEX_HOME and `-c key=value` config overrides passed through,
 * initialized with the experimental API on (the bridge uses `thread/backgroundTerminals/*`), and
 * stopped in bounded steps (stdin EOF, then SIGTERM, then SIGKILL of its group). Its requests are
 * typed by the generated Codex types; its approval requests go to one callback.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { ClientInfo } from "./generated/ClientInfo.js";
import type { ServerNotification } from "./generated/ServerNotification.js";
import type { ThreadBackgroundTerminal } from "./generated/v2/ThreadBackgroundTerminal.js";
import { resolveCodexBinary } from "./codexBinary.js";
import { CodexClosedError, CodexExitedError, CodexStartError, CodexTimeoutError, type CodexBridgeError } from "./codexErrors.js";
import { CodexRpc, type CodexMethod, type CodexParams, type CodexResponses, type ServerRequestHandler } from "./codexRpc.js";

/** Options of {@link CodexAppServer.start}. */
export interface CodexAppServerOptions {
  /** The Codex binary (`--agent-bin PATH`); default: the pinned `@openai/codex` package's native binary. */
  binary?: string;
  /** The app-server's CODEX_HOME (its config.toml, auth and thread rollouts). */
  codexHome: string;
  /** Config overrides, each `key=value` as `codex -c` takes them (the value is TOML). */
  config?: readonly string[];
  /** The app-server's working directory. @defaultValue process.cwd() */
  cwd?: string;
  /** The environment the app-server starts with (CODEX_HOME is set on top). @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  /** How this client introduces itself in `initialize`. */
  clientInfo?: ClientInfo;
  /** How long `initialize` may take. @unit milliseconds @defaultValue 30000 */
  startTimeoutMs?: number;
  /** How long any other request waits for its answer. @unit milliseconds @defaultValue 30000 */
  requestTimeoutMs?: number;
  /** Answers the app-server's requests (approvals); without it each is refused (-32601). */
  onServerRequest?: ServerRequestHandler;
  /** Debug lines: the app-server's stderr, late answers, failed writes. */
  logger?: (line: string) => void;
  /** Every JSON-RPC line written (`out`) or read (`in`): a wire log. */
  onWire?: (direction: "in" | "out", line: string) => void;
}

/** How the app-server process ended. */
export interface CodexExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The bound on each step of {@link CodexAppServer.close}. @unit milliseconds */
export const CLOSE_STEP_MS = 3000;
const STDERR_TAIL_CHARS = 2000;

/** A running `codex app-server` and the connection to it. */
export class CodexAppServer {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #rpc: CodexRpc;
  readonly #exited: Promise<CodexExit>;
  #exit: CodexExit | undefined;
  #stderrTail = "";
  /** The waits of {@link waitForNotification} still open, told when the connection ends. */
  readonly #closeListeners = new Set<(reason: CodexBridgeError) => void>();

  private constructor(child: ChildProcessWithoutNullStreams, options: CodexAppServerOptions) {
    const logger = options.logger ?? (() => {});
    this.#child = child;
    this.#rpc = new CodexRpc({
      input: child.stdout,
      output: child.stdin,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      logger,
      ...(options.onWire === undefined ? {} : { onWire: options.onWire }),
      ...(options.onServerRequest === undefined ? {} : { onServerRequest: options.onServerRequest }),
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_CHARS);
      logger(`codex stderr: ${text.trimEnd()}`);
    });
    child.stdout.on("end", () => this.#rpc.endOfInput());
    void this.#rpc.closed.then((reason) => {
      for (const listener of [...this.#closeListeners]) listener(reason);
    });
    this.#exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.#exit = { code, signal };
        this.#rpc.close(new CodexExitedError(code, signal, this.#stderrTail.trim().split("\n").slice(-3).join(" | ")));
        resolve(this.#exit);
      });
    });
    child.on("error", (error) => {
      this.#rpc.close(new CodexStartError(`could not run ${child.spawnfile}: ${error.message}`));
    });
  }

  /**
   * Spawns the app-server and initializes it. Rejects with a {@link CodexStartError} (its `cause`
   * the underlying failure) when the binary cannot run or `initialize` fails or times out; the
   * child is then stopped.
   */
  static async start(options: CodexAppServerOptions): Promise<CodexAppServer> {
    const binary = resolveCodexBinary(options.binary);
    const args = ["app-server", ...(options.config ?? []).flatMap((entry) => ["-c", entry])];
    const child = spawn(binary, args, {
      cwd: options.cwd ?? process.cwd(),
      env: { ...(options.env ?? process.env), CODEX_HOME: options.codexHome },
      // Its own process group and session: a signal to the group reaches it and nothing of ours.
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const server = new CodexAppServer(child, options);
    try {
      await server.#rpc.request(
        "initialize",
        {
          clientInfo: options.clientInfo ?? { name: "muse-bridge", title: null, version: "0" },
          capabilities: { experimentalApi: true, requestAttestation: false },
        },
        options.startTimeoutMs ?? 30_000,
      );
      server.#rpc.notify("initialized");
      return server;
    } catch (error) {
      await server.close();
      throw new CodexStartError(`codex app-server did not start: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The app-server's pid (also its process-group and session id). */
  get pid(): number {
    return this.#child.pid!;
  }

  /** How the process ended, once it has. */
  get exit(): CodexExit | undefined {
    return this.#exit;
  }

  /** Resolves when the process has exited. */
  get exited(): Promise<CodexExit> {
    return this.#exited;
  }

  /** Resolves, once, with why the connection ended: the process exited, a bad line, or {@link close}. */
  get closed(): Promise<CodexBridgeError> {
    return this.#rpc.closed;
  }

  /** Sends request `method` (see {@link CodexRpc.request}). */
  request<M extends CodexMethod>(method: M, params: CodexParams<M>, timeoutMs?: number): Promise<CodexResponses[M]> {
    return this.#rpc.request(method, params, timeoutMs);
  }

  /** Calls `listener` with every notification, in wire order. Returns the unsubscribe. */
  onNotification(listener: (notification: ServerNotification) => void): () => void {
    return this.#rpc.onNotification(listener);
  }

  /**
   * Resolves with the first notification from now on that `match` accepts. Rejects with a
   * {@link CodexTimeoutError} (`what` names it) after `timeoutMs`, or with the connection's end reason.
   */
  waitForNotification<N extends ServerNotification>(match: (n: ServerNotification) => n is N, timeoutMs: number, what: string): Promise<N>;
  waitForNotification(match: (n: ServerNotification) => boolean, timeoutMs: number, what: string): Promise<ServerNotification>;
  waitForNotification(match: (n: ServerNotification) => boolean, timeoutMs: number, what: string): Promise<ServerNotification> {
    const ended = this.#rpc.closedWith;
    if (ended !== undefined) return Promise.reject(ended);
    return new Promise((resolve, reject) => {
      const onClose = (reason: CodexBridgeError): void => done(() => reject(reason));
      const done = (settle: () => void): void => {
        clearTimeout(timer);
        unsubscribe();
        this.#closeListeners.delete(onClose);
        settle();
      };
      const timer = setTimeout(() => done(() => reject(new CodexTimeoutError(what, timeoutMs))), timeoutMs);
      const unsubscribe = this.#rpc.onNotification((n) => {
        if (match(n)) done(() => resolve(n));
      });
      this.#closeListeners.add(onClose);
    });
  }

  /**
   * Every background terminal of `threadId` (all pages; at most 100 pages are read), each page's
   * answer within `timeoutMs` (@unit milliseconds; default: the connection's request timeout).
   *
   * @example
   * ```ts
   * const running = (await appServer.backgroundTerminals(threadId, 2_000)).map((t) => t.processId);
   * ```
   */
  async backgroundTerminals(threadId: string, timeoutMs?: number): Promise<ThreadBackgroundTerminal[]> {
    const all: ThreadBackgroundTerminal[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page += 1) {
      const answer: CodexResponses["thread/backgroundTerminals/list"] = await this.request("thread/backgroundTerminals/list", { threadId, cursor }, timeoutMs);
      all.push(...answer.data);
      cursor = answer.nextCursor;
      if (cursor === null) break;
    }
    return all;
  }

  /**
   * Stops the app-server, each step bounded by `stepMs`: closes the connection (pending requests
   * reject with {@link CodexClosedError}), ends its stdin (Codex then stops its commands and exits),
   * SIGTERMs its process group if it is still there, then SIGKILLs it. Resolves when it has exited,
   * or after the last step's bound if even SIGKILL did not take (then `exit` stays undefined).
   */
  async close(stepMs = CLOSE_STEP_MS): Promise<void> {
    this.#rpc.close(new CodexClosedError());
    if (this.#exit !== undefined || this.#child.pid === undefined) return;
    this.#child.stdin.end();
    for (const signal of [undefined, "SIGTERM", "SIGKILL"] as const) {
      if (signal !== undefined) this.#signalGroup(signal);
      if (await this.#exitedWithin(stepMs)) return;
    }
  }

  #signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }

  async #exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const exited = await Promise.race([this.#exited.then(() => true), timeout]);
    clearTimeout(timer);
    return exited;
  }
}
