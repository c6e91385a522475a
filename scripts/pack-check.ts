/**
 * `npm run pack:check`: what `npm pack` would publish of each package (@muse-code/sdk at the root,
 * @muse-code/host in packages/host), checked against the package's allow-list. Every file must be
 * the build (dist/), a guide (docs/*.md, SDK) or its chart (docs/*.svg), an example model or a
 * bin's launcher (models/, bin/, host), or one of the package's own documents; no tests, fixtures, transcripts,
 * recipes, benchmarks, scripts or sources ship. Every file package.json points at (exports, main,
 * module, types, bin) must ship. Every package the shipped code or types import is a dependency or
 * a peer dependency (an app that installs the package gets nothing else; the private
 * @muse-code/protocol is bundled, never imported), and the SDK's browser-safe entry points reach
 * only dependencies: never an optional peer. Every relative link or image of a shipped markdown
 * file names a file that ships: a reader of an installed copy has nothing else (link to the
 * repository on GitHub instead). Prints each tarball's size.
 *
 * Then it installs the tarballs as an app would, each in an empty temp dir (`--no-install` skips
 * this):
 * - `npm install <sdk tarball>` installs exactly @muse-code/sdk and vscode-jsonrpc (`npm ls --all`);
 * - `npm install <sdk tarball> <host tarball>`: the bins `muse serve --help` and `muse-host --help`
 *   run, the muse CLI's files resolve `@muse-code/sdk/msp.schema.json` and ajv (muse check's
 *   schema and validator), and `spawnReferenceHost` from `@muse-code/sdk/node` finds the installed host and runs a
 *   turn on it.
 *
 * Run after `npm run build`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { builtinModules } from "node:module";
import { join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number }[];
}

/** The parts of package.json this check reads. */
export interface Manifest {
  name?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [key: string]: unknown;
}

const FORBIDDEN = [
  /(^|\/)(test|tests|__tests__|fixtures|transcripts|recipes|bench|scripts|src|coverage|node_modules)\//,
  /\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/,
  /\.jsonl$/,
];
/** The SDK's entry points a browser app imports (ARCHITECTURE.md: the core, ./framing, ./websocket, ./ui). */
export const BROWSER_SUBPATHS = [".", "./framing", "./websocket", "./ui"];

/** One published package: its folder, what may ship, which documents must, and its browser-safe entry points. */
export interface PackedPackage {
  dir: string;
  allowed: readonly RegExp[];
  required: readonly string[];
  browserSubpaths: readonly string[];
}

/** The packages this repository publishes. */
export const PACKAGES: readonly PackedPackage[] = [
  {
    dir: ".",
    allowed: [/^dist\//, /^docs\/[^/]+\.(md|svg)$/, /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|msp\.schema\.json)$/],
    required: ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "msp.schema.json"],
    browserSubpaths: BROWSER_SUBPATHS,
  },
  {
    dir: "packages/host",
    allowed: [/^bin\/[^/]+\.js$/, /^dist\//, /^models\/[^/]+\.json$/, /^(package\.json|README\.md|LICENSE)$/],
    required: ["package.json", "README.md", "LICENSE"],
    browserSubpaths: [],
  },
];

/** What an empty app gets from `npm install <the SDK's tarball>`: these and nothing else. */
export const SDK_INSTALL = ["@muse-code/sdk", "vscode-jsonrpc"];
/** Built code and declarations, whose imports an installed copy resolves. */
const CODE = /\.(c?js|mjs|d\.c?ts|d\.mts)$/;

/** Every file path package.json points at: main, module, types, bin and each export condition. */
export function manifestTargets(pkg: Record<string, unknown>): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === "string") found.push(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object") for (const v of Object.values(value)) visit(v);
  };
  for (const key of ["main", "module", "types", "bin", "exports"]) visit(pkg[key]);
  return found;
}

