/** The host core: JSON-RPC dispatch of MSP commands, idempotency, sessions, and per-connection delivery of notifications. */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { v7 as uuidv7 } from "uuid";
import {
  COMMAND_REJECTED_CODE,
  Commands,
  PROTOCOL_VERSION,
  RejectionReasons,
  isObject,
  type CommandMethod,
  type NotificationMethod,
  type RejectionReason,
  type TurnInput,
} from "../protocol/index.js";
import { ApprovalGate } from "./approvalGate.js";
import { CommandCache, type CommandOutcome, type ReplayRange } from "./commandCache.js";
import {
  CommandError,
  JsonRpcErrorCodes,
  errorResponse,
  isJsonRpcId,
  notificationMessage,
  withJson,
  type JsonRpcId,
  type JsonRpcNotification,
} from "./jsonRpc.js";
import type { MessageTransport } from "./messageTransport.js";
import type { ScriptedModel } from "./scriptedModel.js";
import { SessionAgent } from "./sessionAgent.js";
import { DEFAULT_LOCK_STALE_MS, lockDataDir, type DataDirLock } from "./dataDirLock.js";
import { ensureRealDirectory, isDescriptorExhaustion, UnsafeFileError } from "./safeFiles.js";
import {
  defaultMaxOpenLogs,
  LogFilePool,
  LogUnavailableError,
  readSessionLog,
  SessionLog,
  sessionLogPath,
  summarizeSessionLog,
  type SessionLogSummary,
} from "./sessionLog.js";
import { recoverSessions, type RecoveredSession } from "./sessionRecovery.js";
import type { ShellOptions } from "./shellTool.js";
import { createTempDataDir, type TempDataDir } from "./tempDataDir.js";
import { openToolGroups, type ToolGroupRegistry } from "./toolGroups.js";
import { formatViewCursor, parseViewCursor } from "../protocol/cursor.js";

/**
 * The host's name in `host/info`.
 *
 * @example
 * ```ts
 * const info = await client.connection.command("host/info", {});
 * if (info.name === HOST_NAME) console.log("talking to the reference host");
 * ```
 */
export const HOST_NAME = "muse-host";
/**
 * The host's version in `host/info` (kept in step with package.json by hand).
 *
 * @example
 * ```ts
 * console.log(`muse-host ${HOST_VERSION}`);
 * ```
 */
export const HOST_VERSION = "0.1.0";

/**
 * The default of {@link MuseHostOptions.maxLiveSessions}: a loaded session holds its cursor and its
 * turns' terminals and acceptances, about 4.5 KiB for one that ran nothing and more for each turn.
 * @unit sessions
 *
 * @example
 * ```ts
 * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
 * createHost({ models, defaultModel: "default", maxLiveSessions: DEFAULT_MAX_LIVE_SESSIONS * 2 });
 * ```
 */
export const DEFAULT_MAX_LIVE_SESSIONS = 1000;

/**
 * Options of {@link createHost}.
 *
 * @example
 * ```ts
 * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
 * const options: MuseHostOptions = { models, defaultModel: "default", dataDir: "/var/muse", killGraceMs: 500 };
 * ```
 */
