/** The `muse-host` command line: argument parsing and `serve --stdio` / `serve --ws`. */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { DEFAULT_MAX_LINE_BYTES } from "../protocol/lineSplitter.js";
import { loadScriptedModel, type ScriptedModel } from "./scriptedModel.js";
import { DataDirInUseError, DEFAULT_LOCK_STALE_MS } from "./dataDirLock.js";
import { createHost, DEFAULT_MAX_LIVE_SESSIONS, HOST_VERSION, type MuseHostOptions } from "./museHost.js";
import { DEFAULT_MAX_OPEN_LOGS } from "./sessionLog.js";
import { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES, killAllToolGroups } from "./shellTool.js";
import { createStdioTransport } from "./stdioTransport.js";
import { isLoopbackAddress, parseListenAddress, type ListenAddress } from "./webSocketAccess.js";
import { DEFAULT_MAX_CONNECTIONS, serveWebSocket, type WebSocketHostServer } from "./webSocketServer.js";
import { DEFAULT_MAX_SEND_QUEUE_BYTES } from "./webSocketTransport.js";

/**
 * Parsed `muse-host serve` options.
 *
 * @example
 * ```ts
 * const options: ServeOptions = parseServeArgs(["--stdio", "--script", "m.json"]);
 * ```
 */
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
  /** @unit connections */
  maxConnections?: number;
  /** The default model's script (model name `default` unless `--default-model`). */
  script?: string;
  dataDir?: string;
  /** Extra models: name -> script path. */
  models: Map<string, string>;
  defaultModel?: string;
  /** @unit milliseconds */
  killGraceMs?: number;
  /** @unit bytes */
  outputCapBytes?: number;
  /** @unit file descriptors */
  maxOpenLogs?: number;
  /** @unit sessions */
  maxLiveSessions?: number;
  /** @unit milliseconds */
  lockStaleMs?: number;
}

/**
 * The usage synopsis of `muse-host` (printed after a bad command line; {@link HELP} explains each flag).
 *
 * @example
 * ```ts
 * process.stderr.write(`${USAGE}\n`);
 * ```
 */
export const USAGE = `usage: muse-host serve (--stdio | --ws [ADDR:]PORT | both) --script PATH [--data DIR]
                       [--model NAME=PATH ...] [--default-model NAME] [--kill-grace-ms N]
                       [--output-cap-bytes N] [--max-open-logs N] [--max-live-sessions N] [--lock-stale-ms N]
                       [--max-message-bytes N] [--token-file FILE] [--allow-origin ORIGIN ...]
                       [--allow-remote] [--ui] [--ui-dir DIR] [--max-send-queue-bytes N]
                       [--max-connections N]
       muse-host --version | --help`;

/**
 * What `muse-host --help` prints: the synopsis, then one line per flag saying what it does,
 * with its default and unit.
 *
 * @example
 * ```ts
 * process.stdout.write(`${HELP}\n`);
 * ```
 */
export const HELP = `${USAGE}

The reference MSP host: a scripted model and a real shell tool, served over stdio and/or
WebSocket. stdout carries only protocol (NDJSON JSON-RPC); logs go to stderr. A connection
hears the sessions it created or resumed, and no others.

serve flags (each also takes --flag=VALUE):
  --stdio                serve MSP on stdin/stdout, one JSON-RPC message per line (this,
                         --ws, or both)
  --script PATH          scripted model file, loaded as the model named "default"
                         (required unless a --model is given)
  --model NAME=PATH      one more scripted model, chosen per session by session/create {model}
                         or session/setModel; repeatable
  --default-model NAME   model of a session/create without "model" (default: "default" when
                         --script is given, else the first --model)
  --data DIR             keep session logs in DIR/sessions/ so a restarted host can resume them
                         (default: a fresh temp dir, removed when the host exits); one host
                         per DIR: a second one exits 3, naming the holder
  --kill-grace-ms N      on cancel or shutdown, milliseconds from SIGTERM to SIGKILL of a tool's
                         process group (default: ${DEFAULT_KILL_GRACE_MS})
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
  --max-send-queue-bytes N  bytes held for one connection that is not reading; past it that
                         connection closes with 4008 (default: ${DEFAULT_MAX_SEND_QUEUE_BYTES})
  --max-connections N    simultaneous WebSocket and page connections; one more is closed at
                         once (default: ${DEFAULT_MAX_CONNECTIONS})

other commands:
  --version              print the host version and exit
  --help, -h             print this help and exit

Exit: 0 after stdin EOF (with --stdio) or SIGTERM/SIGINT/SIGHUP (running turns cancelled, tools drained); a
second signal stops the drain (128 + signal number); 1 if a session log could not be written
or the data dir's lock was lost; 2 on a bad command line, model file, token file, UI dir,
an unsafe data dir (DIR/sessions a symlink), a non-loopback --ws address without --allow-remote,
or a --ws address that cannot be bound; 3 if another live host holds DIR.`;

function nonNegativeInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} needs a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * Parses the arguments after `serve`. Throws an `Error` with a one-line message on bad input.
 *
 * @example
 * ```ts
 * parseServeArgs(["--stdio", "--script", "m.json", "--kill-grace-ms", "500"]).killGraceMs; // 500
 * ```
 */
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
      case "--max-connections":
        options.maxConnections = positive(name, value());
        break;
      case "--script":
        options.script = value();
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
    const wsOnly = ["--token-file", "--allow-origin", "--allow-remote", "--ui", "--ui-dir", "--max-send-queue-bytes", "--max-connections"];
    const given = wsOnly.filter((flag) => seen.has(flag));
    if (given.length > 0) throw new Error(`${given.join(", ")} need${given.length === 1 ? "s" : ""} --ws [ADDR:]PORT`);
  }
  if (options.script === undefined && options.models.size === 0) throw new Error("serve needs --script PATH or --model NAME=PATH");
  return options;
}

/**
 * Loads the models `options` name: `--script` as `default` (unless a `--model default=` overrides
 * it), plus every `--model`, and picks the default model.
 *
 * @example
 * ```ts
 * const { models, defaultModel } = loadServeModels(parseServeArgs(["--stdio", "--script", "m.json"]));
 * ```
 */
export function loadServeModels(options: ServeOptions): Pick<MuseHostOptions, "models" | "defaultModel"> {
  const models = new Map<string, ScriptedModel>();
  if (options.script !== undefined) models.set("default", loadScriptedModel(options.script, "default"));
  for (const [name, path] of options.models) models.set(name, loadScriptedModel(path, name));
  const defaultModel = options.defaultModel ?? (models.has("default") ? "default" : ([...models.keys()][0] ?? "default"));
  if (!models.has(defaultModel)) throw new Error(`--default-model ${defaultModel} is not a loaded model`);
  return { models, defaultModel };
}

/** The environment variable a WebSocket token may come from (when there is no `--token-file`). */
const TOKEN_ENV = "MUSE_HOST_TOKEN";

/**
 * The WebSocket token: `--token-file` (its first line, surrounding whitespace trimmed), else
 * `MUSE_HOST_TOKEN` (then removed from this process's environment, so tools the host runs never
 * inherit it), else 32 random bytes, base64url. Throws a one-line `Error` that names the file, never the token.
 */
