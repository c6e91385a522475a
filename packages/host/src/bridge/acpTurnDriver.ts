/**
 * A session's turns run by an ACP agent (`muse serve --agent acp -- CMD ARGS…`): one agent child
 * (started at the session's first turn, ./acp/acpAgentProcess.ts) and one ACP session per MSP
 * session (`session/new`, lazily). Its id is kept in an {@link AcpSessionStore}, so the first turn
 * after a host restart (or after the agent died) loads that ACP session (`session/load`) where the
 * agent's `initialize` offers `loadSession`; the history the agent replays while loading is
 * absorbed (no turn runs then). A load that fails, or an agent that offers none, starts a new ACP
 * session, said in the host log; the turn goes on. A turn is a `session/prompt` with the MSP input, and its answer
 * is the turn's terminal (./acp/acpStopReasons.ts); the agent's `session/update`s are mapped
 * (./acp/acpUpdates.ts) to the session's items, so every item/started gets exactly one
 * item/completed before the terminal. Its `session/request_permission`s are asked through the
 * session (./acp/acpPermissions.ts). A stop is honest (./acp/acpTurnStop.ts): every open
 * permission request answered `cancelled`, `session/cancel`, the agent's answer, then the process
 * tree below the agent reaped; the items still open are closed `cancelled` with the output they
 * showed, and only then does `run` throw, so the session sends `cancelled` once no process of the
 * turn runs. When a process cannot be confirmed gone, or the agent never answers the cancel, `run`
 * throws a {@link TurnStopFailedError}: the turn ends `failed`; so it does when the agent exits
 * before it answers the cancel (it never reached a terminal), and when the agent ended the turn by
 * itself and a Stop came while its leftovers were reaped (a Stop never relabels the agent's own
 * end). An agent that leaves a cancel unanswered is closed, so the next turn starts it again and
 * loads its session rather than share it with the old prompt. Starting the agent's session is
 * bounded ({@link AcpTurnDriverOptions.sessionStartTimeoutMs}), and a Stop does not wait for it. What the agent sends after the
 * prompt's answer is absorbed.
 * Not bridged: steering (`turn/steer` is refused `steering_unsupported`: ACP has no way to add
 * input to a running prompt turn).
 */
import type { RequestPermissionRequest, RequestPermissionResponse, SessionNotification } from "@agentclientprotocol/sdk";
import { TurnStopFailedError, type TurnContext, type TurnDriver, type TurnOutcome } from "../agent/turnDriver.js";
import type { ToolGroupRegistry } from "../tools/toolGroups.js";
import { ProcessTreeWatch, releaseGoneGroups } from "./processTree.js";
import { BRIDGE_STOPPED_REASON, BridgeTurnItems } from "./bridgeTurnItems.js";
import { AcpAgentProcess } from "./acp/acpAgentProcess.js";
import type { AcpSessionStore } from "./acp/acpSessionStore.js";
import { offersOf, permissionResponse } from "./acp/acpPermissions.js";
import { turnEndOf } from "./acp/acpStopReasons.js";
import { reapAcpTree, stopAcpTurn } from "./acp/acpTurnStop.js";
import { AcpTurnUpdates, promptUsage } from "./acp/acpUpdates.js";

/**
 * How a host runs its sessions' turns with an ACP agent (`muse serve --agent acp -- CMD ARGS…`).
 *
 * @example
 * ```ts
 * const agent: AcpAgentOptions = { kind: "acp", command: "npx", args: ["@zed-industries/codex-acp"] };
 * createHost({ models: acpModels(), defaultModel: ACP_MODEL_NAME, agent });
 * ```
 */
