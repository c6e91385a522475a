/**
 * spawnReferenceHost: start the reference host of `@muse-code/host` (an optional peer: installed
 * beside the SDK, or a workspace of this repository), with no PATH involved. It runs
 * `process.execPath` on that package's `muse-host` bin (from a source checkout under tsx:
 * `src/serve/main.ts` with `--import tsx`), and `exampleModelPath` finds the example models in
 * its `models/` folder. With `webSocket` it serves WebSocket too, and reads the URL and token from
 * the host's ready line.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LineSplitter } from "@muse-code/protocol/lineSplitter.js";
import { spawnHost, type SpawnedHost, type SpawnHostOptions } from "./spawnHost.js";

/** The package the reference host and its example models ship in. */
const HOST_PACKAGE = "@muse-code/host";

/**
 * The operator's off-switch of `muse serve` (the host's serveSwitch.ts reads it). Every host
 * spawned here gets it on, whatever the environment says: an app that spawns the package's own
 * host asked for it by name.
 */
const SWITCHED_ON = { MUSE_EXPERIMENTAL_SDK_ENABLED: "1" } as const;

/**
 * The example models shipped in `@muse-code/host`'s `models/` folder:
 * - `hello`: one short assistant message, streamed;
 * - `run-tests`: a `shell` tool that prints a test line every ~100 ms for ~10 s (it stops on
 *   SIGTERM after a short drain, so a cancel mid-tool ends promptly), then a final message.
 *
 * @example
 * ```ts
 * const name: ExampleModelName = "run-tests";
 * const host = spawnReferenceHost({ script: exampleModelPath(name) });
 * ```
 */
export type ExampleModelName = "hello" | "run-tests";

const EXAMPLE_MODELS: readonly ExampleModelName[] = ["hello", "run-tests"];

/**
 * Options of {@link spawnReferenceHost}: what the host serves, plus every {@link SpawnHostOptions}
 * option but `command` and `args` (connection options such as `defaultTimeoutMs`, `env`, `cwd`,
 * `stderr`, `wrapChannel`, and `killGraceMs`, the grace of each step of `close()`). Relative paths
 * are taken from `process.cwd()`, not from `cwd`. The host's environment is `env` (or
 * `process.env`) with `MUSE_EXPERIMENTAL_SDK_ENABLED=1`, so the operator's off-switch of
 * `muse serve` never stops a host an app spawns by name.
 *
 * @example
 * ```ts
 * const options: SpawnReferenceHostOptions = {
 *   script: exampleModelPath("run-tests"),
 *   models: { hello: exampleModelPath("hello") },
 *   toolKillGraceMs: 1_000,
 *   stderr: "ignore",
 *   defaultTimeoutMs: 30_000,
 * };
 * const host = spawnReferenceHost(options);
 * ```
 */
export interface SpawnReferenceHostOptions extends Omit<SpawnHostOptions, "command" | "args"> {
  /** Scripted model file served as the model `default` (`--script`). @defaultValue `exampleModelPath("hello")` */
  script?: string;
  /** Directory for session logs, so a restarted host can resume them (`--data`). @defaultValue a temp dir the host removes on exit */
  data?: string;
  /** More scripted models, name → file (`--model NAME=PATH`), chosen per session by `session/create {model}`. */
  models?: Readonly<Record<string, string>>;
  /** Model of a `session/create` without `model` (`--default-model`). @defaultValue "default" */
  defaultModel?: string;
  /** On cancel, how long the host waits after SIGTERM before it SIGKILLs a tool's process group (`--kill-grace-ms`). @unit milliseconds @defaultValue 2 000 */
  toolKillGraceMs?: number;
  /** Output kept per tool call; the rest is cut (`--output-cap-bytes`). @unit bytes @defaultValue 65 536 */
  outputCapBytes?: number;
  /** More `muse-host serve` arguments, appended as given. */
  extraArgs?: readonly string[];
  /**
   * Serve WebSocket too (`--ws`), beside the stdio connection this returns: the result then has a
   * `webSocket` promise of the URL and token (see {@link SpawnedReferenceHost}).
   */
  webSocket?: ReferenceHostWebSocketOptions;
}

/**
 * The WebSocket side of {@link spawnReferenceHost} (`muse-host serve --stdio --ws …`).
 *
 * @example
 * ```ts
 * const options: ReferenceHostWebSocketOptions = { port: 0, ui: true, allowOrigins: ["http://localhost:5173"], readyTimeoutMs: 10_000 };
 * const host = spawnReferenceHost({ webSocket: options });
 * ```
 */
