/** The `muse-host` command line's words: the usage, the help, and the parser of `serve`'s flags. */
import { DEFAULT_MAX_LINE_BYTES } from "@muse-code/protocol/lineSplitter.js";
import { DEFAULT_LOCK_STALE_MS } from "../log/dataDirLock.js";
import { DEFAULT_MAX_LIVE_SESSIONS } from "../server/hostOptions.js";
import { DEFAULT_MAX_OPEN_LOGS } from "../log/logFilePool.js";
import { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES } from "../tools/shellTool.js";
import { parseListenAddress, type ListenAddress } from "../transport/webSocketAccess.js";
import { DEFAULT_MAX_CONNECTIONS } from "../transport/webSocketServer.js";
import { DEFAULT_MAX_SEND_QUEUE_BYTES, DEFAULT_STALL_TIMEOUT_MS } from "../transport/webSocketTransport.js";

/** Parsed `muse-host serve` options. */
export interface ServeOptions {
  /** `--stdio`: serve MSP on stdin/stdout. */
  stdio: boolean;
  /** `--ws [ADDR:]PORT`: serve MSP over WebSocket. */
  ws?: ListenAddress;
  /** `--token-file F`: the file holding the WebSocket token. */
  tokenFile?: string;
  /** `--allow-origin ORIGIN`, repeatable. */
  allowOrigins: string[];
  /** `--allow-remote`: allow a non-loopback `--ws` address. */
  allowRemote: boolean;
  /** `--ui` (or `--ui-dir DIR`): serve the Stop-button app at `/`. */
  ui: boolean;
  /** `--ui-dir DIR`: the app's files (default: the package's built `dist/demo/`). */
  uiDir?: string;
  /** @unit bytes */
  maxMessageBytes?: number;
  /** @unit bytes */
  maxSendQueueBytes?: number;
  /** @unit milliseconds */
  stallTimeoutMs?: number;
  /** @unit connections */
  maxConnections?: number;
  /** `--agent codex`: Codex runs the turns (the one model is `codex`; no script); `--agent acp -- CMD ARGS…`: an ACP agent does (the one model is `acp`). */
  agent?: "codex" | "acp";
  /** `--agent-bin PATH`: the Codex binary (with `--agent codex` only). */
  agentBin?: string;
  /** With `--agent acp`: the agent's command line after `--`, CMD first (at least one word). */
  agentCommand?: string[];
  /** The default model's script (model name `default` unless `--default-model`). */
  script?: string;
  dataDir?: string;
  /** Extra models: name -> script path. */
  models: Map<string, string>;
  defaultModel?: string;
  /** @unit milliseconds */
  killGraceMs?: number;
  /** `--turn-time-limit-ms N`: a turn running past N is stopped with cause `hook`. @unit milliseconds */
  turnTimeLimitMs?: number;
  /** `--max-subagent-depth N`: the deepest a subagent's turn may be. @unit levels */
  maxSubagentDepth?: number;
  /** `--max-subagents-per-turn N`: child turns one turn runs at once. @unit child turns */
  maxSubagentsPerTurn?: number;
  /** `--max-sessions-per-connection N`: sessions of its own one connection may hear. @unit sessions */
  maxSessionsPerConnection?: number;
  /** @unit bytes */
  outputCapBytes?: number;
  /** @unit file descriptors */
  maxOpenLogs?: number;
  /** @unit sessions */
  maxLiveSessions?: number;
  /** @unit milliseconds */
  lockStaleMs?: number;
}

/** The usage synopsis of `muse-host` (printed after a bad command line; {@link HELP} explains each flag). */
export const USAGE = `usage: muse-host serve (--stdio | --ws [ADDR:]PORT | both) (--script PATH | --agent codex | --agent acp -- CMD ARGS…) [--data DIR]
                       [--agent-bin PATH]
                       [--model NAME=PATH ...] [--default-model NAME] [--kill-grace-ms N]
                       [--turn-time-limit-ms N] [--max-subagent-depth N] [--max-subagents-per-turn N]
                       [--output-cap-bytes N] [--max-open-logs N] [--max-live-sessions N] [--lock-stale-ms N]
                       [--max-message-bytes N] [--token-file FILE] [--allow-origin ORIGIN ...]
                       [--allow-remote] [--ui] [--ui-dir DIR] [--max-send-queue-bytes N]
                       [--stall-timeout-ms N] [--max-connections N] [--max-sessions-per-connection N]
                       [-- CMD ARGS... (with --agent acp, last)]
       muse-host --version | --help`;

