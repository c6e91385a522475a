/** The session registry: the host's loaded session agents, bounded, each loaded again from its log when named. */
import type { NotificationMethod, ToolApproveParams } from "@muse-code/protocol";
import type { ApprovalAnswer } from "./approvalGate.js";
import type { MuseHostOptions } from "./hostOptions.js";
import { LogUnavailableError, type LogFilePool } from "../log/logFilePool.js";
import { isDescriptorExhaustion, UnsafeFileError } from "../log/safeFiles.js";
import { SessionAgent } from "../agent/sessionAgent.js";
import { SessionLog } from "../log/sessionLog.js";
import { readSessionLog } from "../log/sessionLogReader.js";
import { sessionLogPath } from "../log/sessionLogRecord.js";
import type { HostOrder } from "../log/hostOrder.js";
import { summarizeSessionLog, type SessionLogSummary } from "../log/sessionLogSummary.js";
import type { ShellOptions } from "../tools/shellTool.js";
import type { ToolGroupRegistry } from "../tools/toolGroups.js";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { AcpTurnDriver } from "../bridge/acpTurnDriver.js";
import { CodexTurnDriver } from "../bridge/codexTurnDriver.js";
import { defaultCodexHome } from "../bridge/codexModels.js";
import type { TurnDriver } from "../agent/turnDriver.js";
import { CodexThreadStore, codexThreadPath } from "../bridge/codex/codexThreadStore.js";
import { AcpSessionStore, acpSessionPath } from "../bridge/acp/acpSessionStore.js";
import { DEFAULT_MAX_SUBAGENT_DEPTH, DEFAULT_MAX_SUBAGENTS_PER_TURN, DelegationRefused, type ChildTurn, type DelegationRequest } from "../agent/delegation.js";

/** What the registry needs of its host. */
export interface SessionRegistryOptions {
  dataDir: string;
  /** The host's options: models, default model, tool limits. */
  host: MuseHostOptions;
  /** @unit sessions: loaded at once (see {@link MuseHostOptions.maxLiveSessions}) */
  maxLiveSessions: number;
  /** Every session log's descriptor goes through this bounded cache. */
  pool: LogFilePool;
  toolGroups: ToolGroupRegistry;
  /** Sends a session's (logged) notification to the peers that hear it. */
  publish: (method: NotificationMethod, params: Record<string, unknown>, json?: string) => void;
  /** Asks a client about a tool call. */
  ask: (params: ToolApproveParams, signal: AbortSignal) => Promise<ApprovalAnswer>;
  /** A session log could not be written: the host shuts down. `what` names the log. */
  fatal: (error: Error, what: string) => void;
  /** Diagnostics sink. */
  log: (line: string) => void;
  /** Child session `child` was created below `parent`: whoever hears `parent` hears it from now on. */
  link?: (parent: string, child: string) => void;
  /** The host order stamped on every notification record. */
  hostOrder?: HostOrder;
}

/** The loaded sessions, least recently named first; beyond the bound, idle ones are unloaded. */
export class SessionRegistry {
  readonly #options: SessionRegistryOptions;
  /** The loaded sessions, least recently named first (see {@link MuseHostOptions.maxLiveSessions}). */
  readonly #sessions = new Map<string, SessionAgent>();

  constructor(options: SessionRegistryOptions) {
    this.#options = options;
  }

  /** The session agent of `sessionId` if it is in memory (not loaded from its log, not marked as named). */
  live(sessionId: string): SessionAgent | undefined {
    return this.#sessions.get(sessionId);
  }