export interface ReferenceHostWebSocketOptions {
  /** The port to listen on, on 127.0.0.1. @unit TCP port @defaultValue 0 (a free port; the real one is in the result) */
  port?: number;
  /** The token clients must present. Passed in the host's environment (`MUSE_HOST_TOKEN`), never on its command line. @defaultValue 32 random bytes the host makes */
  token?: string;
  /** Serve the Stop-button app at `/` (`--ui`), from `@muse-code/host`'s `dist/demo/` or from `uiDir`. @defaultValue false */
  ui?: boolean;
  /** Serve the app's files from this directory (`--ui-dir`; implies `ui`). */
  uiDir?: string;
  /** More browser origins allowed to connect (`--allow-origin`), beside the host's own. */
  allowOrigins?: readonly string[];
  /** How long to wait for the host's ready line. @unit milliseconds @defaultValue 15 000 */
  readyTimeoutMs?: number;
}

/**
 * Where a {@link spawnReferenceHost} with `webSocket` serves: read from the host's ready line
 * `muse-host: open http://127.0.0.1:PORT/#token=TOKEN`, which is not passed on to `stderr`.
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 *
 * await using host = spawnReferenceHost({ webSocket: {} });
 * const { url, token }: ReferenceHostWebSocket = await host.webSocket;
 * const client = await connectWebSocket(url, { token });
 * ```
 */
export interface ReferenceHostWebSocket {
  /** `ws://127.0.0.1:PORT/msp`: pass it to `connectWebSocket` with `token`. */
  url: string;
  /** The bearer token (give it to `connectWebSocket`'s `token`; never put it in a URL's query). */
  token: string;
  /** `http://127.0.0.1:PORT/#token=…`: the page to open in a browser (served with `ui`). */
  pageUrl: string;
  /** The port the host listens on. @unit TCP port */
  port: number;
}

/**
 * A {@link SpawnedHost} started with `webSocket`: its stdio connection, and `webSocket`, which
 * resolves once the host listens. It rejects with an `Error` that says why: the host exited first
 * (its exit code or signal in the message, its reason on stderr), or it printed no ready line
 * within `readyTimeoutMs` (the host is left running: `close()` it).
 *
 * @example
 * ```ts
 * await using host: SpawnedReferenceHost = spawnReferenceHost({ webSocket: { port: 0 } });
 * const { pageUrl } = await host.webSocket;
 * console.log(`open ${pageUrl}`);
 * ```
 */
export type SpawnedReferenceHost = SpawnedHost & { readonly webSocket: Promise<ReferenceHostWebSocket> };

let hostRootCache: string | undefined;

/** This module's own file: `import.meta.url` (the CJS build gets it from tsup's shim). */
function thisFile(): string {
  return fileURLToPath(import.meta.url);
}

/**
 * The root of the installed `@muse-code/host` (in a checkout, its workspace folder): resolved from
 * this module first, then from `process.cwd()`. The host is an optional peer of the SDK, so an app
 * that never spawns it does not install it; one that does gets an error naming the command.
 */
function hostRoot(): string {
  if (hostRootCache !== undefined) return hostRootCache;
  for (const from of [thisFile(), join(process.cwd(), "package.json")]) {
    try {
      return (hostRootCache = dirname(createRequire(from).resolve(`${HOST_PACKAGE}/package.json`)));
    } catch {
      // not installed where this one looks: try the next
    }
  }
  throw new Error(`spawnReferenceHost needs the reference host, the package ${HOST_PACKAGE}, which is not installed: npm install ${HOST_PACKAGE}`);
}

/** How to run the host's `muse-host` bin: node arguments before `serve`. */
function hostEntry(): string[] {
  const root = hostRoot();
  const source = join(root, "src", "serve", "main.ts");
  if (thisFile().endsWith(".ts") && existsSync(source)) {
    // Running from the sources (tests, recipes under tsx): the built host may be stale or absent.
    let tsx: string;
    try {
      tsx = createRequire(join(root, "package.json")).resolve("tsx");
    } catch {
      throw new Error(`spawnReferenceHost: running from source needs tsx to start ${source} (npm install); or build the packages and use dist/`);
    }
    return ["--import", pathToFileURL(tsx).href, source];
  }
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin?: Record<string, string> };
  const cli = join(root, manifest.bin?.["muse-host"] ?? "dist/serve/main.js");
  if (!existsSync(cli)) throw new Error(`spawnReferenceHost: the reference host ${cli} is missing (build ${HOST_PACKAGE}: npm run build)`);
  return [cli];
}