export interface MuseHostOptions {
  /** The loaded models, by name. At least one. */
  models: ReadonlyMap<string, ScriptedModel>;
  /** The model of a `session/create` without `model`. Must be in `models`. */
  defaultModel: string;
  /**
   * Where session logs live (`<dataDir>/sessions`). Default: a fresh temp dir
   * (`<os tmpdir>/muse-host-XXXXXX`) that the host removes when its shutdown ends, or when the
   * process exits, whichever comes first. A given dir has one host at a time: construction takes
   * `<dataDir>/host.lock` and throws an error with `code: "DATA_DIR_IN_USE"`, whose message names
   * the holder, while another live host holds it; shutdown releases it. `<dataDir>/sessions` must
   * be a real directory (a symlink there throws).
   */
  dataDir?: string;
  /** @unit milliseconds between SIGTERM and SIGKILL of a cancelled shell tool (default 2000) */
  killGraceMs?: number;
  /** @unit bytes of a tool call's visible output (default 65536) */
  outputCapBytes?: number;
  /** How many commandIds are remembered for idempotency (default 10 000). */
  commandCacheCapacity?: number;
  /**
   * How many session-log file descriptors stay open while their sessions are idle; the least
   * recently used is closed first and reopened on demand. Logs of sessions with a running or
   * queued turn stay open on top of these.
   *
   * @unit file descriptors
   * @defaultValue 128, or a quarter of the process's open-files limit (`ulimit -n`) when that is lower
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", dataDir: "/var/muse", maxOpenLogs: 64 });
   * ```
   */
  maxOpenLogs?: number;
  /**
   * How many sessions stay loaded in memory. Beyond it, the least recently named sessions with
   * nothing running or queued (and everything logged durable and sent) are unloaded, and loaded
   * again from their logs when a command names them; sessions with a turn running or queued stay
   * loaded on top of these. At least 1.
   *
   * @unit sessions
   * @defaultValue {@link DEFAULT_MAX_LIVE_SESSIONS}
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", dataDir: "/var/muse", maxLiveSessions: 200 });
   * ```
   */
  maxLiveSessions?: number;
  /**
   * How long the data-dir lock of a host on another machine (a shared file system) may go
   * unrefreshed before this host takes it over; the holder refreshes it every half of this. A
   * holder on this machine is checked by pid and process start time instead, so a stalled one is
   * never taken over and a dead one is taken over at once. At least 2000.
   *
   * @unit milliseconds
   * @defaultValue 10000
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", dataDir: "/shared/muse", lockStaleMs: 30_000 });
   * ```
   */
  lockStaleMs?: number;
  /** Diagnostics sink (the CLI writes to stderr). */
  logger?: (line: string) => void;
  /**
   * Called once when a session-log write fails. The host has already begun shutting down (every
   * session cancelled with cause `disposed`, tools drained); the CLI exits non-zero after it.
   */
  onFatal?: (error: Error) => void;
}

interface Handled {
  result: Record<string, unknown>;
  /** Notifications re-sent right after the response, on the same channel (session/resume). */
  replay?: ReplayRange;
  /** The answer goes out (and is remembered) only once this calls back: its records are durable (turn/cancel). */
  after?: (done: (error?: Error) => void) => void;
}

/**
 * One reply channel, the turns whose terminal it has been sent, and the sessions whose
 * notifications it receives (those it created or resumed).
 */
interface Channel {
  send: (message: unknown) => void;
  /**
   * Sends a live notification of `sessionId` whose cursor number is `n` (`params` are its wire
   * params): what `send` does, without reading the message again.
   */
  sendNotification: (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => void;
  terminalsSent: Set<string>;
  /** The sessions this channel hears; `undefined` for a `handleText` reply, which hears only its answers and replays. */
  sessions: Set<string> | undefined;
  /** Set by `disconnect`: a closed channel is never subscribed again. */
  closed: boolean;
  /**
   * The highest cursor number sent on this channel, per session (a resume's replay starts it again
   * at its `afterCursor`). A live notification at or below it is not sent: a replay and a live
   * notification whose send waited on its log sync can cover the same records, and each reaches
   * the connection once, in cursor order (invariant 5).
   */
  cursors: Map<string, number>;
}

/** The cursor number of a notification's params (`v:<sessionId>:<n>`), or undefined. */
function cursorNumber(params: Record<string, unknown>): number | undefined {
  const cursor = params["viewCursor"];
  if (typeof cursor !== "string") return undefined;
  const n = Number(cursor.slice(cursor.lastIndexOf(":") + 1));
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Sends live notification `message` (cursor number `n`) on `channel` unless the channel already has its cursor. */
function sendInOrder(channel: Channel, method: string, sessionId: string, params: Record<string, unknown>, n: number | undefined, message: unknown): void {
  if (n !== undefined && n <= (channel.cursors.get(sessionId) ?? 0)) return;
  channel.sendNotification(message, method, params, sessionId, n);
}

type Connection = { transport: MessageTransport; channel: Channel };

function newChannel(write: (message: unknown) => void, subscribes: boolean): Channel {
  const terminalsSent = new Set<string>();
  const cursors = new Map<string, number>();
  const sendNotification = (message: unknown, method: string, params: Record<string, unknown>, sessionId: string, n: number | undefined) => {
    if (method === "turn/completed") terminalsSent.add(String(params["turnId"]));
    if (n !== undefined && n > (cursors.get(sessionId) ?? 0)) cursors.set(sessionId, n);
    write(message);
  };
  return {
    terminalsSent,
    sessions: subscribes ? new Set() : undefined,
    closed: false,
    cursors,
    send(message) {
      if (isObject(message) && isObject(message["params"]) && typeof message["method"] === "string") {
        const params = message["params"];
        sendNotification(message, message["method"], params, String(params["sessionId"]), cursorNumber(params));
        return;
      }
      write(message);
    },
    sendNotification,
  };
}

function rejection(commandId: string, reason: RejectionReason, message: string, details: Record<string, unknown> = {}): CommandError {
  return new CommandError(COMMAND_REJECTED_CODE, message, { commandId, reason, ...details });
}

/**
 * The answer to a command that needed a session log's descriptor when none was free: JSON-RPC
 * `-32603` (never remembered for idempotency, so a retry with the same `commandId` runs again),
 * with `data.errno` (`EMFILE` or `ENFILE`) and `data.retryable: true`. Nothing was written.
 */
function descriptorsExhausted(error: LogUnavailableError): CommandError {
  return new CommandError(JsonRpcErrorCodes.internalError, `Internal error: ${error.message}; retry later`, { errno: error.code, retryable: true });
}

function invalid(message: string): CommandError {
  return new CommandError(JsonRpcErrorCodes.invalidParams, message);
}

function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== "string" || value === "") throw invalid(`${name} must be a non-empty string`);
  return value;
}