export interface AcpAgentOptions {
  /** Which agent runs the turns: any agent speaking ACP over stdio. */
  kind: "acp";
  /** The agent's command (CMD). */
  command: string;
  /** Its arguments (ARGS…). */
  args?: readonly string[];
  /** The directory the agent works in (`session/new`'s `cwd`; its commands run there). @defaultValue process.cwd() */
  cwd?: string;
  /** The environment the agent starts with. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
}

/**
 * What an {@link AcpTurnDriver} is given besides the agent's options.
 *
 * @example
 * ```ts
 * const options: AcpTurnDriverOptions = { command: "codex-acp", killGraceMs: 2000, agentStopGraceMs: 5000 };
 * ```
 */
export interface AcpTurnDriverOptions extends Omit<AcpAgentOptions, "kind"> {
  /** SIGTERM → SIGKILL of a stopped turn's tool processes. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  /** How long the agent gets to answer the prompt after `session/cancel`. @unit milliseconds @defaultValue 5000 */
  agentStopGraceMs?: number;
  /** How long the agent may take to answer `session/new` or `session/load` (its `initialize` has its own bound). @unit milliseconds @defaultValue 60000 */
  sessionStartTimeoutMs?: number;
  logger?: (line: string) => void;
  /** Where the MSP session's ACP session id is kept across host restarts; without one, only for the driver's life. */
  sessionStore?: AcpSessionStore;
  /**
   * Where the agent's process group, and each process group it starts during a turn, is kept on
   * record while it runs, so a host restarted after a SIGKILL kills what this one left: an ACP
   * agent need not exit when its stdin closes (codex-acp does not).
   */
  toolGroups?: Pick<ToolGroupRegistry, "record" | "release">;
}

/** One permission request of the running turn: answered once, by the session or by a stop. */
interface OpenQuestion {
  answer(response: RequestPermissionResponse): void;
  options: RequestPermissionRequest["options"];
}

/** What the running turn takes from the agent. */
interface RunningTurn {
  onUpdate(n: SessionNotification): void;
  onPermission(request: RequestPermissionRequest, withdrawn: AbortSignal): Promise<RequestPermissionResponse>;
}

/**
 * One session's ACP agent.
 *
 * @example
 * ```ts
 * const driver = new AcpTurnDriver({ command: "codex-acp", killGraceMs: 2000 });
 * createHost({ models: acpModels(), defaultModel: ACP_MODEL_NAME, agent: { kind: "acp", command: "codex-acp" } });
 * ```
 */
export class AcpTurnDriver implements TurnDriver {
  readonly #options: AcpTurnDriverOptions;
  #agent: Promise<{ agent: AcpAgentProcess; sessionId: string }> | undefined;
  #running: RunningTurn | undefined;
  /** The ACP session the driver last ran turns in (loaded again when the agent is restarted). */
  #sessionId: string | undefined;
  /** ACP cannot add input to a running prompt turn. */
  readonly refusesSteering = "the ACP agent takes no input while a prompt turn runs";

  constructor(options: AcpTurnDriverOptions) {
    this.#options = options;
  }

