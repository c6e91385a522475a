/**
 * A session's turns run by Codex: one `codex app-server` (started at the session's first turn)
 * and one Codex thread per MSP session. A turn is a Codex `turn/start` with the MSP input; Codex's
 * notifications are mapped (./codex/codexItems.ts) to the session's items through `turn.emit`, so every
 * item/started gets exactly one item/completed before the terminal. A stop is honest
 * (./codex/codexTurnStop.ts): `turn/interrupt`, Codex's terminal, its background terminals, then the
 * process tree reaped; the items still open are closed `cancelled` with the output they showed,
 * and only then does `run` throw, so the session sends `cancelled` once no process of the turn
 * runs. When a process cannot be confirmed gone, `run` throws a {@link TurnStopFailedError}: the
 * session ends the turn `failed`, never `cancelled` over a live process.
 * Codex's approval requests are asked through the session (its grants and `tool/approve`).
 * A Codex that does not answer `turn/interrupt` within `stopGraceMs`, or an app-server that dies
 * mid-turn, fails the turn once its tool processes are reaped; the app-server is shut down (or
 * gone) and the session's next turn starts a new one, which resumes the session's Codex thread
 * (`thread/resume`). The thread id is kept in a {@link CodexThreadStore}, so a host restarted on
 * the same data directory resumes it too.
 * Steering (`steer`): a `turn/steer` is handed to Codex's running turn (`turn/steer` with
 * `expectedTurnId`) before the session accepts it, and refused with Codex's words when Codex
 * refuses; its item completes `consumed` when Codex echoes it into the conversation (a later
 * `userMessage` of the turn). Steering a stopped turn carried over starts the next turn's input.
 * A subagent thread Codex spawns becomes a child session (./codexSubagents.ts); a stop stops
 * that tree first, and the turn ends only after every child turn has.
 */
import { TurnStopFailedError, type TurnContext, type TurnDriver } from "../agent/turnDriver.js";
import { ProcessTreeWatch, releaseGoneGroups } from "./processTree.js";
import type { ToolGroupRegistry } from "../tools/toolGroups.js";
import { CodexAppServer } from "./codex/codexAppServer.js";
import { CodexExitedError, CodexRpcError, type CodexBridgeError } from "./codex/codexErrors.js";
import type { CodexThreadStore } from "./codex/codexThreadStore.js";
import { approvalOffers, approvalResult, isApprovalRequest, type CodexApprovalRequest } from "./codex/codexApprovals.js";
import { CodexTurnItems } from "./codex/codexItems.js";
import { BRIDGE_STOPPED_REASON, BridgeTurnItems } from "./bridgeTurnItems.js";
import { reapCodexTree, stopCodexTurn } from "./codex/codexTurnStop.js";
import { CodexSubagents } from "./codexSubagents.js";
import type { Delegate } from "../agent/delegation.js";
import type { ServerNotification } from "./codex/generated/ServerNotification.js";
import type { Turn } from "./codex/generated/v2/Turn.js";

/**
 * How a host runs its sessions' turns with Codex (`muse serve --agent codex`).
 *
 * @example
 * ```ts
 * const agent: CodexAgentOptions = { kind: "codex", bin: "/usr/local/bin/codex", codexHome: "/home/me/.codex", config: ['model="o4-mini"'] };
 * createHost({ models: codexModels(), defaultModel: CODEX_MODEL_NAME, agent });
 * ```
 */
export interface CodexAgentOptions {
  /** Which agent runs the turns: Codex's app-server. */
  kind: "codex";
  /** The Codex binary (`--agent-bin PATH`); default: the pinned `@openai/codex` package's native binary. */
  bin?: string;
  /** Codex's CODEX_HOME (its config.toml and auth). @defaultValue `$CODEX_HOME`, else `~/.codex` */
  codexHome?: string;
  /** Config overrides, each `key=value` as `codex -c` takes them (the value is TOML). */
  config?: readonly string[];
  /** The directory Codex works in (its commands run there). @defaultValue process.cwd() */
  cwd?: string;
  /** The environment Codex starts with (CODEX_HOME is set on top). @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * How long a Stop waits for each answer Codex owes (`turn/interrupt`, then its terminal). A
   * Codex that does not answer `turn/interrupt` in time fails the turn. @unit milliseconds @defaultValue 5000
   */
  stopGraceMs?: number;
}

