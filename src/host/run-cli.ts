/** The `muse-host` command line: argument parsing and `serve --stdio`. */
import { basename } from "node:path";
import { loadScriptedModel, type ScriptedModel } from "./scripted-model.js";
import { DataDirInUseError, DEFAULT_LOCK_STALE_MS } from "./data-dir-lock.js";
import { createHost, HOST_VERSION, type MuseHostOptions } from "./muse-host.js";
import { DEFAULT_MAX_OPEN_LOGS } from "./session-log.js";
import { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES, killAllToolGroups } from "./shell-tool.js";
import { createStdioTransport } from "./stdio-transport.js";

/**
 * Parsed `muse-host serve` options.
 *
 * @example
 * ```ts
 * const options: ServeOptions = parseServeArgs(["--stdio", "--script", "m.json"]);
 * ```
 */
export interface ServeOptions {
  transport: "stdio";
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
export const USAGE = `usage: muse-host serve --stdio --script PATH [--data DIR] [--model NAME=PATH ...]
                       [--default-model NAME] [--kill-grace-ms N] [--output-cap-bytes N]
                       [--max-open-logs N] [--lock-stale-ms N]
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

The reference MSP host: a scripted model and a real shell tool, served over stdio.
stdout carries only protocol (NDJSON JSON-RPC); logs go to stderr.

serve flags (each also takes --flag=VALUE):
  --stdio                serve MSP on stdin/stdout, one JSON-RPC message per line (required)
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
  --lock-stale-ms N      milliseconds after which the --data lock of a host on another machine,
                         not refreshed, is taken over; at least 2000 (default: ${DEFAULT_LOCK_STALE_MS})

other commands:
  --version              print the host version and exit
  --help, -h             print this help and exit

Exit: 0 after stdin EOF or SIGTERM/SIGINT/SIGHUP (running turns cancelled, tools drained); a
second signal stops the drain (128 + signal number); 1 if a session log could not be written
or the data dir's lock was lost; 2 on a bad command line, model file, or an unsafe data dir
(DIR/sessions a symlink); 3 if another live host holds DIR.`;

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
  const options: ServeOptions = { transport: "stdio", models: new Map() };
  let stdio = false;
  for (let i = 0; i < args.length; i++) {
    const flag = args[i] ?? "";
    const eqAt = flag.startsWith("--") ? flag.indexOf("=") : -1;
    const name = eqAt > 0 ? flag.slice(0, eqAt) : flag;
    const inline = eqAt > 0 ? flag.slice(eqAt + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const v = args[++i];
      if (v === undefined) throw new Error(`${name} needs a value`);
      return v;
    };
    switch (name) {
      case "--stdio":
        stdio = true;
        break;
      case "--ws":
        throw new Error("--ws is not implemented yet; use --stdio");
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
  if (!stdio) throw new Error("serve needs a transport: --stdio");
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

/**
 * Runs the `muse-host` command line and resolves with its exit code. `serve --stdio` resolves
 * when stdin ends, stdout breaks (the client stopped reading), or SIGTERM/SIGINT/SIGHUP arrives,
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
  let onFatal: (error: Error) => void = () => {};
  let host;
  try {
    const hostOptions: MuseHostOptions = { ...loadServeModels(options), logger: err, onFatal: (error) => onFatal(error) };
    if (options.dataDir !== undefined) hostOptions.dataDir = options.dataDir;
    if (options.killGraceMs !== undefined) hostOptions.killGraceMs = options.killGraceMs;
    if (options.outputCapBytes !== undefined) hostOptions.outputCapBytes = options.outputCapBytes;
    if (options.maxOpenLogs !== undefined) hostOptions.maxOpenLogs = options.maxOpenLogs;
    if (options.lockStaleMs !== undefined) hostOptions.lockStaleMs = options.lockStaleMs;
    host = createHost(hostOptions);
  } catch (error) {
    // A model file that cannot be read or is not a valid script: the message names the file (and
    // line:column). A data dir held by another live host: the message names the holder.
    err((error as Error).message);
    return error instanceof DataDirInUseError ? 3 : 2;
  }
  const transport = createStdioTransport(process.stdin, process.stdout);
  host.connect(transport);
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
      void served.shutdown().then(() => finish(served.failure === undefined ? 0 : 1));
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
    transport.onClose(() => stop("stdin closed"));
    // Only now, with every signal handled: a supervisor may signal the host as soon as it reads this.
    err(`serving on stdio (data ${served.dataDir}, ${basename(process.execPath)} ${process.version})`);
  });
}
