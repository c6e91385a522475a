/** The host core: JSON-RPC dispatch of MSP commands, idempotency, sessions, and per-connection delivery of notifications. */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Commands, PROTOCOL_VERSION, RejectionReasons, isObject, type CommandMethod } from "@muse-code/protocol";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { ApprovalGate } from "./approvalGate.js";
import { cancelCommand, steerCommand, type Handled } from "./commandHandlers.js";
import { planResume, type ResumeHost } from "./resumePlan.js";
import { CommandCache, type CommandOutcome } from "./commandCache.js";
import { descriptorsExhausted, inputParam, optionalString, rejection, stringParam } from "./commandParams.js";
import { DEFAULT_LOCK_STALE_MS, lockDataDir, type DataDirLock } from "../log/dataDirLock.js";
import { Delivery } from "./delivery.js";
import type { Subscriber } from "./subscriber.js";
import { SessionRoutes } from "./sessionRoutes.js";
import { HostOrder } from "../log/hostOrder.js";
import { DEFAULT_MAX_LIVE_SESSIONS, HOST_NAME, HOST_VERSION, type MuseHostOptions } from "./hostOptions.js";
import { readIncoming } from "./incomingMessage.js";
import { CommandError, JsonRpcErrorCodes, errorResponse } from "./jsonRpc.js";
import { defaultMaxOpenLogs, LogFilePool, LogUnavailableError } from "../log/logFilePool.js";
import type { MessageTransport } from "../transport/messageTransport.js";
import { ensureRealDirectory } from "../log/safeFiles.js";
import type { SessionAgent } from "../agent/sessionAgent.js";
import { reserveAnswer } from "./owedAnswer.js";
import { readSessionLog } from "../log/sessionLogReader.js";
import { sessionLogPath } from "../log/sessionLogRecord.js";
import { recoverSessions, type RecoveredSession } from "../log/sessionRecovery.js";
import { SessionRegistry } from "./sessionRegistry.js";
import { createTempDataDir, type TempDataDir } from "../log/tempDataDir.js";
import { openToolGroups, type ToolGroupRegistry } from "../tools/toolGroups.js";
import { AGENT_CAPABILITIES, SCRIPTED_CAPABILITIES } from "./hostCapabilities.js";

/**
 * The live session agent of `sessionId` in `host`, if it is in memory. For the host's own tests:
 * not exported from `@muse-code/host`, so the agent's internals stay out of the public surface.
 */
export function sessionAgentOf(host: MuseHost, sessionId: string): SessionAgent | undefined {
  return liveSession(host, sessionId);
}

let liveSession: (host: MuseHost, sessionId: string) => SessionAgent | undefined;

/**
 * The reference host. Attach transports with {@link MuseHost.connect}, as many as you like; a
 * connection receives the notifications of the sessions it created (`session/create`) or resumed
 * (`session/resume`), and no others, so two connections on one session (two browser tabs) see the
 * same stream. On construction it locks the data dir (one host per dir, see
 * {@link MuseHostOptions.dataDir}) and recovers it (turns a crash left open are closed as
 * `failed: host restarted`), streaming each session log.
 *
 * @example
 * ```ts
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * host.connect(createStdioTransport(process.stdin, process.stdout));
 * process.on("SIGTERM", () => void host.shutdown().then(() => process.exit(0)));
 * ```
 */
