/** The `muse-host` command line: runs `serve --stdio` / `serve --ws` (or `--help`, `--version`) and says how it ended. */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { tokenFromFile } from "@muse-code/protocol/tokenFile.js";
import { ACP_MODEL_NAME, acpModels } from "../bridge/acpModels.js";
import { CODEX_MODEL_NAME, codexModels } from "../bridge/codexModels.js";
import { loadScriptedModel } from "../model/modelLoader.js";
import type { ScriptedModel } from "../model/scriptedModel.js";
import { DataDirInUseError } from "../log/dataDirLock.js";
import { createHost } from "../server/museHost.js";
import { HOST_VERSION, type MuseHostOptions } from "../server/hostOptions.js";
import { HELP, parseServeArgs, USAGE, type ServeOptions } from "./serveArgs.js";
import { serveRefusal } from "./serveSwitch.js";
import { killAllToolGroups } from "../tools/shellTool.js";
import { createStdioTransport } from "../transport/stdioTransport.js";
import { isLoopbackAddress } from "../transport/webSocketAccess.js";
import { serveWebSocket, type WebSocketHostServer } from "../transport/webSocketServer.js";

/**
 * Loads the models `options` name: `--script` as `default` (unless a `--model default=` overrides
 * it), plus every `--model`, and picks the default model.
 */
export function loadServeModels(options: ServeOptions): Pick<MuseHostOptions, "models" | "defaultModel" | "agent"> {
  if (options.agent === "acp") {
    const [command = "", ...args] = options.agentCommand ?? [];
    return { models: acpModels(), defaultModel: ACP_MODEL_NAME, agent: { kind: "acp", command, args } };
  }
  if (options.agent === "codex") {
    return {
      models: codexModels(),
      defaultModel: CODEX_MODEL_NAME,
      agent: { kind: "codex", ...(options.agentBin === undefined ? {} : { bin: options.agentBin }) },
    };
  }
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
 * The WebSocket token: `--token-file` (read by {@link tokenFromFile}, as `muse` reads it), else
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
    token = tokenFromFile(text, options.tokenFile);
  } else if (process.env[TOKEN_ENV] !== undefined) {
    token = process.env[TOKEN_ENV].trim();
    if (token === "") throw new Error(`${TOKEN_ENV} is set but empty`);
  }
  // Whatever the source, the shell tool's children must not see it.
  delete process.env[TOKEN_ENV];
  return token ?? randomBytes(32).toString("base64url");
}

/**
 * The Stop-button app's files when `--ui` names no `--ui-dir`: `dist/demo/` of this package, found
 * from the nearest package.json above this module. This module may run from the sources (tsx),
 * from `dist/serve/main.js`, or from a shared chunk of the build (`muse serve` loads it through
 * `@muse-code/host`), so a fixed relative path would not do.
 */
function defaultUiDir(): URL {
  for (let dir = new URL(".", import.meta.url); ; dir = new URL("..", dir)) {
    if (existsSync(new URL("package.json", dir))) return new URL("dist/demo/", dir);
    if (new URL("..", dir).href === dir.href) return new URL("../demo/", import.meta.url);
  }
}

/**
 * Runs the host's command line (`muse serve …`, or its alias `muse-host serve …`: `argv` starts
 * with `serve`) and resolves with its exit code. `serve --stdio` resolves
 * when stdin ends, stdout breaks (the client stopped reading), or SIGTERM/SIGINT/SIGHUP arrives;
 * `serve --ws` alone on a signal (its WebSocket connections get their terminals, then close 1001),
 * after running turns are cancelled (cause `disposed`) and their tools drained: 0, or 1 when a
 * session-log write failed. A second signal during the drain SIGKILLs every known tool process
 * group and resolves at once with 128 + the signal number. With `MUSE_EXPERIMENTAL_SDK_ENABLED`
 * off (`0`, `false`, `off`) `serve` resolves 4 at once, with any value neither on nor off 2, each
 * after one line on stderr. Logs go to stderr; stdout carries only protocol.
 *
 * @example
 * ```ts
 * process.exitCode = await runHostCli(process.argv.slice(2));
 * ```
 */
export async function runHostCli(argv: readonly string[]): Promise<number> {
  // stderr is only our log: a client that closed it (killed with all three pipes) must not crash
  // the host mid-drain with an unhandled EPIPE, which would leave its turns without terminals.
  process.stderr.on("error", () => {});
  const err = (line: string) => process.stderr.write(`muse-host: ${line}\n`);
  const [command, ...rest] = argv;
  if (command === "--version") {
    process.stdout.write(`${HOST_VERSION}\n`);
    return 0;
  }
  // `muse-host --help`, and `muse-host serve --help` as `muse run --help` is: the help, whatever else is given.
  if (command === "--help" || command === "-h" || (command === "serve" && rest.some((arg) => arg === "--help" || arg === "-h"))) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const usageError = (message: string) => {
    err(message);
    process.stderr.write(`${USAGE}\n(muse-host --help says what each flag does)\n`);
    return 2;
  };
  if (command !== "serve") return usageError(command === undefined ? "missing command" : `unknown command ${command}`);
  // The operator's off-switch, before any flag: switched off, the host does not start at all.
  const refusal = serveRefusal(process.env);
  if (refusal !== undefined) {
    err(refusal.line);
    return refusal.code;
  }
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
    if (options.turnTimeLimitMs !== undefined) hostOptions.turnTimeLimitMs = options.turnTimeLimitMs;
    if (options.maxSubagentDepth !== undefined) hostOptions.maxSubagentDepth = options.maxSubagentDepth;
    if (options.maxSubagentsPerTurn !== undefined) hostOptions.maxSubagentsPerTurn = options.maxSubagentsPerTurn;
    if (options.maxSessionsPerConnection !== undefined) hostOptions.maxSessionsPerConnection = options.maxSessionsPerConnection;
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
        ...(options.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: options.stallTimeoutMs }),
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
    // The end of stdin, or stdout failing (the transport says which: "stdout failed: EPIPE: …").
    transport?.onClose((why) => stop(why ?? "stdin closed"));
    // Only now, with every signal handled: a supervisor may signal the host as soon as it reads this.
    const where = webSocket === undefined ? "stdio" : `${webSocket.url}${transport === undefined ? "" : " and stdio"}`;
    err(`serving on ${where} (data ${served.dataDir}, ${basename(process.execPath)} ${process.version})`);
    // The token's one appearance: in the fragment, which a browser never sends to a server.
    if (webSocket !== undefined && token !== undefined) err(`open ${webSocket.pageUrl}#token=${encodeURIComponent(token)}`);
  });
}