/** The package an import specifier names ("ws", "@scope/name"); undefined for a relative path, node:* or a built-in. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
  return builtinModules.includes(name) ? undefined : name;
}

/** What a built file imports: static, dynamic, `require` and `import type`, in code and declarations (comments are skipped). */
function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/**
 * Problems with what the shipped files (`shipped`: package paths, read from `root`) import:
 * - a package that is neither the package itself, a dependency nor a peer dependency;
 * - a peer dependency reached from a browser-safe entry point (`browserSubpaths`; its code or its
 *   types) through the files it imports.
 */
export function importProblems(
  root: string,
  shipped: ReadonlySet<string>,
  manifest: Manifest,
  browserSubpaths: readonly string[] = BROWSER_SUBPATHS,
): string[] {
  const code = [...shipped].filter((path) => CODE.test(path)).sort();
  const imports = new Map(code.map((path) => [path, importsOf(readFileSync(join(root, path), "utf8"))]));
  const dependencies = new Set(Object.keys(manifest.dependencies ?? {}));
  const peers = new Set(Object.keys(manifest.peerDependencies ?? {}));
  const problems: string[] = [];
  for (const [path, specifiers] of imports) {
    for (const name of new Set(specifiers.map(packageOf))) {
      if (name === undefined || name === manifest.name || dependencies.has(name) || peers.has(name)) continue;
      problems.push(`${path} imports ${name}, which is neither a dependency nor a peer dependency: an app that installs the package does not get it`);
    }
  }
  // Each browser-safe entry point's files (code and types, every condition), and what they import relatively.
  const exportsMap = (manifest.exports ?? {}) as Record<string, unknown>;
  for (const subpath of browserSubpaths) {
    const seen = new Set<string>();
    const queue = manifestTargets({ exports: exportsMap[subpath] }).filter((path) => imports.has(path));
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      if (seen.has(path)) continue;
      seen.add(path);
      for (const specifier of imports.get(path) ?? []) {
        const name = packageOf(specifier);
        if (name !== undefined && peers.has(name) && !dependencies.has(name)) {
          problems.push(`${path} (reached from ${subpath}, browser-safe) imports ${name}, a peer dependency a browser app does not install`);
        }
        if (specifier.startsWith(".")) {
          const target = posix.join(posix.dirname(path), specifier);
          // A declaration imports "./chunk.js" for "./chunk.d.ts".
          const candidates = [target, target.replace(/\.js$/, ".d.ts"), target.replace(/\.cjs$/, ".d.cts")];
          for (const candidate of candidates) if (imports.has(candidate)) queue.push(candidate);
        }
      }
    }
  }
  return [...new Set(problems)].sort();
}

/** The repository on GitHub, where a shipped document links to what does not ship. */
export const REPO_BLOB = "https://github.com/meta-models/muse-code-sdk/blob/main/";