export class MuseHost {
  /** The data directory holding `sessions/<sessionId>.jsonl`. */
  readonly dataDir: string;
  /** What startup recovery closed. */
  readonly recovered: readonly RecoveredSession[];
  readonly #options: MuseHostOptions;
  readonly #cache: CommandCache;
  /** The loaded sessions (see {@link MuseHostOptions.maxLiveSessions}). */
  readonly #sessions: SessionRegistry;
  /** The peers, and what each is sent. */
  readonly #delivery: Delivery;
  /** Who hears each session, who answers its questions, and the subagent tree: one table, read by delivery and the approval gate. */
  readonly #routes: SessionRoutes<Subscriber>;
  /** The host's `tool/approve` requests: sent to a subscriber, answered by id. */
  readonly #approvals: ApprovalGate<Subscriber>;
  /** What a resume plan reads of this host. */
  readonly #resumeHost: ResumeHost = {
    load: (sessionId) => this.#sessions.load(sessionId),
    live: (sessionId) => this.#sessions.live(sessionId),
    descendantsOf: (sessionId) => this.#delivery.descendantsOf(sessionId),
    parentOf: (child) => this.#delivery.parentOf(child),
    log: (line) => this.#log(line),
  };
  #shuttingDown: Promise<void> | undefined;
  #failure: Error | undefined;
  /** The temp data dir this host created (no `dataDir` given), removed after shutdown. */
  readonly #tempDataDir: TempDataDir | undefined;
  /** The lock on a given `dataDir` (a temp dir is this process's alone: it takes none). */
  readonly #lock: DataDirLock | undefined;
  /** Every session log's descriptor goes through this bounded cache. */
  readonly #logFiles: LogFilePool;
  /** Tool process groups on record in the data dir (killed at the next start if this host is killed). */
  readonly #toolGroups: ToolGroupRegistry;
  /** The host order: the `h` stamped on every notification record, above every one in the data dir. */
  readonly #order = new HostOrder();

  constructor(options: MuseHostOptions) {
    if (!options.models.has(options.defaultModel)) throw new Error(`default model ${options.defaultModel} is not loaded`);
    const maxLive = options.maxLiveSessions ?? DEFAULT_MAX_LIVE_SESSIONS;
    if (!(Number.isInteger(maxLive) && maxLive >= 1)) throw new RangeError(`maxLiveSessions must be an integer of at least 1, got ${maxLive}`);
    this.#options = options;
    this.#cache = new CommandCache(options.commandCacheCapacity);
    if (options.dataDir === undefined) {
      this.#tempDataDir = createTempDataDir();
      this.dataDir = this.#tempDataDir.path;
    } else {
      this.dataDir = options.dataDir;
      mkdirSync(this.dataDir, { recursive: true });
      // One owner per data dir, before anything in it is read or written (throws DataDirInUseError).
      this.#lock = lockDataDir(this.dataDir, {
        staleMs: options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
        onCompromised: (error) => this.#fatal(error, "the data-dir lock"),
        logger: (line) => this.#log(line),
      });
    }
    this.#routes = new SessionRoutes<Subscriber>({
      ...(options.maxSubagentLinks === undefined ? {} : { maxLinks: options.maxSubagentLinks }),
      ...(options.maxSessionsPerConnection === undefined ? {} : { maxSessionsPerConnection: options.maxSessionsPerConnection }),
      // Read once sessions exist: a link of a child with a running turn is never forgotten.
      busy: (sessionId) => this.#sessions?.live(sessionId)?.busy === true,
    });
    this.#approvals = new ApprovalGate({ logger: (line) => this.#log(line), routes: this.#routes });
    try {
      const lock = this.#lock;
      this.#logFiles = new LogFilePool({
        capacity: options.maxOpenLogs ?? defaultMaxOpenLogs(),
        ...(lock === undefined ? {} : { guard: () => lock.assertHeld() }),
      });
      // A sessions/ that is a symlink (or not a directory) is refused: logs never leave the data dir.
      ensureRealDirectory(join(this.dataDir, "sessions"));
      // Only once the lock is ours: kills the groups a killed host left running, before recovery closes their turns.
      this.#toolGroups = openToolGroups(this.dataDir, options.logger);
      this.recovered = recoverSessions(this.dataDir, {
        pool: this.#logFiles,
        logger: (line) => this.#log(line),
        // The subagent links in the logs: who resumes a session hears the tree below it.
        onLink: (parent, child) => this.#routes.link(parent, child),
        order: this.#order,
      });
    } catch (error) {
      this.#lock?.release();
      this.#tempDataDir?.remove();
      throw error;
    }
    this.#sessions = new SessionRegistry({
      dataDir: this.dataDir,
      host: options,
      maxLiveSessions: maxLive,
      pool: this.#logFiles,
      toolGroups: this.#toolGroups,
      publish: (method, params, json) => this.#delivery.publish(method, params, json),
      ask: (question, signal) => this.#approvals.ask(question, signal),
      fatal: (error, what) => this.#fatal(error, what),
      log: (line) => this.#log(line),
      hostOrder: this.#order,
      // Who hears the parent hears the child, and the parent's speakers are asked the child's questions.
      link: (parent, child) => this.#delivery.linkChild(parent, child),
    });
    this.#delivery = new Delivery(
      {
        read: (sessionId, from, upTo) =>
          readSessionLog(sessionLogPath(this.dataDir, sessionId), { onProblem: (line) => this.#log(line), pool: this.#logFiles, from, upTo }),
        lastCursor: (sessionId) => this.#sessions.loadedOrNone(sessionId)?.lastCursor,
        terminal: (sessionId, turnId) => {
          const state = this.#sessions.loadedOrNone(sessionId)?.turnState(turnId);
          return state?.state === "terminal" ? state.params : undefined;
        },
        log: (line) => this.#log(line),
      },
      { routes: this.#routes },
    );
    for (const r of this.recovered) {
      this.#log(`recovered session ${r.sessionId}: closed ${r.closedTurns.length} turn(s) as "host restarted"`);
    }
  }

  /** The fingerprint in `host/info`: `sha256:` and the hex digest of name, version, protocol version and sorted model names. */
  get fingerprint(): string {
    const models = [...this.#options.models.keys()].sort();
    return `sha256:${createHash("sha256")
      .update([HOST_NAME, HOST_VERSION, PROTOCOL_VERSION, ...models].join("\n"))
      .digest("hex")}`;
  }

  static {
    liveSession = (host, sessionId) => host.#sessions.live(sessionId);
  }

  /**
   * Serves one transport: reads its messages, answers them, and sends it the notifications of the
   * sessions it created or resumed on it, until {@link MuseHost.disconnect} or shutdown. The end
   * of its input does not detach it: with stdio, stdin EOF starts a shutdown whose cancelled
   * terminals must still reach stdout.
   */
  connect(transport: MessageTransport): void {
    const subscriber = this.#delivery.attach(transport);
    transport.onMessage((text) => this.#onText(text, subscriber));
    // Its open questions go to the session's next open connection, or wait for a session/resume.
    transport.onClose(() => this.#approvals.detach(subscriber));
  }

  /**
   * Stops sending to `transport` (it hears no session any more) and closes it, e.g. a WebSocket
   * that went away. Its sessions go on, and a `session/resume` on another connection picks them up.
   */
  disconnect(transport: MessageTransport): void {
    for (const subscriber of this.#delivery.subscribersOf(transport)) this.#approvals.detach(subscriber);
    this.#delivery.detach(transport);
    transport.close();
  }

  /** How many transports are connected. */
  get connectionCount(): number {
    return this.#delivery.peerCount;
  }

  /**
   * Handles one incoming JSON-RPC text and writes the answer (and any replay) through `reply`.
   * Exposed for in-process use and tests. Unlike a {@link MuseHost.connect}ed transport, `reply`
   * hears no live notifications (only answers, replays, and a terminal an `already_terminal`
   * rejection needs), so nothing keeps a reference to it.
   */
  handleText(text: string, reply: (message: unknown) => void): void {
    this.#onText(text, this.#delivery.replyOnly(reply));
  }

  /** The session-log error that made the host shut down, if one did. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /**
   * Shuts down: new commands are rejected with `shutting_down`, every session is cancelled with
   * cause `disposed`, its tools are drained, and its log closed. A temp data dir the host created
   * itself (no `dataDir` option) is removed last. Idempotent.
   */
  shutdown(): Promise<void> {
    this.#shuttingDown ??= (async () => {
      await Promise.all(this.#sessions.loaded().map((s) => s.dispose()));
      // A peer behind on a session is fed the rest of it (its terminals too) before its transport closes.
      await this.#delivery.fed();
      for (const transport of this.#delivery.transports()) transport.close();
      this.#lock?.release();
      this.#tempDataDir?.remove();
    })();
    return this.#shuttingDown;
  }

  #log(line: string): void {
    this.#options.logger?.(line);
  }

  /**
   * A session log could not be written, or the data-dir lock was lost: log it, shut down
   * (cancel, drain), and tell the CLI. `what` names the log, e.g. `session log of <id>`.
   */
  #fatal(error: Error, what: string): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    this.#log(`${what} failed: ${error.message}; shutting down`);
    // Deferred: the failing write may be deep inside a turn's step or a command.
    queueMicrotask(() => {
      void this.shutdown();
      this.#options.onFatal?.(error);
    });
  }

  #onText(text: string, subscriber: Subscriber): void {
    const incoming = readIncoming(text);
    if (incoming.kind === "invalid") return subscriber.send(incoming.answer);
    if (incoming.kind === "notification") return; // a client notification: MSP defines none, ignore it
    const { id } = incoming;
    // A response to a request this host sent (tool/approve): routed by id, never answered.
    if (incoming.kind === "response") {
      if (incoming.loose) this.#log(`a response without jsonrpc "2.0" to ${JSON.stringify(id)}: read anyway`);
      this.#approvals.answer(subscriber, incoming.message);
      return;
    }
    const { method, params, commandId: given } = incoming;
    const commandId = given ?? uuidv7();
    if (given !== undefined) {
      const seen = this.#cache.lookup(given);
      if (seen?.method !== undefined && seen.method !== method) {
        subscriber.send(errorResponse(id, JsonRpcErrorCodes.invalidParams, `commandId ${given} was already used for ${seen.method}`));
        return;
      }
      if (seen !== undefined) {
        this.#delivery.deliver(subscriber, id, seen);
        this.#speaksFor(subscriber, method, params, seen);
        return;
      }
    }
    let outcome: CommandOutcome;
    let after: Handled["after"];
    // What this connection had been sent of the session when the resume arrived: the cursor the
    // client chose knows no more than that.
    const sentBefore = method === Commands.sessionResume ? (subscriber.cursors.get(String(params["sessionId"])) ?? 0) : undefined;
    try {
      this.#admit(subscriber, method, params, commandId);
      const handled = this.#execute(method as CommandMethod, params, commandId);
      outcome = { kind: "result", method, result: { commandId, status: "accepted", ...handled.result } };
      if (handled.replay !== undefined) outcome.replay = handled.replay;
      after = handled.after;
    } catch (thrown) {
      // No descriptor free (EMFILE/ENFILE): this command fails, retryably; the host goes on.
      const error = thrown instanceof LogUnavailableError ? descriptorsExhausted(thrown) : thrown;
      if (error instanceof CommandError) {
        outcome = refusalOutcome(error, method, params);
      } else {
        this.#log(`internal error in ${method}: ${(error as Error).stack ?? String(error)}`);
        outcome = { kind: "error", error: { code: JsonRpcErrorCodes.internalError, message: `Internal error: ${(error as Error).message}` } };
      }
    }
    const finish = (answer: CommandOutcome) => {
      // Only a client-chosen commandId can be retried; an internal error is not an answer to repeat.
      const internal = answer.kind === "error" && answer.error.code === JsonRpcErrorCodes.internalError;
      if (given !== undefined && !internal) this.#cache.remember(given, answer);
      this.#delivery.deliver(subscriber, id, answer, sentBefore);
      this.#speaksFor(subscriber, method, params, answer);
    };
    if (after === undefined) return finish(outcome);
    // Answered once its records are durable (a retry meanwhile runs again: nothing is cached yet).
    // Meanwhile the answer counts toward the connection's send bound (owed, not yet queued).
    const accepted = outcome;
    const pay = reserveAnswer(subscriber.flow, id, accepted.kind === "result" ? accepted.result : undefined);
    after((error) => {
      pay();
      if (error === undefined) return finish(accepted);
      if (error instanceof CommandError) return finish(refusalOutcome(error, method, params)); // refused once it could be decided (turn/steer)
      finish({ kind: "error", error: { code: JsonRpcErrorCodes.internalError, message: `Internal error: session log failed: ${error.message}` } });
    });
  }

  /**
   * After a command's answer (and any replay) went out: a connection that created or resumed a
   * session is where its questions go, and a resume asks the session's open questions again, after
   * the replay that shows them pending. (A `handleText` reply hears no notifications: never asked.)
   */
  #speaksFor(subscriber: Subscriber, method: string, params: Record<string, unknown>, outcome: CommandOutcome): void {
    if (outcome.kind !== "result" || (method !== Commands.sessionCreate && method !== Commands.sessionResume)) return;
    const sessionId = method === Commands.sessionCreate && isObject(outcome.result) ? outcome.result["sessionId"] : params["sessionId"];
    if (typeof sessionId !== "string" || !this.#delivery.isPeer(subscriber)) return;
    // The tree below it too: its child sessions' questions go to this connection.
    this.#approvals.attach(sessionId, subscriber, { reask: method === Commands.sessionResume });
  }

  /** The per-connection bound: a connection at it is refused another session of its own (`too_many_sessions`). */
  #admit(subscriber: Subscriber, method: string, params: Record<string, unknown>, commandId: string): void {
    if (method !== Commands.sessionCreate && method !== Commands.sessionResume) return;
    if (!subscriber.listens || this.#shuttingDown !== undefined) return;
    const sessionId = method === Commands.sessionResume && typeof params["sessionId"] === "string" ? params["sessionId"] : undefined;
    if (this.#routes.admits(subscriber, sessionId)) return;
    const limit = this.#routes.maxSessionsPerConnection;
    throw rejection(commandId, RejectionReasons.tooManySessions, `this connection already hears ${limit} sessions of its own; open another connection`, {
      limit,
    });
  }

  #execute(method: CommandMethod, params: Record<string, unknown>, commandId: string): Handled {
    if (this.#shuttingDown !== undefined && method !== Commands.hostInfo) {
      throw rejection(commandId, RejectionReasons.shuttingDown, "the host is shutting down");
    }
    switch (method) {
      case Commands.hostInfo:
        return {
          result: {
            name: HOST_NAME,
            version: HOST_VERSION,
            protocolVersion: PROTOCOL_VERSION,
            fingerprint: this.fingerprint,
            capabilities: this.#options.agent === undefined ? SCRIPTED_CAPABILITIES : AGENT_CAPABILITIES[this.#options.agent.kind],
            models: [...this.#options.models.keys()].sort().map((id) => ({ id })),
          },
        };
      case Commands.sessionCreate:
        return this.#sessionCreate(params, commandId);
      case Commands.sessionResume:
        return planResume(this.#requireSession(params, commandId), params, commandId, this.#resumeHost);
      case Commands.sessionSetModel: {
        const session = this.#requireSession(params, commandId);
        const model = this.#requireModel(stringParam(params, "model"), commandId);
        const previousModel = session.setModel(model);
        return { result: { model, previousModel } };
      }
      case Commands.turnStart: {
        const session = this.#requireSession(params, commandId);
        const input = inputParam(params);
        // A retry of an accepted turn/start (after a restart or a cache eviction) answers the
        // original acceptance and starts nothing.
        const disposition = session.acceptedTurn(commandId) ?? session.startTurn(commandId, input);
        return { result: { turnId: commandId, startedNewTurn: true, disposition } };
      }
      case Commands.turnCancel:
        return cancelCommand(this.#requireSession(params, commandId), params, commandId);
      case Commands.turnSteer:
        return steerCommand(this.#requireSession(params, commandId), params, commandId);
    }
  }

  #requireModel(model: string, commandId: string): string {
    if (!this.#options.models.has(model)) {
      throw rejection(commandId, RejectionReasons.unknownModel, `unknown model ${model}`, { model, available: [...this.#options.models.keys()].sort() });
    }
    return model;
  }

  #sessionCreate(params: Record<string, unknown>, commandId: string): Handled {
    const model = this.#requireModel(optionalString(params, "model") ?? this.#options.defaultModel, commandId);
    const sessionId = uuidv7();
    this.#sessions.create(sessionId, model);
    return { result: { sessionId, model } };
  }

  #requireSession(params: Record<string, unknown>, commandId: string): SessionAgent {
    const sessionId = stringParam(params, "sessionId");
    const session = this.#sessions.load(sessionId);
    if (session === undefined) throw rejection(commandId, RejectionReasons.unknownSession, `unknown session ${sessionId}`, { sessionId });
    return session;
  }
}

/** The answer to a refused command: its JSON-RPC error, and for `already_terminal` the terminal that must precede it. */
function refusalOutcome(error: CommandError, method: string, params: Record<string, unknown>): CommandOutcome {
  const e = error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
  const outcome: CommandOutcome = { kind: "error", method, error: e };
  const data = error.data;
  if (isObject(data) && data["reason"] === RejectionReasons.alreadyTerminal && typeof params["sessionId"] === "string") {
    outcome.terminalOf = { sessionId: params["sessionId"], turnId: String(data["turnId"]) };
  }
  return outcome;
}

/**
 * Creates a {@link MuseHost}.
 *
 * @example
 * ```ts
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * ```
 */
export function createHost(options: MuseHostOptions): MuseHost {
  return new MuseHost(options);
}
