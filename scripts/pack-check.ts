/**
 * `npm run pack:check`: what `npm pack` would publish, checked against an allow-list. Every file
 * must be the build (dist/), an example model (models/), a guide (docs/*.md) or its chart (docs/*.svg), or one of the
 * package's own documents; no tests, fixtures, transcripts, recipes, benchmarks, scripts or
 * sources ship. Every file package.json points at (exports, main, module, types, bin) must ship.
 * Every package the shipped code or types import is a dependency or a peer dependency (an app that
 * installs the package gets nothing else), and the browser-safe entry points reach only
 * dependencies: never an optional peer such as ws. Every relative link or image of a shipped
 * markdown file (README.md, docs/*.md) names a file that ships: a reader of an installed copy has
 * nothing else (link to the repository on GitHub instead). Prints the tarball's size. Run after
 * `npm run build`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
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

const ALLOWED = [/^dist\//, /^models\/[^/]+\.json$/, /^docs\/[^/]+\.(md|svg)$/, /^(package\.json|README\.md|LICENSE|CHANGELOG\.md)$/];
const FORBIDDEN = [
  /(^|\/)(test|tests|__tests__|fixtures|transcripts|recipes|bench|scripts|src|coverage|node_modules)\//,
  /\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/,
  /\.jsonl$/,
];
const REQUIRED_DOCUMENTS = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];
/** The entry points a browser app imports (ARCHITECTURE.md: the core, ./framing, ./websocket, ./ui). */
export const BROWSER_SUBPATHS = [".", "./framing", "./websocket", "./ui"];
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
 * - a peer dependency reached from a browser-safe entry point (its code or its types) through
 *   the files it imports.
 */
export function importProblems(root: string, shipped: ReadonlySet<string>, manifest: Manifest): string[] {
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
  for (const subpath of BROWSER_SUBPATHS) {
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

function main(): void {
  const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })) as PackResult[];
  if (!pack) throw new Error("pack:check: npm pack --dry-run --json printed no package");
  const shipped = new Set(pack.files.map((f) => f.path));
  const problems: string[] = [];

  for (const path of shipped) {
    if (FORBIDDEN.some((re) => re.test(path))) problems.push(`${path} ships, but tests, fixtures and sources must not`);
    else if (!ALLOWED.some((re) => re.test(path))) problems.push(`${path} ships but is not on the allow-list in scripts/pack-check.ts`);
  }

  const manifest = JSON.parse(readFileSync("package.json", "utf8")) as Manifest;
  for (const target of new Set([...REQUIRED_DOCUMENTS, ...manifestTargets(manifest)])) {
    const hint = target.startsWith("dist/") ? " (run `npm run build` first)" : "";
    if (!shipped.has(target)) problems.push(`${target} is named by package.json (or required) but does not ship${hint}`);
  }
  problems.push(...importProblems(process.cwd(), shipped, manifest));
  problems.push(...linkProblems(process.cwd(), shipped));

  if (problems.length > 0) {
    for (const p of problems) console.error(`pack:check: ${p}`);
    console.error(`pack:check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
  console.log(`pack:check: ok, ${pack.filename}: ${pack.entryCount} files, ${kB(pack.size)} packed, ${kB(pack.unpackedSize)} unpacked`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