function optionalString(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`${name} must be a string`);
  return value;
}

function inputParam(params: Record<string, unknown>): TurnInput[] {
  const input = params["input"];
  if (!Array.isArray(input)) throw invalid("input must be an array");
  return input.map((part: unknown, i) => {
    if (!isObject(part) || part["type"] !== "text" || typeof part["text"] !== "string") {
      throw invalid(`input[${i}] must be {type: "text", text: string}`);
    }
    return { type: "text", text: part["text"] };
  });
}

const knownMethods: ReadonlySet<string> = new Set(Object.values(Commands));

/**
 * The live session agent of `sessionId` in `host`, if it is in memory. For the host's own tests:
 * not exported from `@muse-code/sdk/host`, so the agent's internals stay out of the public surface.
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
  /** The loaded sessions, least recently named first (see {@link MuseHostOptions.maxLiveSessions}). */
  readonly #sessions = new Map<string, SessionAgent>();
  readonly #maxLiveSessions: number;
  readonly #connections = new Set<Connection>();
  /** Who hears each session: the channels that created or resumed it. An entry goes when its last channel does. */
  readonly #subscribers = new Map<string, Set<Channel>>();
  readonly #channels = new WeakMap<(message: unknown) => void, Channel>();
  /** The host's `tool/approve` requests: sent on a channel, answered by id. */
  readonly #approvals = new ApprovalGate({ logger: (line) => this.#log(line) });
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

  constructor(options: MuseHostOptions) {
    if (!options.models.has(options.defaultModel)) throw new Error(`default model ${options.defaultModel} is not loaded`);
    const maxLive = options.maxLiveSessions ?? DEFAULT_MAX_LIVE_SESSIONS;
    if (!(Number.isInteger(maxLive) && maxLive >= 1)) throw new RangeError(`maxLiveSessions must be an integer of at least 1, got ${maxLive}`);
    this.#maxLiveSessions = maxLive;
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
      this.recovered = recoverSessions(this.dataDir, { pool: this.#logFiles, logger: (line) => this.#log(line) });
    } catch (error) {
      this.#lock?.release();
      this.#tempDataDir?.remove();
      throw error;
    }
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
    liveSession = (host, sessionId) => host.#sessions.get(sessionId);
  }

  /**
   * Serves one transport: reads its messages, answers them, and sends it the notifications of the
   * sessions it created or resumed on it, until {@link MuseHost.disconnect} or shutdown. The end
   * of its input does not detach it: with stdio, stdin EOF starts a shutdown whose cancelled
   * terminals must still reach stdout.
   */
  connect(transport: MessageTransport): void {
    const channel = newChannel((message) => transport.send(message), true);
    this.#connections.add({ transport, channel });
    transport.onMessage((text) => this.#onText(text, channel));
    // Its open questions go to the session's next open connection, or wait for a session/resume.
    transport.onClose(() => this.#approvals.detach(channel));
  }

  /**
   * Stops sending to `transport` (it hears no session any more) and closes it, e.g. a WebSocket
   * that went away. Its sessions go on, and a `session/resume` on another connection picks them up.
   */
  disconnect(transport: MessageTransport): void {
    for (const c of this.#connections) if (c.transport === transport) this.#approvals.detach(c.channel);
    for (const c of this.#connections) {
      if (c.transport !== transport) continue;
      this.#connections.delete(c);
      c.channel.closed = true;
      for (const sessionId of c.channel.sessions ?? []) {
        const set = this.#subscribers.get(sessionId);
        set?.delete(c.channel);
        if (set?.size === 0) this.#subscribers.delete(sessionId);
      }
      c.channel.sessions?.clear();
    }
    transport.close();
  }

  /** How many transports are connected. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /**
   * Handles one incoming JSON-RPC text and writes the answer (and any replay) through `reply`.
   * Exposed for in-process use and tests. Unlike a {@link MuseHost.connect}ed transport, `reply`
   * hears no live notifications (only answers, replays, and a terminal an `already_terminal`
   * rejection needs), so nothing keeps a reference to it.
   */
  handleText(text: string, reply: (message: unknown) => void): void {
    let channel = this.#channels.get(reply);
    if (channel === undefined) {
      channel = newChannel(reply, false);
      this.#channels.set(reply, channel);
    }
    this.#onText(text, channel);
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
      await Promise.all([...this.#sessions.values()].map((s) => s.dispose()));
      for (const c of this.#connections) c.transport.close();
      this.#lock?.release();
      this.#tempDataDir?.remove();
    })();
    return this.#shuttingDown;
  }

  #log(line: string): void {
    this.#options.logger?.(line);
  }

  /** Sends one notification to the channels that hear its session. */
  #publish(method: NotificationMethod, params: Record<string, unknown>, json?: string): void {
    const sessionId = String(params["sessionId"]);
    const subscribers = this.#subscribers.get(sessionId);
    if (subscribers === undefined) return;
    const message = notificationMessage(method, params);
    withJson(message, json ?? JSON.stringify(message)); // serialized once, whatever the number of connections
    const n = cursorNumber(params);
    const wire = message.params as Record<string, unknown>;
    if (subscribers.size === 1) {
      for (const channel of subscribers) sendInOrder(channel, method, sessionId, wire, n, message);
      return;
    }
    // A copy: a send that overflows a connection's queue disconnects it, which edits the set.
    for (const channel of [...subscribers]) sendInOrder(channel, method, sessionId, wire, n, message);
  }

  /** From now on `channel` hears `sessionId`; answers whether it did not before. */
  #subscribe(channel: Channel, sessionId: string): boolean {
    if (channel.sessions === undefined || channel.closed || channel.sessions.has(sessionId)) return false;
    channel.sessions.add(sessionId);
    let set = this.#subscribers.get(sessionId);
    if (set === undefined) this.#subscribers.set(sessionId, (set = new Set()));
    set.add(channel);
    return true;
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

  /** Sends an outcome on `channel`: the turn's terminal first if needed, the response, then any replay. */
  #deliver(channel: Channel, id: JsonRpcId, outcome: CommandOutcome, sentBefore?: number): void {
    if (outcome.kind === "error") {
      if (outcome.terminalOf !== undefined) this.#sendTerminalIfUnseen(channel, outcome.terminalOf.sessionId, outcome.terminalOf.turnId);
      channel.send({ jsonrpc: "2.0", id, error: outcome.error });
      return;
    }
    // A session/create or session/resume (answered now, or again from the cache on a retry)
    // subscribes the channel it answers on: from here on it hears the session live.
    const result = outcome.result;
    const subscribes = (outcome.method === Commands.sessionCreate || outcome.method === Commands.sessionResume) && isObject(result);
    const sessionId = subscribes && typeof result["sessionId"] === "string" ? result["sessionId"] : undefined;
    const newlySubscribed = sessionId !== undefined && this.#subscribe(channel, sessionId);
    if (outcome.replay === undefined) {
      channel.send({ jsonrpc: "2.0", id, result: outcome.result });
      return;
    }
    const { after } = outcome.replay;
    const replayOf = outcome.replay.sessionId;
    // A retried resume answered from the cache on a channel that did not hear the session yet:
    // its replay runs up to now, so nothing between the first answer and this one is missed.
    const upTo = newlySubscribed ? Math.max(outcome.replay.upTo, this.#loadedOrNone(replayOf)?.lastCursor ?? 0) : outcome.replay.upTo;
    // A client caught up with what it had been sent gets only what is new to it: records sent live
    // while its resume was handled (their log sync finished) are not sent twice. A client that
    // asks for records it already saw gets them again: the replay starts the channel's cursor at
    // `after`. Either way a live notification the replay covered is not sent a second time.
    const from = sentBefore !== undefined && after >= sentBefore ? Math.max(after, channel.cursors.get(replayOf) ?? 0) : after;
    const replay: JsonRpcNotification[] = [];
    try {
      for (const record of readSessionLog(sessionLogPath(this.dataDir, replayOf), { onProblem: (line) => this.#log(line), pool: this.#logFiles })) {
        if (record.type === "notification" && record.n > from && record.n <= upTo) replay.push(notificationMessage(record.method, record.params));
      }
    } catch (error) {
      this.#log(`replay of session ${replayOf} stopped: ${(error as Error).message}`);
    }
    // `replayed` is what this channel is sent now (the cached answer counted the log when the resume
    // was accepted: a retry, or a channel already sent some of it, gets another number).
    const answered = isObject(result) && result["replayed"] !== replay.length ? { ...result, replayed: replay.length } : outcome.result;
    channel.send({ jsonrpc: "2.0", id, result: answered });
    channel.cursors.set(replayOf, from);
    for (const message of replay) channel.send(message);
  }

  /**
   * Invariant 4 on every wire: an `already_terminal` rejection follows that turn's `turn/completed`.
   * A channel that never got it (a new connection, a restarted host) is sent the logged terminal,
   * with its original cursor, first.
   */
  #sendTerminalIfUnseen(channel: Channel, sessionId: string, turnId: string): void {
    if (channel.terminalsSent.has(turnId)) return;
    const state = this.#loadedOrNone(sessionId)?.turnState(turnId);
    if (state?.state !== "terminal") return;
    channel.send(notificationMessage("turn/completed", state.params as unknown as Record<string, unknown>));
  }

  #onText(text: string, channel: Channel): void {
    const reply = (message: unknown) => channel.send(message);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      reply(errorResponse(null, JsonRpcErrorCodes.parseError, "Parse error"));
      return;
    }
    if (Array.isArray(message)) {
      reply(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Batches are not supported"));
      return;
    }
    if (!isObject(message)) {
      reply(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request"));
      return;
    }
    const rawId = message["id"];
    const hasId = "id" in message;
    // An id the answer could not carry exactly (Infinity, a fraction, beyond 2^53 - 1) is answered with id null.
    const id: JsonRpcId = isJsonRpcId(rawId) ? rawId : null;
    if (hasId && !isJsonRpcId(rawId)) {
      reply(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request: id must be a string, an integer within ±(2^53 - 1), or null"));
      return;
    }
    // A response to a request this host sent (tool/approve): routed by id, never answered.
    if (!("method" in message) && hasId && ("result" in message || "error" in message)) {
      if (message["jsonrpc"] !== "2.0") this.#log(`a response without jsonrpc "2.0" to ${JSON.stringify(id)}: read anyway`);
      this.#approvals.answer(channel, message);
      return;
    }
    if (message["jsonrpc"] !== "2.0" || typeof message["method"] !== "string") {
      reply(errorResponse(id, JsonRpcErrorCodes.invalidRequest, "Invalid Request"));
      return;
    }
    if (!hasId) return; // a client notification: MSP defines none, ignore it
    const method = message["method"];
    if (!knownMethods.has(method)) {
      reply(errorResponse(id, JsonRpcErrorCodes.methodNotFound, `Method not found: ${method}`));
      return;
    }
    const params = "params" in message ? message["params"] : {};
    if (!isObject(params)) {
      reply(errorResponse(id, JsonRpcErrorCodes.invalidParams, "params must be an object"));
      return;
    }
    const given = params["commandId"];
    if (given !== undefined && (typeof given !== "string" || given === "")) {
      reply(errorResponse(id, JsonRpcErrorCodes.invalidParams, "commandId must be a non-empty string"));
      return;
    }
    const commandId = given ?? uuidv7();
    if (given !== undefined) {
      const seen = this.#cache.lookup(given);
      if (seen?.method !== undefined && seen.method !== method) {
        reply(errorResponse(id, JsonRpcErrorCodes.invalidParams, `commandId ${given} was already used for ${seen.method}`));
        return;
      }
      if (seen !== undefined) {
        this.#deliver(channel, id, seen);
        this.#speaksFor(channel, method, params, seen);
        return;
      }
    }
    let outcome: CommandOutcome;
    let after: Handled["after"];
    // What this connection had been sent of the session when the resume arrived: the cursor the
    // client chose knows no more than that.
    const sentBefore = method === Commands.sessionResume ? (channel.cursors.get(String(params["sessionId"])) ?? 0) : undefined;
    try {
      const handled = this.#execute(method as CommandMethod, params, commandId);
      outcome = { kind: "result", method, result: { commandId, status: "accepted", ...handled.result } };
      if (handled.replay !== undefined) outcome.replay = handled.replay;
      after = handled.after;
    } catch (thrown) {
      // No descriptor free (EMFILE/ENFILE): this command fails, retryably; the host goes on.
      const error = thrown instanceof LogUnavailableError ? descriptorsExhausted(thrown) : thrown;
      if (error instanceof CommandError) {
        const e = error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data };
        outcome = { kind: "error", method, error: e };
        const data = error.data;
        if (isObject(data) && data["reason"] === RejectionReasons.alreadyTerminal && typeof params["sessionId"] === "string") {
          outcome.terminalOf = { sessionId: params["sessionId"], turnId: String(data["turnId"]) };
        }
      } else {
        this.#log(`internal error in ${method}: ${(error as Error).stack ?? String(error)}`);
        outcome = { kind: "error", error: { code: JsonRpcErrorCodes.internalError, message: `Internal error: ${(error as Error).message}` } };
      }
    }
    const finish = (answer: CommandOutcome) => {
      // Only a client-chosen commandId can be retried; an internal error is not an answer to repeat.
      const internal = answer.kind === "error" && answer.error.code === JsonRpcErrorCodes.internalError;
      if (given !== undefined && !internal) this.#cache.remember(given, answer);
      this.#deliver(channel, id, answer, sentBefore);
      this.#speaksFor(channel, method, params, answer);
    };
    if (after === undefined) return finish(outcome);
    // Answered once its records are durable (a retry meanwhile runs again: nothing is cached yet).
    const accepted = outcome;
    after((error) => {
      if (error === undefined) return finish(accepted);
      finish({ kind: "error", error: { code: JsonRpcErrorCodes.internalError, message: `Internal error: session log failed: ${error.message}` } });
    });
  }

  /**
   * After a command's answer (and any replay) went out: a connection that created or resumed a
   * session is where its questions go, and a resume asks the session's open questions again, after
   * the replay that shows them pending. (A `handleText` reply hears no notifications: never asked.)
   */
  #speaksFor(channel: Channel, method: string, params: Record<string, unknown>, outcome: CommandOutcome): void {
    if (outcome.kind !== "result" || (method !== Commands.sessionCreate && method !== Commands.sessionResume)) return;
    const sessionId = method === Commands.sessionCreate && isObject(outcome.result) ? outcome.result["sessionId"] : params["sessionId"];
    if (typeof sessionId !== "string" || ![...this.#connections].some((c) => c.channel === channel)) return;
    this.#approvals.attach(sessionId, channel, { reask: method === Commands.sessionResume });
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
            capabilities: { keepInbox: true, resume: true },
            models: [...this.#options.models.keys()].sort().map((id) => ({ id })),
          },
        };
      case Commands.sessionCreate:
        return this.#sessionCreate(params, commandId);
      case Commands.sessionResume:
        return this.#sessionResume(params, commandId);
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
        return this.#turnCancel(params, commandId);
    }
  }

  #requireModel(model: string, commandId: string): string {
    if (!this.#options.models.has(model)) {
      throw rejection(commandId, RejectionReasons.unknownModel, `unknown model ${model}`, { model, available: [...this.#options.models.keys()].sort() });
    }
    return model;
  }

  #newAgent(
    sessionId: string,
    modelName: string,
    log: SessionLog,
    seed: Partial<Pick<ConstructorParameters<typeof SessionAgent>[0], "lastCursor" | "startedTurns" | "terminals" | "accepted">> = {},
  ): SessionAgent {
    const shell: ShellOptions = this.#toolGroups.shellHooks();
    if (this.#options.killGraceMs !== undefined) shell.killGraceMs = this.#options.killGraceMs;
    if (this.#options.outputCapBytes !== undefined) shell.outputCapBytes = this.#options.outputCapBytes;
    const agent = new SessionAgent({
      sessionId,
      log,
      models: this.#options.models,
      modelName,
      publish: (method, params, json) => this.#publish(method, params, json),
      onLogFailure: (error) => this.#fatal(error, `session log of ${sessionId}`),
      ask: (question, signal) => this.#approvals.ask(question, signal),
      shell,
      ...seed,
    });
    this.#sessions.set(sessionId, agent);
    this.#unloadIdle(agent);
    return agent;
  }

  /**
   * Unloads the least recently named sessions beyond {@link MuseHostOptions.maxLiveSessions} that
   * are {@link SessionAgent.unloadable} (never `keep`, the one being loaded): their logs close, and
   * {@link MuseHost.#loadSession} loads them again from the log when a command names them.
   */
  #unloadIdle(keep: SessionAgent): void {
    if (this.#sessions.size <= this.#maxLiveSessions) return;
    for (const [sessionId, agent] of this.#sessions) {
      if (this.#sessions.size <= this.#maxLiveSessions) return;
      if (agent === keep || !agent.unloadable) continue;
      this.#sessions.delete(sessionId);
      agent.unload();
    }
  }

  #sessionCreate(params: Record<string, unknown>, commandId: string): Handled {
    const model = this.#requireModel(optionalString(params, "model") ?? this.#options.defaultModel, commandId);
    const sessionId = uuidv7();
    let log: SessionLog;
    try {
      // A new file only (O_EXCL, O_NOFOLLOW): nothing planted under a fresh id is ever written to.
      log = SessionLog.open(sessionLogPath(this.dataDir, sessionId), { pool: this.#logFiles, mode: "create" });
    } catch (error) {
      if (error instanceof LogUnavailableError) throw error; // no descriptor free: this command fails, nothing else
      this.#fatal(error instanceof Error ? error : new Error(String(error)), `session log of ${sessionId}`);
      throw error;
    }
    try {
      log.append({ type: "session", at: Date.now(), sessionId, model });
    } catch (error) {
      log.close();
      this.#fatal(error instanceof Error ? error : new Error(String(error)), `session log of ${sessionId}`);
      throw error;
    }
    this.#newAgent(sessionId, model, log);
    return { result: { sessionId, model } };
  }

  /** {@link MuseHost.#loadSession} for an answer given again from the cache (its session may be unloaded since): `undefined`, logged, when it cannot be loaded. */
  #loadedOrNone(sessionId: string): SessionAgent | undefined {
    try {
      return this.#loadSession(sessionId);
    } catch (error) {
      this.#log(`session ${sessionId}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** The session in memory, or loaded from its log; `undefined` when neither exists. */
  #loadSession(sessionId: string): SessionAgent | undefined {
    const live = this.#sessions.get(sessionId);
    if (live !== undefined) {
      // Named now: the most recently used (the last to be unloaded).
      this.#sessions.delete(sessionId);
      this.#sessions.set(sessionId, live);
      return live;
    }
    if (!/^[0-9a-fA-F-]{1,64}$/.test(sessionId)) return undefined; // never a path
    const path = sessionLogPath(this.dataDir, sessionId);
    let summary: SessionLogSummary | undefined;
    let log: SessionLog;
    try {
      // Streamed, and only from a regular file (a planted symlink, FIFO or device is no session).
      summary = summarizeSessionLog(readSessionLog(path, { onProblem: (line) => this.#log(line), pool: this.#logFiles }));
      // The log must be this very session's (a case-insensitive file system would open another spelling).
      if (summary === undefined || summary.sessionId !== sessionId) return undefined;
      log = SessionLog.open(path, { pool: this.#logFiles, mode: "existing" });
    } catch (error) {
      if (error instanceof UnsafeFileError) {
        this.#log(`session ${sessionId}: ${error.message}`);
        return undefined;
      }
      if (isDescriptorExhaustion(error)) throw new LogUnavailableError(path, error);
      throw error;
    }
    const model = this.#options.models.has(summary.model) ? summary.model : this.#options.defaultModel;
    return this.#newAgent(sessionId, model, log, {
      lastCursor: summary.lastCursor,
      startedTurns: summary.startedTurns,
      terminals: summary.terminals,
      accepted: summary.accepted,
    });
  }

  #requireSession(params: Record<string, unknown>, commandId: string): SessionAgent {
    const sessionId = stringParam(params, "sessionId");
    const session = this.#loadSession(sessionId);
    if (session === undefined) throw rejection(commandId, RejectionReasons.unknownSession, `unknown session ${sessionId}`, { sessionId });
    return session;
  }

  #sessionResume(params: Record<string, unknown>, commandId: string): Handled {
    const session = this.#requireSession(params, commandId);
    const afterCursor = optionalString(params, "afterCursor");
    let after = 0;
    if (afterCursor !== undefined) {
      const n = parseViewCursor(afterCursor, session.sessionId);
      if (n === undefined) throw invalid(`afterCursor ${afterCursor} is not a cursor of session ${session.sessionId}`);
      after = n;
    }
    // A cursor this session never reached: accepting it would hand the client a future cursor, and
    // every later notification would look like a step back. lastCursor is a valid afterCursor to retry with.
    if (after > session.lastCursor) {
      throw new CommandError(JsonRpcErrorCodes.invalidParams, `afterCursor ${afterCursor ?? ""} is beyond the last cursor of session ${session.sessionId}`, {
        commandId,
        lastCursor: formatViewCursor(session.sessionId, session.lastCursor),
      });
    }
    let replayed = 0;
    let upTo = after;
    for (const record of readSessionLog(session.logPath)) {
      if (record.type === "notification" && record.n > after) {
        replayed += 1;
        upTo = Math.max(upTo, record.n);
      }
    }
    return { result: { sessionId: session.sessionId, replayed }, replay: { sessionId: session.sessionId, after, upTo } };
  }

  #turnCancel(params: Record<string, unknown>, commandId: string): Handled {
    const session = this.#requireSession(params, commandId);
    const turnId = stringParam(params, "turnId");
    const keepInbox = params["keepInbox"];
    if (keepInbox !== undefined && typeof keepInbox !== "boolean") throw invalid("keepInbox must be a boolean");
    const state = session.turnState(turnId);
    if (state === undefined) throw rejection(commandId, RejectionReasons.unknownTurn, `unknown turn ${turnId}`, { turnId });
    if (state.state === "terminal") {
      throw rejection(commandId, RejectionReasons.alreadyTerminal, `turn ${turnId} is already ${state.params.terminal}`, {
        turnId,
        terminal: state.params.terminal,
      });
    }
    let done: ((error?: Error) => void) | undefined;
    let settled: { error?: Error } | undefined;
    // Its records are synced with the session's next batch, off the event loop: the answer waits for them.
    session.cancelTurn(turnId, { kind: "user" }, keepInbox === true, (error) => {
      settled = error === undefined ? {} : { error };
      done?.(error);
    });
    return {
      result: { turnId },
      after: (callback) => {
        if (settled !== undefined) return callback(settled.error);
        done = callback;
      },
    };
  }
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
