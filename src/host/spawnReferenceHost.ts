/**
 * spawnReferenceHost: start the reference host that ships in this package, with no PATH and no
 * repository paths involved. It runs `process.execPath` on the package's own built
 * `dist/host/cli.js` (from a source checkout under tsx: `src/host/cli.ts` with `--import tsx`),
 * and `exampleModelPath` finds the example models shipped in the package's `models/` folder.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnHost, type SpawnedHost, type SpawnHostOptions } from "../node/spawnHost.js";

const PACKAGE_NAME = "@muse-code/sdk";

/**
 * The example models shipped in the package's `models/` folder:
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
 * are taken from `process.cwd()`, not from `cwd`.
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
}

let packageRootCache: string | undefined;

/** This module's own file: `import.meta.url` (the CJS build gets it from tsup's shim). */
function thisFile(): string {
  return fileURLToPath(import.meta.url);
}

/** The root of the installed package (or of the checkout): the nearest package.json named @muse-code/sdk above this module. */
function packageRoot(): string {
  if (packageRootCache !== undefined) return packageRootCache;
  const start = dirname(thisFile());
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === PACKAGE_NAME) return (packageRootCache = dir);
      } catch {
        // not a readable manifest: keep looking
      }
    }
    if (dirname(dir) === dir) throw new Error(`${PACKAGE_NAME}: cannot find the package root (a package.json named ${PACKAGE_NAME}) above ${start}`);
  }
}

/** How to run the host CLI: node arguments before `serve`. */
function hostEntry(): string[] {
  const root = packageRoot();
  if (thisFile().endsWith(".ts")) {
    // Running from the sources (tests, recipes under tsx): the built CLI may be stale or absent.
    let tsx: string;
    try {
      tsx = createRequire(join(root, "package.json")).resolve("tsx");
    } catch {
      throw new Error(`${PACKAGE_NAME}: running from source needs tsx to start src/host/cli.ts (npm install); or build the package and use dist/`);
    }
    return ["--import", pathToFileURL(tsx).href, join(root, "src", "host", "cli.ts")];
  }
  const cli = join(root, "dist", "host", "cli.js");
  if (!existsSync(cli)) throw new Error(`${PACKAGE_NAME}: the reference host ${cli} is missing (run npm run build)`);
  return [cli];
}

/**
 * The absolute path of an example model shipped in the package's `models/` folder (see
 * {@link ExampleModelName}). Throws a `RangeError` for a name it does not ship.
 *
 * @example
 * ```ts
 * const host = spawnReferenceHost({ script: exampleModelPath("run-tests") });
 * ```
 */
export function exampleModelPath(name: ExampleModelName): string {
  if (!EXAMPLE_MODELS.includes(name))
    throw new RangeError(`exampleModelPath: no example model ${JSON.stringify(name)} (shipped: ${EXAMPLE_MODELS.join(", ")})`);
  return join(packageRoot(), "models", `${name}.json`);
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
 * Spawn the reference MSP host bundled with this package (`muse-host serve --stdio`) and connect
 * to it: the same {@link SpawnedHost} as {@link spawnHost} returns. It runs on this Node
 * (`process.execPath`), from this package's files, so it needs no PATH and works from any
 * directory. Bad options throw a `TypeError`/`RangeError` at once; a host that fails to start
 * (e.g. a model file with an error) settles pending work as `connectionClosed`, its reason on
 * stderr. `await using` closes it at the end of the block.
 *
 * @example
 * ```ts
 * import { spawnReferenceHost, exampleModelPath } from "@muse-code/sdk/host";
 *
 * await using host = spawnReferenceHost({ script: exampleModelPath("hello"), stderr: "ignore" });
 * const { sessionId } = await host.connection.command("session/create", {});
 * const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "Hi!" }] });
 * console.log((await turn.terminal).terminal); // "completed"
 * ```
 */
export function spawnReferenceHost(options: SpawnReferenceHostOptions = {}): SpawnedHost {
  const { script, data, models = {}, defaultModel, toolKillGraceMs, outputCapBytes, extraArgs = [], ...spawnOptions } = options;
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
  return spawnHost({ ...spawnOptions, command: process.execPath, args });
}