/** Targets of a markdown line's links and images: inline `[x](t)` and `![x](t)`, reference definitions `[x]: t`, and HTML `src=` / `href=`. */
export function linkTargets(line: string): string[] {
  const text = line.replace(/(`+)[\s\S]*?\1/g, ""); // inline code is not a link
  const targets: string[] = [];
  for (const m of text.matchAll(/\]\(\s*(?:<([^>]*)>|([^\s)]+))/g)) targets.push((m[1] ?? m[2]) as string);
  const definition = /^\s{0,3}\[[^\]]+\]:\s*(?:<([^>]*)>|(\S+))/.exec(text);
  if (definition !== null) targets.push((definition[1] ?? definition[2]) as string);
  for (const m of text.matchAll(/\b(?:src|href)\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) targets.push((m[1] ?? m[2]) as string);
  return targets;
}

/**
 * Links of the shipped markdown files (`shipped`: package paths, read from `root`) to a file that
 * does not ship: relative links and images alike, outside fenced code blocks and inline code.
 * Anchors (`#…`) and URLs (`https:`, `mailto:`, …) are not files, and pass.
 */
export function linkProblems(root: string, shipped: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  const shipsUnder = (dir: string) => [...shipped].some((path) => path.startsWith(`${dir}/`));
  for (const doc of [...shipped].filter((path) => path.endsWith(".md")).sort()) {
    let fence: string | undefined;
    readFileSync(join(root, doc), "utf8")
      .split("\n")
      .forEach((line, i) => {
        const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
        if (marker !== undefined && (fence === undefined || (marker[0] === fence[0] && marker.length >= fence.length && /^\s*[`~]+\s*$/.test(line)))) {
          fence = fence === undefined ? marker : undefined;
          return;
        }
        if (fence !== undefined) return;
        for (const target of linkTargets(line)) {
          if (target === "" || target.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          let decoded: string;
          try {
            decoded = decodeURIComponent(target.replace(/[?#].*$/, ""));
          } catch {
            decoded = target;
          }
          const path = posix.normalize(posix.join(posix.dirname(doc), decoded)).replace(/\/$/, "");
          if (!decoded.startsWith("/") && !path.startsWith("../") && path !== ".." && (shipped.has(path) || shipsUnder(path))) continue;
          const outside = decoded.startsWith("/") || path.startsWith("..");
          problems.push(
            outside
              ? `${doc}:${i + 1}: links to ${target}, which is outside the package: link to ${REPO_BLOB}<path> instead`
              : `${doc}:${i + 1}: links to ${target}, which is not in the package: ship it, or link to ${REPO_BLOB}${path}`,
          );
        }
      });
  }
  return problems;
}

/** The problems of one package's `npm pack --dry-run`; prints its size when there are none. */
function checkPackage(repoRoot: string, pkg: PackedPackage): string[] {
  const cwd = join(repoRoot, pkg.dir);
  const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as PackResult[];
  if (!pack) throw new Error(`pack:check: npm pack --dry-run --json printed no package in ${pkg.dir}`);
  const shipped = new Set(pack.files.map((f) => f.path));
  const problems: string[] = [];

  for (const path of shipped) {
    if (FORBIDDEN.some((re) => re.test(path))) problems.push(`${path} ships, but tests, fixtures and sources must not`);
    else if (!pkg.allowed.some((re) => re.test(path))) problems.push(`${path} ships but is not on the allow-list in scripts/pack-check.ts`);
  }

  const manifest = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")) as Manifest;
  for (const target of new Set([...pkg.required, ...manifestTargets(manifest)])) {
    const hint = target.startsWith("dist/") ? " (run `npm run build` first)" : "";
    if (!shipped.has(target)) problems.push(`${target} is named by package.json (or required) but does not ship${hint}`);
  }
  problems.push(...importProblems(cwd, shipped, manifest, pkg.browserSubpaths));
  problems.push(...linkProblems(cwd, shipped));
  const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
  if (problems.length === 0)
    console.log(`pack:check: ok, ${pack.filename}: ${pack.entryCount} files, ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked`);
  return problems.map((p) => `${manifest.name ?? pkg.dir}: ${p}`);
}

/** One node of an `npm ls --all --json` tree. */
export interface LsNode {
  version?: string;
  dependencies?: Record<string, LsNode>;
}

/**
 * Every package installed in an `npm ls --all --json` tree, sorted, once each. An optional peer
 * that is not installed (`UNMET OPTIONAL DEPENDENCY`) is listed without a version: not counted.
 */
export function installedNames(tree: LsNode): string[] {
  const names = new Set<string>();
  const visit = (node: LsNode) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (child.version === undefined) continue;
      names.add(name);
      visit(child);
    }
  };
  visit(tree);
  return [...names].sort();
}

/** An empty app in `dir`: a package.json and nothing else. */
function emptyApp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

/** The ends of a turn on the installed reference host, run from the app by `spawnReferenceHost`. */
const SPAWN_CHECK = `
import { spawnReferenceHost, exampleModelPath } from "@muse-code/sdk/node";
const host = spawnReferenceHost({ script: exampleModelPath("hello"), stderr: "ignore" });
try {
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "Hi!" }] });
  console.log((await turn.completed).terminal);
} finally {
  await host.close();
}
`;

/** Installs the packed tarballs into empty apps, as a user does; the problems found. */
function installCheck(repoRoot: string): string[] {
  const problems: string[] = [];
  const temp = mkdtempSync(join(tmpdir(), "pack-install-"));
  const run = (cwd: string, command: string, args: string[]) =>
    execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false" },
    });
  try {
    const tarball = (dir: string) => {
      const [packed] = JSON.parse(run(join(repoRoot, dir), "npm", ["pack", "--json", "--pack-destination", temp])) as PackResult[];
      if (!packed) throw new Error(`pack:check: npm pack printed no package in ${dir}`);
      return join(temp, packed.filename);
    };
    const sdk = tarball(".");
    const host = tarball("packages/host");

    const sdkApp = emptyApp(join(temp, "sdk-app"));
    run(sdkApp, "npm", ["install", "--prefer-offline", sdk]);
    const installed = installedNames(JSON.parse(run(sdkApp, "npm", ["ls", "--all", "--json"])) as LsNode);
    if (installed.join(",") !== SDK_INSTALL.join(",")) {
      problems.push(`npm install <the SDK's tarball> installs ${installed.join(", ")}; an app must get exactly ${SDK_INSTALL.join(" and ")}`);
    } else console.log(`pack:check: ok, an empty app's npm install of the SDK installs ${installed.length} packages: ${installed.join(", ")}`);

    const hostApp = emptyApp(join(temp, "host-app"));
    run(hostApp, "npm", ["install", "--prefer-offline", sdk, host]);
    const bin = (name: string) => join(hostApp, "node_modules", ".bin", name);
    for (const [name, args, expected] of [
      ["muse", ["serve", "--help"], "serve"],
      ["muse", ["--version"], "0."],
      ["muse-host", ["--help"], "serve"],
    ] as const) {
      try {
        const out = run(hostApp, bin(name), [...args]);
        if (!out.includes(expected)) problems.push(`${name} ${args.join(" ")} from the host's tarball printed no "${expected}": ${out.slice(0, 200)}`);
      } catch (error) {
        problems.push(`${name} ${args.join(" ")} from the host's tarball failed: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    // muse check reads the wire schema from the SDK, and validates with ajv, both resolved from the host's own files.
    try {
      const from = join(hostApp, "node_modules", "@muse-code", "host", "dist", "cli", "main.js");
      const script = `const r = require("node:module").createRequire(${JSON.stringify(from)}); const s = r("@muse-code/sdk/msp.schema.json"); r("ajv/dist/2020.js"); console.log(Object.keys(s["x-msp-methods"]).length)`;
      const methods = Number(run(hostApp, process.execPath, ["-e", script]).trim());
      if (!(methods > 0)) problems.push("the installed muse CLI finds @muse-code/sdk/msp.schema.json, but it lists no methods");
      else console.log(`pack:check: ok, the installed muse CLI loads ajv and @muse-code/sdk/msp.schema.json (${methods} methods)`);
    } catch (error) {
      problems.push(`the installed muse CLI cannot load @muse-code/sdk/msp.schema.json or ajv: ${(error as Error).message.split("\n").slice(0, 3).join(" ")}`);
    }
    writeFileSync(join(hostApp, "spawn.mjs"), SPAWN_CHECK);
    try {
      const terminal = run(hostApp, process.execPath, ["spawn.mjs"]).trim();
      if (terminal !== "completed") problems.push(`spawnReferenceHost on the installed host ended its turn ${terminal}, not completed`);
      else console.log("pack:check: ok, the host's tarball: muse serve --help, muse-host --help, and spawnReferenceHost runs a turn on it");
    } catch (error) {
      problems.push(`spawnReferenceHost on the installed host failed: ${(error as Error).message.split("\n").slice(0, 3).join(" ")}`);
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return problems;
}

function main(): void {
  const repoRoot = resolve(fileURLToPath(new URL("..", import.meta.url)));
  const problems = PACKAGES.flatMap((pkg) => checkPackage(repoRoot, pkg));
  if (problems.length === 0 && !process.argv.includes("--no-install")) problems.push(...installCheck(repoRoot));
  if (problems.length > 0) {
    for (const p of problems) console.error(`pack:check: ${p}`);
    console.error(`pack:check: ${problems.length} problem(s)`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