/**
 * The absolute path of an example model shipped in `@muse-code/host`'s `models/` folder (see
 * {@link ExampleModelName}). Throws a `RangeError` for a name it does not ship, and an `Error`
 * naming the install command when `@muse-code/host` is not installed.
 *
 * @example
 * ```ts
 * const host = spawnReferenceHost({ script: exampleModelPath("run-tests") });
 * ```
 */
export function exampleModelPath(name: ExampleModelName): string {
  if (!EXAMPLE_MODELS.includes(name))
    throw new RangeError(`exampleModelPath: no example model ${JSON.stringify(name)} (shipped: ${EXAMPLE_MODELS.join(", ")})`);
  return join(hostRoot(), "models", `${name}.json`);
}

function nonNegativeInteger(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== "number") throw new TypeError(`spawnReferenceHost: ${name} must be a number, got ${typeof value}`);
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`spawnReferenceHost: ${name} must be a non-negative integer, got ${value}`);
}

function path(name: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`spawnReferenceHost: ${name} must be a non-empty path string`);
  return resolve(value);
}

/**
 * Spawn the reference MSP host of `@muse-code/host` (`muse-host serve --stdio`; install it beside
 * the SDK) and connect to it: the same {@link SpawnedHost} as {@link spawnHost} returns. It runs
 * on this Node (`process.execPath`), from that package's files, so it needs no PATH and works from
 * any directory. Without `@muse-code/host` installed it throws an `Error` naming the install command. Bad options throw a `TypeError`/`RangeError` at once; a host that fails to start
 * (e.g. a model file with an error) settles pending work as `connectionClosed`, its reason on
 * stderr. `await using` closes it at the end of the block.
 *
 * With `webSocket`, the host serves WebSocket on 127.0.0.1 too (`--stdio --ws`), and the result's
 * `webSocket` promise gives the URL and token. The host still lives as long as this stdio
 * connection: `close()` stops it, WebSocket clients included.
 *
 * @example
 * ```ts
 * import { spawnReferenceHost, exampleModelPath } from "@muse-code/sdk/node";
 *
 * await using host = spawnReferenceHost({ script: exampleModelPath("hello"), stderr: "ignore" });
 * const { sessionId } = await host.command("session/create", {});
 * const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "Hi!" }] });
 * console.log((await turn.completed).terminal); // "completed"
 * ```
 * @example
 * ```ts
 * import { WebSocket } from "ws"; // Node 20; Node 22 has a global WebSocket
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 * import { spawnReferenceHost } from "@muse-code/sdk/node";
 *
 * await using host = spawnReferenceHost({ webSocket: { port: 0 } });
 * const { url, token, pageUrl } = await host.webSocket;
 * console.log(`a browser opens ${pageUrl}`);
 * const client = await connectWebSocket(url, { token, WebSocket });
 * const { sessionId } = await client.command("session/create", {});
 * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "Hi!" }] });
 * console.log((await turn.completed).terminal); // "completed"
 * await client.close();
 * ```
 */
export function spawnReferenceHost(options: SpawnReferenceHostOptions & { webSocket: ReferenceHostWebSocketOptions }): SpawnedReferenceHost;
/**
 * Spawn the reference MSP host of `@muse-code/host` over stdio only (no `webSocket`
 * option): see the first overload.
 *
 * @example
 * ```ts
 * await using host = spawnReferenceHost({ script: exampleModelPath("run-tests"), stderr: "ignore" });
 * console.log(host.pid);
 * ```
 */