  /** Every loaded session agent. */
  loaded(): SessionAgent[] {
    return [...this.#sessions.values()];
  }

  /**
   * Creates session `sessionId` on model `model`: a new log (never an existing file) with its
   * `session` record, and its agent. A write failure is fatal to the host; no free descriptor
   * ({@link LogUnavailableError}) fails only this.
   */
  create(sessionId: string, model: string, driver?: TurnDriver): void {
    const { pool, fatal } = this.#options;
    let log: SessionLog;
    try {
      // A new file only (O_EXCL, O_NOFOLLOW): nothing planted under a fresh id is ever written to.
      log = SessionLog.open(sessionLogPath(this.#options.dataDir, sessionId), { pool, mode: "create" });
    } catch (error) {
      if (error instanceof LogUnavailableError) throw error; // no descriptor free: this command fails, nothing else
      fatal(error instanceof Error ? error : new Error(String(error)), `session log of ${sessionId}`);
      throw error;
    }
    try {
      log.append({ type: "session", at: Date.now(), sessionId, model });
    } catch (error) {
      log.close();
      fatal(error instanceof Error ? error : new Error(String(error)), `session log of ${sessionId}`);
      throw error;
    }
    this.#newAgent(sessionId, model, log, {}, driver);
  }

  #newAgent(
    sessionId: string,
    modelName: string,
    log: SessionLog,
    seed: Partial<
      Pick<ConstructorParameters<typeof SessionAgent>[0], "lastCursor" | "startedTurns" | "terminals" | "accepted" | "grants" | "steers" | "carriedSteers">
    > = {},
    driver?: TurnDriver,
  ): SessionAgent {
    const { host } = this.#options;
    const shell: ShellOptions = this.#options.toolGroups.shellHooks();
    if (host.killGraceMs !== undefined) shell.killGraceMs = host.killGraceMs;
    if (host.outputCapBytes !== undefined) shell.outputCapBytes = host.outputCapBytes;
    const agent = new SessionAgent({
      sessionId,
      log,
      models: host.models,
      modelName,
      publish: this.#options.publish,
      onLogFailure: (error) => this.#options.fatal(error, `session log of ${sessionId}`),
      ask: this.#options.ask,
      delegate: (request) => this.delegate(request),
      ...(this.#options.hostOrder === undefined ? {} : { hostOrder: this.#options.hostOrder }),
      shell,
      ...(host.turnTimeLimitMs === undefined ? {} : { turnTimeLimitMs: host.turnTimeLimitMs }),
      ...(driver !== undefined ? { driver } : host.agent === undefined ? {} : { driver: this.#agentDriver(host.agent, sessionId) }),
      ...seed,
    });
    this.#sessions.set(sessionId, agent);
    this.#unloadIdle(agent);
    return agent;
  }

  /** A session's own driver for the host's agent: a Codex app-server and thread, or an ACP agent and session, of its own (the thread or session id kept under the data dir). */
  #agentDriver(agent: NonNullable<MuseHostOptions["agent"]>, sessionId: string): CodexTurnDriver | AcpTurnDriver {
    const { host } = this.#options;
    if (agent.kind === "acp") {
      const { kind: _acp, ...acp } = agent;
      return new AcpTurnDriver({
        ...acp,
        ...(host.killGraceMs === undefined ? {} : { killGraceMs: host.killGraceMs }),
        logger: this.#options.log,
        sessionStore: new AcpSessionStore(acpSessionPath(this.#options.dataDir, sessionId), this.#options.log),
        toolGroups: this.#options.toolGroups,
      });
    }
    const { kind: _kind, ...codex } = agent;
    return new CodexTurnDriver({
      ...codex,
      codexHome: agent.codexHome ?? defaultCodexHome(agent.env ?? process.env),
      ...(host.killGraceMs === undefined ? {} : { killGraceMs: host.killGraceMs }),
      logger: this.#options.log,
      threadStore: new CodexThreadStore(codexThreadPath(this.#options.dataDir, sessionId), this.#options.log),
      toolGroups: this.#options.toolGroups,
      // Codex's subagent threads become child sessions of this one.
      sessionId,
      delegate: (request) => this.delegate(request),
    });
  }

  /**
   * Unloads the least recently named sessions beyond {@link MuseHostOptions.maxLiveSessions} that
   * are {@link SessionAgent.unloadable} (never `keep`, the one being loaded): their logs close, and
   * {@link SessionRegistry.load} loads them again from the log when a command names them.
   */
  #unloadIdle(keep: SessionAgent): void {
    const max = this.#options.maxLiveSessions;
    if (this.#sessions.size <= max) return;
    for (const [sessionId, agent] of this.#sessions) {
      if (this.#sessions.size <= max) return;
      if (agent === keep || !agent.unloadable) continue;
      this.#sessions.delete(sessionId);
      agent.unload();
    }
  }

  /** {@link SessionRegistry.load} for an answer given again from the cache (its session may be unloaded since): `undefined`, logged, when it cannot be loaded. */
  loadedOrNone(sessionId: string): SessionAgent | undefined {
    try {
      return this.load(sessionId);
    } catch (error) {
      this.#options.log(`session ${sessionId}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /**
   * Creates the child session of a `task` call on the parent's model, linked below the
   * parent session, its turn not started yet. Throws {@link DelegationRefused} past a bound.
   */
  delegate(request: DelegationRequest): ChildTurn {
    const { host } = this.#options;
    const maxDepth = host.maxSubagentDepth ?? DEFAULT_MAX_SUBAGENT_DEPTH;
    const maxFanOut = host.maxSubagentsPerTurn ?? DEFAULT_MAX_SUBAGENTS_PER_TURN;
    if (request.depth > maxDepth) throw new DelegationRefused(`subagent depth limit (${maxDepth})`);
    if (request.running >= maxFanOut) throw new DelegationRefused(`subagent fan-out limit (${maxFanOut})`);
    // A bridged child (an agent's own subagent) plays no script: its driver runs the turn.
    const script = request.driver === undefined ? host.models.get(request.modelName)?.agents?.get(request.agent) : { steps: [] };
    if (script === undefined) throw new DelegationRefused(`unknown agent ${request.agent}`);
    const sessionId = uuidv7();
    this.create(sessionId, request.modelName, request.driver);
    const agent = this.#sessions.get(sessionId);
    if (agent === undefined) throw new Error(`child session ${sessionId} was not loaded`);
    this.#options.link?.(request.parent.sessionId, sessionId);
    const turnId = uuidv7();
    let ended = false;
    return {
      sessionId,
      turnId,
      start: () => {
        agent.startChildTurn(turnId, [{ type: "text", text: request.prompt }], { parent: { ...request.parent }, depth: request.depth, script });
      },
      cancel: (cause) => {
        // Not waited for: the records join the log's group commit, so a parent's cancel signals
        // every child's tools at once instead of one fdatasync after another (bench row t).
        if (!ended) agent.cancelTurn(turnId, cause, false, () => {});
      },
      ended: async () => {
        const outcome = await agent.whenTurnEnds(turnId);
        ended = true;
        return outcome;
      },
    };
  }

  /** The session in memory, or loaded from its log; `undefined` when neither exists. */
  load(sessionId: string): SessionAgent | undefined {
    const live = this.#sessions.get(sessionId);
    if (live !== undefined) {
      // Named now: the most recently used (the last to be unloaded).
      this.#sessions.delete(sessionId);
      this.#sessions.set(sessionId, live);
      return live;
    }
    if (!/^[0-9a-fA-F-]{1,64}$/.test(sessionId)) return undefined; // never a path
    const { pool, host } = this.#options;
    const path = sessionLogPath(this.#options.dataDir, sessionId);
    let summary: SessionLogSummary | undefined;
    let log: SessionLog;
    try {
      // Streamed, and only from a regular file (a planted symlink, FIFO or device is no session).
      summary = summarizeSessionLog(readSessionLog(path, { onProblem: (line) => this.#options.log(line), pool }));
      // The log must be this very session's (a case-insensitive file system would open another spelling).
      if (summary === undefined || summary.sessionId !== sessionId) return undefined;
      log = SessionLog.open(path, { pool, mode: "existing" });
    } catch (error) {
      if (error instanceof UnsafeFileError) {
        this.#options.log(`session ${sessionId}: ${error.message}`);
        return undefined;
      }
      if (isDescriptorExhaustion(error)) throw new LogUnavailableError(path, error);
      throw error;
    }
    const model = host.models.has(summary.model) ? summary.model : host.defaultModel;
    return this.#newAgent(sessionId, model, log, {
      lastCursor: summary.lastCursor,
      startedTurns: summary.startedTurns,
      terminals: summary.terminals,
      accepted: summary.accepted,
      grants: summary.grants,
      steers: summary.steers,
      carriedSteers: summary.carriedSteers,
    });
  }
}