/** What a {@link CodexTurnDriver} is given besides the agent's options. */
export interface CodexTurnDriverOptions extends Omit<CodexAgentOptions, "kind"> {
  codexHome: string;
  /** SIGTERM → SIGKILL of a stopped turn's tool processes. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  logger?: (line: string) => void;
  /** Where the session's Codex thread id is kept across restarts; without it, only in memory. */
  threadStore?: CodexThreadStore;
  /**
   * The host's record of tool process groups: each command group Codex starts (its own session
   * leader) is recorded while it runs, so that a host restarted after a SIGKILL kills it.
   */
  toolGroups?: Pick<ToolGroupRegistry, "record" | "release">;
  /** The session the driver runs, and the host's delegation: with both, Codex's subagent threads become its child sessions. */
  sessionId?: string;
  delegate?: Delegate;
}

/** The turn running now, as a steer finds it. */
interface ActiveTurn {
  turnId: string;
  /** Codex's turn, once `turn/start` answered (`undefined`: it never did). */
  codex: Promise<{ server: CodexAppServer; threadId: string; codexTurnId: string } | undefined>;
  started: (codex: { server: CodexAppServer; threadId: string; codexTurnId: string } | undefined) => void;
  /** Codex's turn ended (or is being stopped): it takes no more steering. */
  over: boolean;
  /** Echoes of steering that came before the session had the input in its inbox. */
  owed: number;
  context: TurnContext;
}

/** The app-server a session's turns run on, and the session's Codex thread in it. */
interface Ready {
  server: CodexAppServer;
  threadId: string;
}

/** Codex refused to resume the session's thread: it is forgotten, and the next turn starts a new one. */
class CodexResumeError extends Error {
  override readonly name = "CodexResumeError";
}

/** Why a Codex turn ended without the user: it failed, or Codex stopped it by itself. */
function endedBy(turn: Turn): string {
  if (turn.status === "failed") return turn.error?.message ?? "codex failed the turn";
  return `codex ended the turn ${turn.status}`;
}

/** Why a turn failed whose app-server went mid-turn. */
function diedReason(error: CodexBridgeError): string {
  if (error instanceof CodexExitedError) {
    const how = error.signal !== null ? `killed by ${error.signal}` : `exited with code ${String(error.exitCode)}`;
    return `the codex app-server died mid-turn (${how}); the next turn starts a new one on the same thread`;
  }
  return `the codex app-server connection ended mid-turn (${error.message}); the next turn starts a new one on the same thread`;
}

/** One session's Codex. */
export class CodexTurnDriver implements TurnDriver {
  readonly #options: CodexTurnDriverOptions;
  #server: Promise<Ready> | undefined;
  /** The turn running now (steering goes to it). */
  #active: ActiveTurn | undefined;
  /** The session's Codex thread, once started or resumed (kept when its app-server goes). */
  #threadId: string | undefined;
  /** The thread id last written to the store. */
  #savedThreadId: string | undefined;
  /** The running turn's answerer of Codex's approval requests. */
  #asking: ((request: CodexApprovalRequest) => Promise<unknown>) | undefined;

  constructor(options: CodexTurnDriverOptions) {
    this.#options = options;
  }

