/** The reference host's settings: its name and version in `host/info`, and the options of `createHost`. */
import type { ScriptedModel } from "../model/scriptedModel.js";
import type { AcpAgentOptions } from "../bridge/acpTurnDriver.js";
import type { CodexAgentOptions } from "../bridge/codexTurnDriver.js";

/**
 * The host's name in `host/info`.
 *
 * @example
 * ```ts
 * const info = await client.command("host/info", {});
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
  /**
   * A running turn past this many milliseconds is cancelled with a cause of kind `hook` whose
   * reason is `turn time limit (N ms)`, through the same drain as a user's Stop; queued turns are
   * kept. A model's own `turnTimeLimitMs` wins over it. Default: no limit.
   *
   * @unit milliseconds
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", turnTimeLimitMs: 120_000 });
   * ```
   */
  turnTimeLimitMs?: number;
  /**
   * The deepest a subagent's turn may be: a `task` call in a turn at this depth fails
   * `subagent depth limit (N)`. Default 3.
   *
   * @unit levels below a top-level turn
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", maxSubagentDepth: 2 });
   * ```
   */
  maxSubagentDepth?: number;
  /**
   * The most child turns one turn runs at once: a `task` call beyond it fails
   * `subagent fan-out limit (N)`. Default 8.
   *
   * @unit child turns running at once, per turn
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", maxSubagentsPerTurn: 4 });
   * ```
   */
  maxSubagentsPerTurn?: number;
  /**
   * How many sessions of its own (created or resumed) one connection may hear: past it, its
   * `session/create`, and its `session/resume` of a session it does not hear, answer
   * `too_many_sessions` with `data.limit`. The child sessions it hears below its own do not count.
   *
   * @unit sessions, per connection
   * @defaultValue 1 024
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", maxSessionsPerConnection: 64 });
   * ```
   */
  maxSessionsPerConnection?: number;
  /**
   * How many parent→child session links the host remembers (those made in this run and those read
   * back at startup). Past it the oldest link whose child has no running turn is forgotten: that
   * child is no longer part of its parent's tree, and a connection that heard it only through the
   * tree stops hearing it.
   *
   * @unit links
   * @defaultValue 10 000
   * @example
   * ```ts
   * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
   * const host = createHost({ models, defaultModel: "default", maxSubagentLinks: 1000 });
   * ```
   */
  maxSubagentLinks?: number;
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
  /**
   * The agent that runs every session's turns in place of the scripted models: `{kind: "codex"}`
   * gives each session its own `codex app-server` and Codex thread (docs/reference-host.md,
   * "Bridging Codex"); `{kind: "acp", command, args}` its own ACP agent child and ACP session
   * (docs/bridges.md). `models` still names what `session/create` may pick; with an agent, each
   * name is only a label (see {@link codexModels}). Default: the scripted models play the turns.
   *
   * @example
   * ```ts
   * const host = createHost({ models: codexModels(), defaultModel: CODEX_MODEL_NAME, agent: { kind: "codex", codexHome: "/home/me/.codex" } });
   * ```
   */
  agent?: CodexAgentOptions | AcpAgentOptions;
  /** Diagnostics sink (the CLI writes to stderr). */
  logger?: (line: string) => void;
  /**
   * Called once when a session-log write fails. The host has already begun shutting down (every
   * session cancelled with cause `disposed`, tools drained); the CLI exits non-zero after it.
   */
  onFatal?: (error: Error) => void;
}