export function spawnReferenceHost(options?: SpawnReferenceHostOptions): SpawnedHost;
export function spawnReferenceHost(options: SpawnReferenceHostOptions = {}): SpawnedHost | SpawnedReferenceHost {
  const { script, data, models = {}, defaultModel, toolKillGraceMs, outputCapBytes, extraArgs = [], webSocket, ...spawnOptions } = options;
  nonNegativeInteger("toolKillGraceMs", toolKillGraceMs);
  nonNegativeInteger("outputCapBytes", outputCapBytes);
  if (!Array.isArray(extraArgs) || !extraArgs.every((a) => typeof a === "string"))
    throw new TypeError("spawnReferenceHost: extraArgs must be an array of strings");
  const args = [...hostEntry(), "serve", "--stdio", "--script", script === undefined ? exampleModelPath("hello") : path("script", script)];
  if (data !== undefined) args.push("--data", path("data", data));
  for (const [name, file] of Object.entries(models)) {
    if (name === "" || name.includes("="))
      throw new RangeError(`spawnReferenceHost: a model name must be non-empty and without "=", got ${JSON.stringify(name)}`);
    args.push("--model", `${name}=${path(`models.${name}`, file)}`);
  }
  if (defaultModel !== undefined) {
    if (typeof defaultModel !== "string" || defaultModel === "") throw new TypeError("spawnReferenceHost: defaultModel must be a non-empty string");
    args.push("--default-model", defaultModel);
  }
  if (toolKillGraceMs !== undefined) args.push("--kill-grace-ms", String(toolKillGraceMs));
  if (outputCapBytes !== undefined) args.push("--output-cap-bytes", String(outputCapBytes));
  args.push(...extraArgs);
  const switchedOn = { ...spawnOptions, env: { ...(spawnOptions.env ?? process.env), ...SWITCHED_ON } };
  if (webSocket === undefined) return spawnHost({ ...switchedOn, command: process.execPath, args });
  return spawnWithWebSocket(switchedOn, args, webSocket);
}

/** The ready line's prefix; the line is `muse-host: open http://HOST:PORT/#token=TOKEN`. */
const READY_PREFIX = "muse-host: open ";

function spawnWithWebSocket(spawnOptions: Omit<SpawnHostOptions, "command" | "args">, args: string[], ws: ReferenceHostWebSocketOptions): SpawnedReferenceHost {
  if (typeof ws !== "object" || ws === null) throw new TypeError("spawnReferenceHost: webSocket must be an object");
  const { port = 0, token, ui = false, uiDir, allowOrigins = [], readyTimeoutMs = 15_000 } = ws;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`spawnReferenceHost: webSocket.port must be an integer 0..65535, got ${String(port)}`);
  if (token !== undefined && (typeof token !== "string" || token === "")) throw new TypeError("spawnReferenceHost: webSocket.token must be a non-empty string");
  nonNegativeInteger("webSocket.readyTimeoutMs", readyTimeoutMs);
  if (!Array.isArray(allowOrigins) || !allowOrigins.every((o) => typeof o === "string"))
    throw new TypeError("spawnReferenceHost: webSocket.allowOrigins must be an array of strings");
  args.splice(args.indexOf("--stdio") + 1, 0, "--ws", `127.0.0.1:${port}`);
  for (const origin of allowOrigins) args.push("--allow-origin", origin);
  if (uiDir !== undefined) args.push("--ui-dir", path("webSocket.uiDir", uiDir));
  else if (ui) args.push("--ui");
  const { stderr = "inherit", env, ...rest } = spawnOptions;
  // The token goes in the environment (the host removes it from its own): argv is visible to every user in ps.
  const childEnv = token === undefined ? env : { ...(env ?? process.env), MUSE_HOST_TOKEN: token };
  const host = spawnHost({ ...rest, ...(childEnv === undefined ? {} : { env: childEnv }), stderr: "pipe", command: process.execPath, args });
  const output = host.process.stderr;
  const ready = new Promise<ReferenceHostWebSocket>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new Error(`spawnReferenceHost: the host did not print its ready line within ${readyTimeoutMs} ms`))),
      readyTimeoutMs,
    );
    void host.exited.then(({ exitCode, signal }) =>
      settle(() =>
        reject(new Error(`spawnReferenceHost: the host exited (${signal ?? `code ${exitCode}`}) before serving WebSocket; its reason is on stderr`)),
      ),
    );
    const lines = new LineSplitter((raw) => {
      const line = raw.replace(/\r$/, "");
      if (!line.startsWith(READY_PREFIX)) {
        if (stderr === "inherit") process.stderr.write(`${line}\n`);
        return;
      }
      const page = new URL(line.slice(READY_PREFIX.length));
      const found = new URLSearchParams(page.hash.slice(1)).get("token") ?? "";
      const portOf = Number(page.port);
      settle(() => resolve({ url: `ws://${page.host}/msp`, token: found, pageUrl: page.href, port: portOf }));
    });
    output?.on("data", (chunk: Buffer) => lines.push(chunk));
  });
  ready.catch(() => {}); // a caller that never asks for it is not an unhandled rejection
  return Object.assign(host, { webSocket: ready });
}