/**
 * What `muse-host --help` prints: the synopsis, then one line per flag saying what it does,
 * with its default and unit.
 */
export const HELP = `${USAGE}

The reference MSP host: a scripted model and a real shell tool, served over stdio and/or
WebSocket; \`muse serve\` is the same command. stdout carries only protocol (NDJSON JSON-RPC);
logs go to stderr. A connection hears the sessions it created or resumed, and no others.

serve flags (each also takes --flag=VALUE):
  --stdio                serve MSP on stdin/stdout, one JSON-RPC message per line (this,
                         --ws, or both)
  --script PATH          scripted model file, loaded as the model named "default"
                         (required unless a --model is given)
  --agent codex          Codex runs every session's turns instead of a script: each session gets
                         its own \`codex app-server\` (CODEX_HOME and its config.toml as Codex
                         reads them) and Codex thread; the one model is "codex"; a Stop ends
                         only once the turn's commands are gone. Not with --script or --model
  --agent acp -- CMD ARGS...  an ACP agent runs every session's turns: each session gets its own
                         CMD ARGS... child (in its own process group, in the host's directory,
                         with the host's environment) speaking ACP on its stdio, and its own ACP
                         session; the one model is "acp"; a Stop ends only once the turn's
                         commands are gone; turn/steer is refused "steering_unsupported". The
                         command comes last, after --. Not with --script, --model or --agent-bin
  --agent-bin PATH       the Codex binary for --agent codex (default: the pinned @openai/codex's);
                         an ACP agent's binary is the CMD after --
  --model NAME=PATH      one more scripted model, chosen per session by session/create {model}
                         or session/setModel; repeatable
  --default-model NAME   model of a session/create without "model" (default: "default" when
                         --script is given, else the first --model)
  --data DIR             keep session logs in DIR/sessions/ so a restarted host can resume them
                         (default: a fresh temp dir, removed when the host exits); one host
                         per DIR: a second one exits 3, naming the holder
  --kill-grace-ms N      on cancel or shutdown, milliseconds from SIGTERM to SIGKILL of a tool's
                         process group (default: ${DEFAULT_KILL_GRACE_MS})
  --turn-time-limit-ms N a turn running past N milliseconds is cancelled with cause
                         {kind: "hook", reason: "turn time limit (N ms)"} (default: none; a
                         model's "turnTimeLimitMs" wins)
  --max-subagent-depth N a "task" call in a turn N levels below a top-level turn fails
                         "subagent depth limit (N)" (default: 3)
  --max-subagents-per-turn N at most N child turns of one turn run at once; a "task" call
                         beyond it fails "subagent fan-out limit (N)" (default: 8)
  --max-sessions-per-connection N sessions of its own (created or resumed) one connection
                         may hear; past it, another is refused "too_many_sessions" (default: 1024)
  --output-cap-bytes N   bytes of output kept per tool call; the rest is cut, truncated: true
                         (default: ${DEFAULT_OUTPUT_CAP_BYTES})
  --max-open-logs N      session-log file descriptors kept open for idle sessions, least
                         recently used closed first (default: ${DEFAULT_MAX_OPEN_LOGS}, or a
                         quarter of ulimit -n if lower)
  --max-live-sessions N  sessions kept loaded in memory; beyond it the least recently named idle
                         ones are unloaded and reloaded from their logs (default: ${DEFAULT_MAX_LIVE_SESSIONS})
  --lock-stale-ms N      milliseconds after which the --data lock of a host on another machine,
                         not refreshed, is taken over; at least 2000 (default: ${DEFAULT_LOCK_STALE_MS})
  --max-message-bytes N  the largest incoming message, in bytes, on either transport; a bigger
                         WebSocket frame closes that connection with 1009 (default: ${DEFAULT_MAX_LINE_BYTES})

WebSocket flags (see docs/websocket-host.md for the security model):
  --ws [ADDR:]PORT       serve MSP over WebSocket, one JSON-RPC message per text frame,
                         subprotocol msp.v1, at ws://ADDR:PORT/msp; ADDR defaults to 127.0.0.1,
                         PORT 0 picks a free port. Prints one line, once, to open in a browser:
                         "muse-host: open http://ADDR:PORT/#token=TOKEN"
  --token-file FILE      the bearer token every WebSocket must present, read from FILE (else
                         from the MUSE_HOST_TOKEN environment variable, which the host then
                         removes from its environment; else 32 random bytes)
  --allow-origin ORIGIN  one more browser origin allowed to connect, e.g. http://localhost:5173,
                         beside the host's own http://127.0.0.1:PORT and http://localhost:PORT;
                         repeatable (a request from any other Origin gets 403)
  --allow-remote         allow a non-loopback ADDR, e.g. 0.0.0.0 (there is no TLS: put a TLS
                         proxy in front); without it such an address exits 2
  --ui                   also serve the Stop-button app at http://ADDR:PORT/ (GET and HEAD,
                         from the package's dist/demo/)
  --ui-dir DIR           serve the app's files from DIR instead (implies --ui)
  --max-send-queue-bytes N  bytes held for one connection; past it a slow reader is fed from
                         the session log as it drains, never cut (default: ${DEFAULT_MAX_SEND_QUEUE_BYTES})
  --stall-timeout-ms N   milliseconds a connection may hold bytes without draining any before
                         it is closed with 4008 (default: ${DEFAULT_STALL_TIMEOUT_MS})
  --max-connections N    simultaneous WebSocket and page connections; one more is closed at
                         once (default: ${DEFAULT_MAX_CONNECTIONS})

other commands:
  --version              print the host version and exit
  --help, -h             print this help and exit

environment:
  MUSE_EXPERIMENTAL_SDK_ENABLED  the operator's off-switch: unset, empty, 1, true or on, serve
                         runs; 0, false or off (any case), it exits 4 with one line; any other
                         value exits 2. --help and --version answer whatever it says

Exit: 0 after stdin EOF (with --stdio) or SIGTERM/SIGINT/SIGHUP (running turns cancelled, tools drained); a
second signal stops the drain (128 + signal number); 1 if a session log could not be written
or the data dir's lock was lost; 2 on a bad command line, model file, token file, UI dir,
an unsafe data dir (DIR/sessions a symlink), a non-loopback --ws address without --allow-remote,
or a --ws address that cannot be bound, or a MUSE_EXPERIMENTAL_SDK_ENABLED that is neither on
nor off; 3 if another live host holds DIR; 4 if MUSE_EXPERIMENTAL_SDK_ENABLED switches serve off.`;

function nonNegativeInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

/** Parses the arguments after `serve`. Throws an `Error` with a one-line message on bad input. */
export function parseServeArgs(args: readonly string[]): ServeOptions {
  const options: ServeOptions = { stdio: false, allowOrigins: [], allowRemote: false, ui: false, models: new Map() };
  const seen = new Set<string>();
  const positive = (flag: string, v: string) => {
    const n = nonNegativeInt(flag, v);
    if (n < 1) throw new Error(`${flag} needs a positive integer, got ${n}`);
    return n;
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i] ?? "";
    if (flag === "--") {
      // The agent's command line: everything after it, untouched.
      options.agentCommand = args.slice(i + 1);
      break;
    }
    const eqAt = flag.startsWith("--") ? flag.indexOf("=") : -1;
    const name = eqAt > 0 ? flag.slice(0, eqAt) : flag;
    seen.add(name);
    const inline = eqAt > 0 ? flag.slice(eqAt + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const v = args[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case "--stdio":
        options.stdio = true;
        break;
      case "--ws":
        options.ws = parseListenAddress(value());
        break;
      case "--token-file":
        options.tokenFile = value();
        break;
      case "--allow-origin":
        options.allowOrigins.push(value());
        break;
      case "--allow-remote":
        options.allowRemote = true;
        break;
      case "--ui":
        options.ui = true;
        break;
      case "--ui-dir":
        options.ui = true;
        options.uiDir = value();
        break;
      case "--max-message-bytes":
        options.maxMessageBytes = positive(name, value());
        break;
      case "--max-send-queue-bytes":
        options.maxSendQueueBytes = positive(name, value());
        break;
      case "--stall-timeout-ms":
        options.stallTimeoutMs = positive(name, value());
        break;
      case "--max-connections":
        options.maxConnections = positive(name, value());
        break;
      case "--script":
        options.script = value();
        break;
      case "--agent": {
        const agent = value();
        if (agent !== "codex" && agent !== "acp") throw new Error(`--agent ${JSON.stringify(agent)} is not bridged (codex and acp are)`);
        options.agent = agent;
        break;
      }
      case "--agent-bin":
        options.agentBin = value();
        break;
      case "--data":
        options.dataDir = value();
        break;
      case "--model": {
        const spec = value();
        const eq = spec.indexOf("=");
        if (eq <= 0 || eq === spec.length - 1) throw new Error(`--model needs NAME=PATH, got ${JSON.stringify(spec)}`);
        options.models.set(spec.slice(0, eq), spec.slice(eq + 1));
        break;
      }
      case "--default-model":
        options.defaultModel = value();
        break;
      case "--kill-grace-ms":
        options.killGraceMs = nonNegativeInt(name, value());
        break;
      case "--turn-time-limit-ms":
        options.turnTimeLimitMs = positive(name, value());
        break;
      case "--max-subagent-depth":
        options.maxSubagentDepth = positive(name, value());
        break;
      case "--max-subagents-per-turn":
        options.maxSubagentsPerTurn = positive(name, value());
        break;
      case "--max-sessions-per-connection":
        options.maxSessionsPerConnection = positive(name, value());
        break;
      case "--output-cap-bytes":
        options.outputCapBytes = nonNegativeInt(name, value());
        break;
      case "--max-open-logs": {
        const n = nonNegativeInt(name, value());
        if (n < 1) throw new Error(`${name} needs a positive integer, got ${n}`);
        options.maxOpenLogs = n;
        break;
      }
      case "--max-live-sessions": {
        const n = nonNegativeInt(name, value());
        if (n < 1) throw new Error(`${name} needs a positive integer, got ${n}`);
        options.maxLiveSessions = n;
        break;
      }
      case "--lock-stale-ms": {
        const n = nonNegativeInt(name, value());
        if (n < 2000) throw new Error(`${name} needs at least 2000, got ${n}`);
        options.lockStaleMs = n;
        break;
      }
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  if (!options.stdio && options.ws === undefined) throw new Error("serve needs a transport: --stdio, --ws [ADDR:]PORT, or both");
  if (options.ws === undefined) {
    const wsOnly = [
      "--token-file",
      "--allow-origin",
      "--allow-remote",
      "--ui",
      "--ui-dir",
      "--max-send-queue-bytes",
      "--stall-timeout-ms",
      "--max-connections",
    ];
    const given = wsOnly.filter((flag) => seen.has(flag));
    if (given.length > 0) throw new Error(`${given.join(", ")} need${given.length === 1 ? "s" : ""} --ws [ADDR:]PORT`);
  }
  if (options.agentCommand !== undefined && options.agent !== "acp") throw new Error("a command after -- needs --agent acp");
  if (options.agent === "acp") {
    if (options.agentCommand === undefined || options.agentCommand.length === 0 || options.agentCommand[0] === "")
      throw new Error("--agent acp needs the agent's command after --: --agent acp -- CMD ARGS...");
    if (seen.has("--agent-bin")) throw new Error("--agent-bin is for --agent codex: an ACP agent's binary is the CMD after --");
  }
  if (options.agent !== undefined) {
    const scripted = ["--script", "--model", "--default-model"].filter((flag) => seen.has(flag));
    if (scripted.length > 0) throw new Error(`--agent ${options.agent} runs the turns: ${scripted.join(", ")} cannot be given with it`);
    return options;
  }
  if (seen.has("--agent-bin")) throw new Error("--agent-bin needs --agent codex");
  if (options.script === undefined && options.models.size === 0) throw new Error("serve needs --script PATH or --model NAME=PATH");
  return options;
}