function webSocketToken(options: ServeOptions): string {
  let token: string | undefined;
  if (options.tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(options.tokenFile, "utf8");
    } catch (error) {
      throw new Error(`--token-file ${options.tokenFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
    }
    token = (text.split(/\r?\n/)[0] ?? "").trim();
    if (token === "") throw new Error(`--token-file ${options.tokenFile}: the file's first line is empty`);
  } else if (process.env[TOKEN_ENV] !== undefined) {
    token = process.env[TOKEN_ENV].trim();
    if (token === "") throw new Error(`${TOKEN_ENV} is set but empty`);
  }
  // Whatever the source, the shell tool's children must not see it.
  delete process.env[TOKEN_ENV];
  return token ?? randomBytes(32).toString("base64url");
}

/**
 * The Stop-button app's files when `--ui` names no `--ui-dir`: `dist/demo/` of this package. The
 * built CLI (`dist/host/cli.js`) finds it at `../demo/`; run from the sources (`src/host/runCli.ts`
 * under tsx), at `../../dist/demo/`.
 */
function defaultUiDir(): URL {
  return new URL(import.meta.url.endsWith(".ts") ? "../../dist/demo/" : "../demo/", import.meta.url);
}

/**
 * Runs the `muse-host` command line and resolves with its exit code. `serve --stdio` resolves
 * when stdin ends, stdout breaks (the client stopped reading), or SIGTERM/SIGINT/SIGHUP arrives;
 * `serve --ws` alone on a signal (its WebSocket connections get their terminals, then close 1001),
 * after running turns are cancelled (cause `disposed`) and their tools drained: 0, or 1 when a
 * session-log write failed. A second signal during the drain SIGKILLs every known tool process
 * group and resolves at once with 128 + the signal number. Logs go to stderr; stdout carries only
 * protocol.
 *
 * @example
 * ```ts
 * process.exitCode = await runCli(process.argv.slice(2));
 * ```
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  // stderr is only our log: a client that closed it (killed with all three pipes) must not crash
  // the host mid-drain with an unhandled EPIPE, which would leave its turns without terminals.
  process.stderr.on("error", () => {});
  const err = (line: string) => process.stderr.write(`muse-host: ${line}\n`);
  const [command, ...rest] = argv;
  if (command === "--version") {
    process.stdout.write(`${HOST_VERSION}\n`);
    return 0;
  }
  if (command === "--help" || command === "-h") {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const usageError = (message: string) => {
    err(message);
    process.stderr.write(`${USAGE}\n(muse-host --help says what each flag does)\n`);
    return 2;
  };
  if (command !== "serve") return usageError(command === undefined ? "missing command" : `unknown command ${command}`);
  let options: ServeOptions;
  try {
    options = parseServeArgs(rest);
  } catch (error) {
    return usageError((error as Error).message);
  }
  let token: string | undefined;
  if (options.ws !== undefined) {
    if (!isLoopbackAddress(options.ws.address) && !options.allowRemote) {
      err(
        `refusing to listen on ${options.ws.address}, which is not a loopback address: pass --allow-remote to allow other machines (and put a TLS proxy in front)`,
      );
      return 2;
    }
    try {
      token = webSocketToken(options);
    } catch (error) {
      err((error as Error).message);
      return 2;
    }
  }
  let onFatal: (error: Error) => void = () => {};
  let host;
  try {
    const hostOptions: MuseHostOptions = { ...loadServeModels(options), logger: err, onFatal: (error) => onFatal(error) };
    if (options.dataDir !== undefined) hostOptions.dataDir = options.dataDir;
    if (options.killGraceMs !== undefined) hostOptions.killGraceMs = options.killGraceMs;
    if (options.outputCapBytes !== undefined) hostOptions.outputCapBytes = options.outputCapBytes;
    if (options.maxOpenLogs !== undefined) hostOptions.maxOpenLogs = options.maxOpenLogs;
    if (options.maxLiveSessions !== undefined) hostOptions.maxLiveSessions = options.maxLiveSessions;
    if (options.lockStaleMs !== undefined) hostOptions.lockStaleMs = options.lockStaleMs;
    host = createHost(hostOptions);
  } catch (error) {
    // A model file that cannot be read or is not a valid script: the message names the file (and
    // line:column). A data dir held by another live host: the message names the holder.
    err((error as Error).message);
    return error instanceof DataDirInUseError ? 3 : 2;
  }
  const maxMessageBytes = options.maxMessageBytes;
  let webSocket: WebSocketHostServer | undefined;
  if (options.ws !== undefined && token !== undefined) {
    try {
      webSocket = await serveWebSocket(host, {
        token,
        address: options.ws.address,
        port: options.ws.port,
        allowRemote: options.allowRemote,
        allowOrigins: options.allowOrigins,
        logger: err,
        ...(options.ui ? { uiDir: options.uiDir ?? defaultUiDir() } : {}),
        ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
        ...(options.maxSendQueueBytes === undefined ? {} : { maxSendQueueBytes: options.maxSendQueueBytes }),
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
      });
    } catch (error) {
      err((error as Error).message);
      await host.shutdown();
      return 2;
    }
  }
  const transport = options.stdio
    ? createStdioTransport(process.stdin, process.stdout, maxMessageBytes === undefined ? {} : { maxLineBytes: maxMessageBytes })
    : undefined;
  if (transport !== undefined) host.connect(transport);
  const served = host;
  return await new Promise<number>((resolve) => {
    let stopping = false;
    const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
    const codes: Record<(typeof signals)[number], number> = { SIGTERM: 143, SIGINT: 130, SIGHUP: 129 };
    const handlers = new Map<NodeJS.Signals, () => void>();
    const detach = () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    };
    const finish = (code: number) => {
      detach();
      // Pipes to stdout are synchronous on POSIX; the empty write confirms everything is flushed.
      if (process.stdout.destroyed || !process.stdout.writable) resolve(code);
      else process.stdout.write("", () => resolve(code));
    };
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      err(`${why}: cancelling running turns and draining tools`);
      void served
        .shutdown()
        .then(() => webSocket?.close())
        .then(() => finish(served.failure === undefined ? 0 : 1));
    };
    for (const signal of signals) {
      const handler = () => {
        if (!stopping) return stop(signal);
        // A second signal while draining: stop waiting. SIGKILL every tool group still known.
        const groups = killAllToolGroups("SIGKILL");
        err(`${signal} again: killed ${groups} tool process group(s); exiting without draining`);
        detach();
        resolve(codes[signal]);
      };
      handlers.set(signal, handler);
      process.on(signal, handler);
    }
    onFatal = (error) => stop(`session log write failed (${error.message})`);
    transport?.onClose(() => stop("stdin closed"));
    // Only now, with every signal handled: a supervisor may signal the host as soon as it reads this.
    const where = webSocket === undefined ? "stdio" : `${webSocket.url}${transport === undefined ? "" : " and stdio"}`;
    err(`serving on ${where} (data ${served.dataDir}, ${basename(process.execPath)} ${process.version})`);
    // The token's one appearance: in the fragment, which a browser never sends to a server.
    if (webSocket !== undefined && token !== undefined) err(`open ${webSocket.pageUrl}#token=${encodeURIComponent(token)}`);
  });
}