  /** The app-server and the session's thread: started once, and again after the app-server went. */
  #ready(): Promise<Ready> {
    if (this.#server !== undefined) return this.#server;
    const started = (async () => {
      const o = this.#options;
      const server = await CodexAppServer.start({
        codexHome: o.codexHome,
        ...(o.bin === undefined ? {} : { binary: o.bin }),
        ...(o.config === undefined ? {} : { config: o.config }),
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        ...(o.env === undefined ? {} : { env: o.env }),
        ...(o.logger === undefined ? {} : { logger: o.logger }),
        onServerRequest: (request) => {
          if (!isApprovalRequest(request)) throw new Error(`${request.method} is not bridged`);
          // Between turns there is no one to ask: declined, and Codex goes on without the call.
          return this.#asking?.(request) ?? Promise.resolve(approvalResult(request, "deny"));
        },
      });
      try {
        return { server, threadId: await this.#thread(server) };
      } catch (error) {
        await server.close();
        throw error;
      }
    })();
    this.#server = started;
    // A start that failed, or an app-server that went (died, or was shut down), is started again at the next turn.
    const drop = (): void => {
      if (this.#server === started) this.#server = undefined;
    };
    started.then(({ server }) => server.closed.then(drop), drop);
    return started;
  }

  /** The session's thread in a new app-server: its own thread resumed when it has one, else a new thread. */
  async #thread(server: CodexAppServer): Promise<string> {
    const cwd = this.#options.cwd ?? process.cwd();
    const store = this.#options.threadStore;
    const known = this.#threadId ?? store?.load();
    if (known === undefined) {
      const { thread } = await server.request("thread/start", { cwd });
      this.#threadId = thread.id;
      return thread.id;
    }
    try {
      const { thread } = await server.request("thread/resume", { threadId: known, cwd, excludeTurns: true });
      this.#threadId = thread.id;
      this.#savedThreadId = known;
      return thread.id;
    } catch (error) {
      if (!(error instanceof CodexRpcError)) throw error;
      this.#threadId = undefined;
      this.#savedThreadId = undefined;
      store?.forget();
      throw new CodexResumeError(`codex could not resume the session's thread ${known} (${error.rpcMessage}); the next turn starts a new Codex thread`, {
        cause: error,
      });
    }
  }

  /** Keeps the thread id across restarts, once a turn is in it (a failed write is only logged). */
  #persist(threadId: string): void {
    const store = this.#options.threadStore;
    if (store === undefined || this.#savedThreadId === threadId) return;
    try {
      store.save(threadId);
      this.#savedThreadId = threadId;
    } catch (error) {
      this.#options.logger?.(`could not keep the Codex thread id in ${store.path}: ${(error as Error).message}`);
    }
  }

  /** Shuts down an app-server that cannot be trusted with another turn; the next turn starts a new one. */
  async #discard(server: CodexAppServer): Promise<void> {
    this.#server = undefined;
    await server.close(this.#options.killGraceMs ?? 2000);
  }

  /**
   * Hands steering text to Codex's running turn (`turn/steer` with `expectedTurnId`): resolves
   * `undefined` once Codex took it, or with why not, in Codex's words when it refused.
   */
  async steer(turnId: string, text: string): Promise<string | undefined> {
    const active = this.#active;
    if (active?.turnId !== turnId) return "codex is not running this turn";
    const codex = await active.codex;
    if (codex === undefined || active.over) return "codex is not running this turn";
    try {
      const input = [{ type: "text" as const, text, text_elements: [] }];
      await codex.server.request("turn/steer", { threadId: codex.threadId, expectedTurnId: codex.codexTurnId, input });
    } catch (error) {
      return error instanceof CodexRpcError ? error.rpcMessage : (error as Error).message;
    }
    // The session adds the input to its inbox right after this resolves: an echo that came first is consumed then.
    if (active.owed > 0) setImmediate(() => this.#consumeSteering(active, false));
    return undefined;
  }

  /**
   * The session's pending steering is consumed: Codex echoed steering input into its
   * conversation (`echo`), or an echo owed from before the input was in the inbox is paid now.
   */
  #consumeSteering(active: ActiveTurn, echo: boolean): void {
    if (this.#active !== active) return;
    if (active.context.takeSteering().length > 0) active.owed = 0;
    else if (echo) active.owed += 1;
  }

  /** Stops the app-server (and with it whatever it still runs). */
  async close(): Promise<void> {
    const started = this.#server;
    this.#server = undefined;
    if (started === undefined) return;
    try {
      const { server } = await started;
      await server.close();
    } catch {
      // never started: nothing to stop
    }
  }

  async run(turn: TurnContext): Promise<void> {
    // Steering waits for Codex's turn from here on (see `steer`); Codex's echo of it is consumed.
    let started!: ActiveTurn["started"];
    const codex = new Promise<Awaited<ActiveTurn["codex"]>>((resolve) => (started = resolve));
    const active: ActiveTurn = { turnId: turn.turnId, context: turn, codex, started, over: false, owed: 0 };
    this.#active = active;
    try {
      await this.#run(turn, active);
    } finally {
      active.over = true;
      started(undefined);
      if (this.#active === active) this.#active = undefined;
    }
  }

  async #run(turn: TurnContext, active: ActiveTurn): Promise<void> {
    const { signal } = turn;
    signal.throwIfAborted();
    turn.at("promptAssembly");
    const { server, threadId } = await this.#ready();
    signal.throwIfAborted();
    turn.declareUsage();
    const out = new BridgeTurnItems(turn, () => this.#consumeSteering(active, true));
    // Notifications that come before turn/start's answer are held until the turn's id is known.
    let mapper: CodexTurnItems | undefined;
    const early: ServerNotification[] = [];
    let terminal!: (turn: Turn) => void;
    const ended = new Promise<Turn>((resolve) => (terminal = resolve));
    let codexId: string | undefined;
    const feed = (n: ServerNotification): void => {
      if (mapper === undefined) return void early.push(n);
      out.take(mapper.accept(n));
      if (n.method === "turn/completed" && n.params.turn.id === codexId) terminal(n.params.turn);
    };
    const unsubscribe = server.onNotification(feed);
    const subagents = this.#subagents(turn, server, threadId);
    const recorded = new Set<number>();
    const watch = new ProcessTreeWatch(server.pid, 100, ({ pgid, sid }) => {
      if (pgid !== sid || this.#options.toolGroups === undefined) return;
      this.#options.toolGroups.record(pgid);
      recorded.add(pgid);
    });
    watch.start();
    // The questions open now: a stop answers them (`cancel`) before it interrupts Codex.
    const asking = new Set<Promise<unknown>>();
    this.#asking = (request) => {
      // A child thread's question is its child session's (its turn's stop answers it).
      const child = subagents?.ask(request);
      if (child !== undefined) return child;
      const answer = this.#approve(turn, out, request);
      asking.add(answer);
      void answer.finally(() => asking.delete(answer)).catch(() => {});
      return answer;
    };
    try {
      turn.at("modelStream");
      // Steering carried over from a stopped turn comes first, as this turn's input.
      const text = [...turn.heard, ...turn.input.map((i) => i.text)].join("\n");
      const started = await server.request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] });
      codexId = started.turn.id;
      active.started({ server, threadId, codexTurnId: codexId });
      this.#persist(threadId);
      mapper = new CodexTurnItems(codexId);
      for (const n of early.splice(0)) feed(n);
      const aborted = new Promise<"aborted">((resolve) => {
        if (signal.aborted) resolve("aborted");
        signal.addEventListener("abort", () => resolve("aborted"), { once: true });
      });
      const outcome = await Promise.race([ended, aborted, server.closed]);
      active.over = true;
      if (outcome === "aborted") {
        // From here a tool call Codex ends (its terminal terminated by the stop) ends `cancelled`, with its output.
        out.stopping = true;
        await Promise.allSettled([...asking]);
        const graces = { ...this.#grace(), ...(this.#options.stopGraceMs === undefined ? {} : { agentStopGraceMs: this.#options.stopGraceMs }) };
        let stop;
        try {
          await subagents?.stopTree(codexId);
          stop = await stopCodexTurn(server, { threadId, turnId: codexId, watch, ...graces });
        } catch (error) {
          // The app-server died during the stop: what it left is reaped all the same.
          const reaped = server.exit === undefined ? "" : await this.#reapAfterDeath(server, watch);
          out.closeOpen("failed", `the stop failed: ${(error as Error).message}`);
          throw new TurnStopFailedError(`the stop could not be confirmed: ${(error as Error).message}${reaped}`, { cause: error });
        }
        if (stop.interruptUnanswered === true || (stop.agentStatus === undefined && stop.interruptRefused === undefined)) {
          const grace = this.#options.stopGraceMs ?? 5000;
          const what = stop.interruptUnanswered === true ? "did not answer turn/interrupt" : "sent no terminal after turn/interrupt";
          const reason = `codex app-server ${what} within ${grace} ms; its tool processes were stopped and it was shut down`;
          out.closeOpen("failed", reason);
          await this.#discard(server);
          throw new TurnStopFailedError(reason);
        }
        out.closeOpen("cancelled", BRIDGE_STOPPED_REASON);
        signal.throwIfAborted();
        return;
      }
      if (!("status" in outcome)) {
        // The app-server died: its tree is reaped before the turn fails; the next turn starts a new one.
        await subagents?.settled();
        const reason = `${diedReason(outcome)}${await this.#reapAfterDeath(server, watch)}`;
        out.closeOpen("failed", reason);
        throw new Error(reason);
      }
      // Codex's own terminal: the child turns end first, then what its commands left behind is reaped.
      await subagents?.settled();
      await reapCodexTree(server, { watch, ...this.#grace() });
      out.closeOpen("failed", "codex ended the turn without completing it");
      if (outcome.status !== "completed") throw new Error(endedBy(outcome));
    } finally {
      subagents?.dispose();
      this.#asking = undefined;
      watch.stop();
      releaseGoneGroups(recorded, this.#options.toolGroups);
      // What Codex sends after the turn's end (the stopped command's late item/completed) is absorbed.
      unsubscribe();
    }
  }

  /**
   * A Codex approval request, asked through the session (its grants, `tool/approve`) about the
   * toolCall item it names. Approved → `accept` (the host's own grants cover the later calls, so
   * Codex is never told `acceptForSession`); denied → `decline`; withdrawn by a stop → `cancel`,
   * before the stop goes on. A request about no open tool call is declined.
   */
  async #approve(turn: TurnContext, out: BridgeTurnItems, request: CodexApprovalRequest): Promise<unknown> {
    const agentItemId = request.params.itemId;
    const item = out.itemOf(agentItemId);
    if (item?.kind !== "toolCall" || out.stopping) return approvalResult(request, out.stopping ? "cancelled" : "deny");
    const approved = await turn.approve(item, approvalOffers(request));
    if (approved !== undefined) {
      out.replace(agentItemId, approved);
      return approvalResult(request, "approve");
    }
    // The session completed the item (denied or withdrawn); what Codex says of it later is absorbed.
    out.forget(agentItemId);
    return approvalResult(request, turn.signal.aborted ? "cancelled" : "deny");
  }

  /** Reaps what a dead app-server left (its recorded groups); says so when a process survived. */
  async #reapAfterDeath(server: CodexAppServer, watch: ProcessTreeWatch): Promise<string> {
    try {
      await reapCodexTree(server, { watch, ...this.#grace() });
      return "";
    } catch (error) {
      return `; ${(error as Error).message}`;
    }
  }

  /** The turn's child sessions of Codex's subagents, when the host delegates. */
  #subagents(turn: TurnContext, server: CodexAppServer, threadId: string): CodexSubagents | undefined {
    const { sessionId, delegate } = this.#options;
    if (sessionId === undefined || delegate === undefined) return undefined;
    return new CodexSubagents({ server, turn, sessionId, threadId, delegate, items: (t) => new BridgeTurnItems(t), ...this.#grace() });
  }

  #grace(): { killGraceMs?: number } {
    return this.#options.killGraceMs === undefined ? {} : { killGraceMs: this.#options.killGraceMs };
  }
}