  /** The agent and the session's ACP session, started once (again after the agent died). */
  #ready(): Promise<{ agent: AcpAgentProcess; sessionId: string }> {
    this.#agent ??= (async () => {
      const o = this.#options;
      const agent = await AcpAgentProcess.start({
        command: o.command,
        ...(o.args === undefined ? {} : { args: o.args }),
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        ...(o.env === undefined ? {} : { env: o.env }),
        ...(o.logger === undefined ? {} : { logger: o.logger }),
        // Between turns (and during `session/load`'s replay) nothing is shown, and no one is asked: a question then is cancelled.
        onUpdate: (n) => this.#running?.onUpdate(n),
        onPermission: (request, withdrawn) =>
          this.#running?.onPermission(request, withdrawn) ?? Promise.resolve(permissionResponse(request.options, "cancelled")),
      });
      // Its own group (the agent is spawned detached), on record until no member of it lives: once the
      // connection ends (the agent exited, or closed its stdout, or sent what cannot be read) the group is stopped.
      o.toolGroups?.record(agent.pid);
      void agent.closed.then(() => agent.close()).finally(() => o.toolGroups?.release(agent.pid));
      const ms = o.sessionStartTimeoutMs ?? 60_000;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the ACP agent did not answer session/new or session/load within ${ms} ms`)), ms);
      });
      try {
        return { agent, sessionId: await Promise.race([this.#session(agent, o.cwd ?? process.cwd()), bound]) };
      } catch (error) {
        await agent.close();
        throw error;
      } finally {
        clearTimeout(timer);
      }
    })();
    const started = this.#agent;
    // A start that failed is tried again at the next turn, and so is an agent that died.
    started.then(
      ({ agent }) => void agent.closed.then(() => (this.#agent === started ? (this.#agent = undefined) : undefined)),
      () => (this.#agent === started ? (this.#agent = undefined) : undefined),
    );
    return started;
  }

  /** {@link #ready}, given up at a stop (the start goes on, for the next turn). */
  async #readyWithin(signal: AbortSignal): Promise<{ agent: AcpAgentProcess; sessionId: string }> {
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return await Promise.race([this.#ready(), stopped]);
    } finally {
      if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * The MSP session's ACP session in a new agent: the one it ran before loaded (`session/load`),
   * when there is one and the agent offers it; else a new one (`session/new`), kept in the store.
   */
  async #session(agent: AcpAgentProcess, cwd: string): Promise<string> {
    const { sessionStore: store, logger = () => {} } = this.#options;
    const known = this.#sessionId ?? store?.load();
    if (known !== undefined && !agent.loadsSessions) {
      logger(`acp: the agent offers no session/load; the session's turn starts a new ACP session instead of loading ${known}`);
    } else if (known !== undefined) {
      try {
        // The history it replays arrives before its answer, while no turn runs: absorbed.
        await agent.loadSession(known, cwd);
        this.#sessionId = known;
        return known;
      } catch (error) {
        logger(`acp: session/load of ${known} failed (${(error as Error).message}); the session's turn starts a new ACP session`);
      }
    }
    const { sessionId } = await agent.newSession(cwd);
    this.#sessionId = sessionId;
    try {
      store?.save(sessionId);
    } catch (error) {
      logger(`acp: could not keep the ACP session id in ${store?.path}: ${(error as Error).message}`);
    }
    return sessionId;
  }

  /** Stops the agent (and with it whatever it still runs). */
  async close(): Promise<void> {
    const started = this.#agent;
    this.#agent = undefined;
    if (started === undefined) return;
    try {
      const { agent } = await started;
      await reapAcpTree(agent, this.#grace()).catch(() => {});
      await agent.close();
    } catch {
      // never started: nothing to stop
    }
  }

  async run(turn: TurnContext): Promise<TurnOutcome | void> {
    const { signal } = turn;
    signal.throwIfAborted();
    turn.at("promptAssembly");
    const { agent, sessionId } = await this.#readyWithin(signal);
    signal.throwIfAborted();
    turn.declareUsage();
    const out = new BridgeTurnItems(turn);
    const updates = new AcpTurnUpdates();
    const questions = new Set<OpenQuestion>();
    const deciding = new Set<Promise<void>>();
    // Aborted when the agent ends the turn by itself: its open questions are withdrawn before the items close.
    const agentEnded = new AbortController();
    this.#running = {
      onUpdate: (n) => {
        if (n.sessionId === sessionId) out.take(updates.accept(n.update));
      },
      onPermission: (request, withdrawn) => this.#ask(turn, out, updates, { questions, deciding }, request, AbortSignal.any([withdrawn, agentEnded.signal])),
    };
    const recorded = new Set<number>();
    const watch = new ProcessTreeWatch(agent.pid, 100, ({ pgid, sid }) => {
      // A command the agent runs as a session of its own (a group leader) is kept on record.
      if (pgid !== sid || this.#options.toolGroups === undefined) return;
      this.#options.toolGroups.record(pgid);
      recorded.add(pgid);
    });
    watch.start();
    try {
      turn.at("modelStream");
      const text = turn.input.map((i) => i.text).join("\n");
      const prompt = agent.prompt(sessionId, text);
      prompt.catch(() => {}); // raced below; a rejection before then is not unhandled
      const aborted = new Promise<"aborted">((resolve) => {
        if (signal.aborted) resolve("aborted");
        signal.addEventListener("abort", () => resolve("aborted"), { once: true });
      });
      const outcome = await Promise.race([
        prompt.then(
          (r) => ({ r }),
          (e: unknown) => ({ e: e as Error }),
        ),
        aborted,
      ]);
      if (outcome === "aborted") {
        // From here a tool call the agent ends (its process ended by the stop) ends `cancelled`, with its output.
        out.stopping = true;
        // Every open question is answered `cancelled` before the agent hears the cancel, as ACP requires.
        for (const q of [...questions]) q.answer(permissionResponse(q.options, "cancelled"));
        await Promise.allSettled([...deciding]);
        let stop: Awaited<ReturnType<typeof stopAcpTurn>>;
        try {
          stop = await stopAcpTurn(agent, { sessionId, prompt, watch, ...this.#grace(), ...this.#stopGrace() });
        } catch (error) {
          // A message or reasoning the stop cut is closed with the rest, `interrupted` (never `completed`).
          out.closeOpen("failed", `the stop failed: ${(error as Error).message}`);
          throw new TurnStopFailedError(`the stop could not be confirmed: ${(error as Error).message}`, { cause: error });
        }
        if (stop.agentError !== undefined) {
          // The agent exited (or the prompt failed) before it answered the cancel: it reached no terminal of its own.
          out.closeOpen("failed", `ACP agent: ${stop.agentError.message}`);
          throw new TurnStopFailedError(`the ACP agent ended before it answered session/cancel: ${stop.agentError.message}`, { cause: stop.agentError });
        }
        if (stop.agentStopReason === undefined) {
          out.closeOpen("failed", "the ACP agent did not answer session/cancel");
          // Its prompt may still run: the next turn gets a new agent, not a session shared with it.
          this.#running = undefined;
          await this.close();
          throw new TurnStopFailedError(`the ACP agent did not end its prompt turn within ${this.#options.agentStopGraceMs ?? 5000} ms of session/cancel`);
        }
        out.closeOpen("cancelled", BRIDGE_STOPPED_REASON);
        // A stopped turn counts what ran of it, as the agent's answer says.
        out.take(promptUsage(stop.agentResponse));
        signal.throwIfAborted();
        return;
      }
      // The agent's own end: what it sends from here is absorbed, and a Stop while its leftovers are reaped
      // cannot make the end `cancelled` (an error from here is a TurnStopFailedError: the turn fails).
      this.#running = undefined;
      // A question still open is withdrawn (the agent hears `cancelled`), and closed by the session, before the rest closes.
      agentEnded.abort();
      for (const q of [...questions]) q.answer(permissionResponse(q.options, "cancelled"));
      await Promise.allSettled([...deciding]);
      if ("e" in outcome) {
        // The agent died, or the prompt failed: its tree is reaped before the turn fails.
        const reaped = await reapAcpTree(agent, { watch, ...this.#grace() }).then(
          () => "",
          (error: unknown) => `; ${(error as Error).message}`,
        );
        out.closeOpen("failed", outcome.e.message);
        throw new TurnStopFailedError(`ACP agent: ${outcome.e.message}${reaped}`, { cause: outcome.e });
      }
      out.take(updates.endText());
      try {
        await reapAcpTree(agent, { watch, ...this.#grace() });
      } catch (error) {
        out.closeOpen("failed", (error as Error).message);
        throw new TurnStopFailedError((error as Error).message, { cause: error });
      }
      out.closeOpen("failed", "the ACP agent ended the turn without completing the call");
      // ACP's unstable `PromptResponse.usage`, when the agent sends it, is the turn's own count.
      out.take(promptUsage(outcome.r));
      const end = turnEndOf(outcome.r.stopReason, false);
      if (end.terminal === "failed") throw new TurnStopFailedError(end.reason);
      if (end.terminal === "completed") return end.reason === undefined ? undefined : { reason: end.reason };
      throw new TurnStopFailedError("the ACP agent ended the turn cancelled unasked");
    } finally {
      this.#running = undefined;
      watch.stop();
      releaseGoneGroups(recorded, this.#options.toolGroups);
    }
  }

  /**
   * An ACP permission request, asked through the session (its grants, `tool/approve`) about the
   * toolCall item it names (started here when the request is the first the turn hears of it).
   * Answered once: by the session's decision, or `cancelled` by a stop.
   */
  #ask(
    turn: TurnContext,
    out: BridgeTurnItems,
    updates: AcpTurnUpdates,
    open: { questions: Set<OpenQuestion>; deciding: Set<Promise<void>> },
    request: RequestPermissionRequest,
    withdrawn: AbortSignal,
  ): Promise<RequestPermissionResponse> {
    if (out.stopping || turn.signal.aborted) return Promise.resolve(permissionResponse(request.options, "cancelled"));
    const id = request.toolCall.toolCallId;
    out.take(updates.permissionAsked(request.toolCall));
    const item = out.itemOf(id);
    if (item?.kind !== "toolCall") return Promise.resolve(permissionResponse(request.options, "denied"));
    return new Promise<RequestPermissionResponse>((resolve) => {
      const question: OpenQuestion = {
        options: request.options,
        answer: (response) => {
          if (!open.questions.delete(question)) return;
          resolve(response);
        },
      };
      open.questions.add(question);
      const offers = offersOf(request.options);
      const decided = turn.approve(item, offers.length > 0 ? offers : undefined, withdrawn).then(
        (approved) => {
          if (approved !== undefined) {
            out.replace(id, approved);
            question.answer(permissionResponse(request.options, turn.signal.aborted || withdrawn.aborted ? "cancelled" : "approved"));
            return;
          }
          // The session completed the item (denied, or withdrawn by a stop or by the agent); what the agent says of it later is absorbed.
          out.forget(id);
          updates.forget(id);
          question.answer(permissionResponse(request.options, turn.signal.aborted || withdrawn.aborted ? "cancelled" : "denied"));
        },
        () => question.answer(permissionResponse(request.options, "cancelled")),
      );
      open.deciding.add(decided);
      void decided.finally(() => open.deciding.delete(decided));
    });
  }

  #grace(): { killGraceMs?: number } {
    return this.#options.killGraceMs === undefined ? {} : { killGraceMs: this.#options.killGraceMs };
  }

  #stopGrace(): { agentStopGraceMs?: number } {
    return this.#options.agentStopGraceMs === undefined ? {} : { agentStopGraceMs: this.#options.agentStopGraceMs };
  }
}
