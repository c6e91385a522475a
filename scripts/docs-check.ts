/**
 * docs:check: every wire exchange, code sample and program output in the guides is a quote of a
 * checked source, never a hand copy, and every example program runs.
 *
 *   ```jsonl transcript=transcripts/cancel-race.jsonl lines=3-6
 *   ```ts example=docs/examples/getting-started.ts            (the whole program)
 *   ```ts example=docs/examples/cancel-race.ts region=narrow   (one region of it)
 *   ```text output=docs/examples/getting-started.ts           (what the program prints)
 *   ```ts recipe=recipes/cancel-race.ts region=narrow
 *
 * A `jsonl` block must name a transcript (and optionally `lines=A-B`, 1-based, inclusive) and
 * hold exactly those lines. A `ts` block must name an example (the whole file, or a region:
 * `// #region <name>` … `// #endregion <name>`, dedented) or a recipe region. An `output=` block
 * must hold exactly what its example printed on stdout. Any difference fails with file:line
 * and a diff; `--write` syncs every block from its source instead. Every `muse …`/`muse-host …`
 * command of a shell block must parse with the CLI's own parser (docs-commands.ts). Every wire
 * example (a `jsonl` block's messages; a `json` block that is a message, or names
 * `params=<method>` / `result=<method>`) must pass msp.schema.json (docs-schema.ts).
 *
 * The examples under docs/examples/ are complete programs that import only the package's public
 * entry points. Each is transpiled on its own (esbuild, no bundling) into `.tmp/` inside the
 * repo and run with plain `node`, from an empty temporary directory, so `@muse-code/sdk`
 * resolves through package.json "exports" to the BUILT package in dist/, exactly as in an app
 * (no tsconfig `paths`, no loader). Each run is bounded; one that fails or outlives its bound
 * fails docs:check with the example's name and everything it printed.
 *
 *   npm run docs:check [-- --write] [--no-run] [--only name,name] [--timeout-ms N]
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { transformSync } from "esbuild";
import { commandProblems } from "./docs-commands.js";
import { wireExampleProblems } from "./docs-schema.js";

/** Options of {@link checkDocs}. */
export interface DocsCheckOptions {
  /** The directory of guides (searched recursively; `api/` is skipped). */
  docsDir: string;
  /** The repository root that `transcript=`, `recipe=`, `example=` and `output=` paths are relative to. */
  root: string;
  /** More markdown files to check besides the guides (the repository's README.md). */
  extraFiles?: readonly string[];
  /** The example programs; each must be quoted by some guide. @defaultValue none checked */
  examplesDir?: string;
  /** Rewrite every sourced block from its source instead of failing. @defaultValue false */
  write?: boolean;
  /**
   * What each example printed, by path relative to `root`. Without it, `output=` blocks are not
   * compared (and counted in `unchecked`).
   */
  runs?: ReadonlyMap<string, ExampleRun>;
}

/** The verdict of {@link checkDocs}. */
export interface DocsCheck {
  ok: boolean;
  /** One entry per problem: `file:line: what`, then a diff when a block differs. */
  problems: string[];
  /** How many sourced blocks were checked. */
  blocks: number;
  /** `output=` blocks left unchecked because their example was not run. */
  unchecked: number;
  /** Files rewritten by `write`. */
  written: string[];
}

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  attrs: Map<string, string>;
  /** Index (0-based) of the first content line and one past the last. */
  start: number;
  end: number;
}

/** Recipe-harness words a guide must never use: a reader's app has no `env`, and no seeds. */
const HARNESS_TALK: readonly RegExp[] = [/\benv\.(connect|session|midWork|crashHost|restartHost|log)\b/, /\bseeds?\b/i];

/** The specifiers an example may import: the package's public entry points and Node built-ins. */
const PUBLIC_ENTRY = /^@muse-code\/sdk(\/(node|host|testing|framing|websocket|ui|session|react))?$/;

/** Repository paths an example must not name: it has to work in an app, outside this repo. */
const REPO_PATH = /["'`](\.{0,2}\/)?(dist|src|recipes|transcripts|test|bench|scripts)\//;

function markdownFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === "api" ? [] : markdownFiles(path);
      return name.endsWith(".md") ? [path] : [];
    });
}

/** The example programs in a directory: every `*.ts` directly in it, sorted. */
export function exampleFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .sort()
    .map((name) => join(dir, name));
}

/** Fenced blocks of a markdown file, with their info-string attributes. */
export function fencedBlocks(lines: readonly string[]): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    // A fence may be indented (a block inside a list item); it closes at the same kind of fence.
    const open = /^ *(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const fence = open[1] as string;
    const attrs = new Map<string, string>();
    for (const match of (open[3] ?? "").matchAll(/(\w+)=("[^"]*"|\S+)/g)) attrs.set(match[1] as string, (match[2] as string).replace(/^"|"$/g, ""));
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`).test(lines[j] as string)) j += 1;
    blocks.push({ line: i + 1, lang: open[2] ?? "", attrs, start: i + 1, end: j });
    i = j;
  }
  return blocks;
}

const REGION_MARKER = /^\s*\/\/ #(end)?region\b/;

/** The text of a `// #region name` … `// #endregion name` in a source, dedented. */
export function regionText(source: string, name: string): string | undefined {
  const lines = source.split("\n");
  const begin = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  if (begin < 0) return undefined;
  const end = lines.findIndex((l, i) => i > begin && l.trim() === `// #endregion ${name}`);
  if (end < 0) return undefined;
  const body = lines.slice(begin + 1, end).filter((l) => !REGION_MARKER.test(l));
  const indent = Math.min(...body.filter((l) => l.trim() !== "").map((l) => (/^ */.exec(l) as RegExpExecArray)[0].length));
  return body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0).trimEnd()).join("\n");
}

/** A whole example as a guide shows it: every line but the region markers, no trailing newline. */
export function wholeExampleText(source: string): string {
  return source
    .replace(/\n+$/, "")
    .split("\n")
    .filter((l) => !REGION_MARKER.test(l))
    .join("\n");
}

/** What a program printed, as an `output=` block holds it: no trailing newline, no trailing spaces. */
export function outputText(stdout: string): string {
  return stdout
    .replace(/\r\n/g, "\n")
    .replace(/\n+$/, "")
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n");
}

function readSource(root: string, path: string): string | undefined {
  try {
    return readFileSync(resolve(root, path), "utf8");
  } catch {
    return undefined;
  }
}

/** What a sourced block must contain, or a problem saying why it can't be known (or `skip` when its example was not run). */
function expectedText(
  block: Block,
  root: string,
  runs: ReadonlyMap<string, ExampleRun> | undefined,
): { text: string; source: string } | { problem: string } | "skip" {
  const transcript = block.attrs.get("transcript");
  const recipe = block.attrs.get("recipe");
  const example = block.attrs.get("example");
  const output = block.attrs.get("output");
  if (transcript !== undefined) {
    const text = readSource(root, transcript);
    if (text === undefined) return { problem: `transcript ${transcript} does not exist` };
    const all = text.replace(/\n$/, "").split("\n");
    const range = block.attrs.get("lines");
    if (range === undefined) return { text: all.join("\n"), source: transcript };
    const m = /^(\d+)(?:-(\d+))?$/.exec(range);
    if (m === null) return { problem: `lines=${range} must be N or A-B` };
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (a < 1 || b < a || b > all.length) return { problem: `lines=${range} is outside ${transcript} (${all.length} lines)` };
    return { text: all.slice(a - 1, b).join("\n"), source: `${transcript} lines ${range}` };
  }
  if (recipe !== undefined) {
    const region = block.attrs.get("region");
    if (region === undefined) return { problem: `recipe=${recipe} needs region=<name>` };
    const source = readSource(root, recipe);
    if (source === undefined) return { problem: `recipe ${recipe} does not exist` };
    const text = regionText(source, region);
    if (text === undefined) return { problem: `recipe ${recipe} has no region "${region}" (// #region ${region} … // #endregion ${region})` };
    return { text, source: `${recipe} region ${region}` };
  }
  if (example !== undefined) {
    const source = readSource(root, example);
    if (source === undefined) return { problem: `example ${example} does not exist` };
    const region = block.attrs.get("region");
    if (region === undefined) return { text: wholeExampleText(source), source: example };
    const text = regionText(source, region);
    if (text === undefined) return { problem: `example ${example} has no region "${region}" (// #region ${region} … // #endregion ${region})` };
    return { text, source: `${example} region ${region}` };
  }
  if (output !== undefined) {
    if (readSource(root, output) === undefined) return { problem: `example ${output} does not exist` };
    const run = runs?.get(exampleKey(root, output));
    if (run === undefined) return "skip";
    if (!run.ok) return { problem: `example ${output} did not run cleanly, so its output cannot be checked (see its own problem)` };
    return { text: outputText(run.stdout), source: `the output of ${output}` };
  }
  return { problem: "no source" };
}

/** The key of an example in {@link DocsCheckOptions.runs}: its path relative to the root (absolute when outside it). */
export function exampleKey(root: string, path: string): string {
  const absolute = resolve(root, path);
  const inside = relative(root, absolute);
  return inside.startsWith("..") ? absolute : inside;
}

/** A small line diff: `-` lines from the source, `+` lines in the doc. */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      (lcs[i] as number[])[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as number[])[j] as number, (lcs[i] as number[])[j + 1] as number);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i += 1;
      j += 1;
    } else if (j < b.length && (i >= a.length || ((lcs[i] as number[])[j + 1] as number) >= ((lcs[i + 1] as number[])[j] as number))) {
      out.push(`      + ${b[j]}`);
      j += 1;
    } else {
      out.push(`      - ${a[i]}`);
      i += 1;
    }
  }
  return out.join("\n");
}

const SOURCE_ATTRS = ["transcript", "recipe", "example", "output"] as const;

/**
 * Check (or, with `write`, sync) every sourced block of every guide under `docsDir` (and of
 * `extraFiles`), and that no guide talks about the recipe harness.
 *
 * @example
 * ```ts
 * const { ok, problems } = checkDocs({ docsDir: "docs", root: ".", extraFiles: ["README.md"] });
 * ```
 */
export function checkDocs(options: DocsCheckOptions): DocsCheck {
  const problems: string[] = [];
  const written: string[] = [];
  const quoted = new Set<string>();
  let count = 0;
  let unchecked = 0;
  for (const file of [...markdownFiles(options.docsDir), ...(options.extraFiles ?? [])]) {
    const rel = relative(process.cwd(), file);
    const name = rel === "" || rel.startsWith("..") ? file : rel;
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      const talk = HARNESS_TALK.find((pattern) => pattern.test(line));
      if (talk !== undefined)
        problems.push(
          `${name}:${i + 1}: guides speak of the reader's app: no recipe harness (env.connect(), env.session(), …) and no "seed" (${(talk.exec(line) as RegExpExecArray)[0]})`,
        );
    });
    problems.push(...brokenLinks(name, file, lines, options.root));
    problems.push(...commandProblems(name, lines, fencedBlocks(lines), options.root));
    problems.push(...wireExampleProblems(name, lines, fencedBlocks(lines), options.root));
    let changed = false;
    // Work bottom-up so rewriting a block does not shift the ones above it.
    for (const block of fencedBlocks(lines).reverse()) {
      const sourced = SOURCE_ATTRS.some((attr) => block.attrs.has(attr));
      if (!sourced) {
        if (block.lang === "jsonl")
          problems.push(`${name}:${block.line}: a wire exchange must name its transcript: \`\`\`jsonl transcript=transcripts/<file>.jsonl lines=A-B`);
        if (block.lang === "ts" || block.lang === "typescript")
          problems.push(`${name}:${block.line}: a code sample must name the example it quotes: \`\`\`ts example=docs/examples/<file>.ts [region=<name>]`);
        continue;
      }
      for (const attr of ["example", "output"] as const) {
        const path = block.attrs.get(attr);
        if (path !== undefined) quoted.add(exampleKey(options.root, path));
      }
      const expected = expectedText(block, options.root, options.runs);
      if (expected === "skip") {
        unchecked += 1;
        continue;
      }
      count += 1;
      if ("problem" in expected) {
        problems.push(`${name}:${block.line}: ${expected.problem}`);
        continue;
      }
      const actual = lines.slice(block.start, block.end).join("\n");
      if (actual === expected.text) continue;
      if (options.write === true) {
        lines.splice(block.start, block.end - block.start, ...expected.text.split("\n"));
        changed = true;
        continue;
      }
      problems.push(`${name}:${block.line}: block differs from ${expected.source} (- source, + doc):\n${lineDiff(expected.text, actual)}`);
    }
    if (changed) {
      writeFileSync(file, lines.join("\n"));
      written.push(name);
    }
  }
  if (options.examplesDir !== undefined) {
    for (const example of exampleFiles(options.examplesDir)) {
      const key = exampleKey(options.root, example);
      if (!quoted.has(key)) problems.push(`${key}:1: no guide quotes this example (\`\`\`ts example=${key})`);
    }
  }
  return { ok: problems.length === 0, problems: problems.sort(byLocation), blocks: count, unchecked, written };
}

/** Where links to this repository on GitHub point: they must name a file or directory that exists. */
const REPO_URL = /^https:\/\/github\.com\/meta-models\/muse-code-sdk\/(?:blob|tree)\/main\/([^#?]+)/;

/**
 * Links of a markdown file (outside code blocks) whose target does not exist: a relative path
 * (resolved from the file), or a file of this repository on GitHub (resolved from the root).
 * Anchors are not checked here (typedoc checks them when it builds the site).
 */
export function brokenLinks(name: string, file: string, lines: readonly string[], root: string): string[] {
  const problems: string[] = [];
  const code = new Set<number>();
  for (const block of fencedBlocks(lines)) for (let i = block.line - 1; i <= block.end; i += 1) code.add(i);
  lines.forEach((line, i) => {
    if (code.has(i)) return;
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] as string;
      const inRepo = REPO_URL.exec(target);
      let path: string | undefined;
      if (inRepo !== null) path = resolve(root, decodeURIComponent(inRepo[1] as string));
      else if (!/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith("#")) path = resolve(dirname(file), decodeURIComponent(target.replace(/#.*$/, "")));
      if (path !== undefined && !existsSync(path)) problems.push(`${name}:${i + 1}: link to ${target}: no such file`);
    }
  });
  return problems;
}

/**
 * What is wrong with an example as a standalone program: it needs a header comment, may import
 * only the public entry points and `node:` built-ins, and must not name paths of this repo.
 *
 * @example
 * ```ts
 * const problems = lintExample("docs/examples/getting-started.ts", source);
 * ```
 */
export function lintExample(name: string, source: string): string[] {
  const problems: string[] = [];
  if (!source.startsWith("/**")) problems.push(`${name}:1: an example opens with a /** header */ saying what it shows`);
  source.split("\n").forEach((line, i) => {
    const imports = [...line.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)].map((match) => match[1] as string);
    for (const specifier of imports) {
      if (!PUBLIC_ENTRY.test(specifier) && !specifier.startsWith("node:")) {
        problems.push(
          `${name}:${i + 1}: imports "${specifier}": an example may import only @muse-code/sdk, @muse-code/sdk/{node,host,testing,framing,websocket,ui,session,react} and node: built-ins`,
        );
      }
    }
    if (imports.length === 0 && REPO_PATH.test(line) && !/^\s*(\/\/|\*)/.test(line)) {
      problems.push(`${name}:${i + 1}: names a path inside this repository; an example must run in an app outside it`);
    }
  });
  return problems;
}

/** How one example program ran. */
export interface ExampleRun {
  /** Path relative to the root. */
  example: string;
  /** Exited 0, by itself, within its bound. */
  ok: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** It was still running at its bound and was killed. */
  timedOut: boolean;
  /** What it wrote to stdout. */
  stdout: string;
  /** stdout and stderr, interleaved as they arrived. */
  output: string;
  /** How long it ran. @unit milliseconds */
  ms: number;
}

/** Options of {@link runExample}. */
export interface RunExampleOptions {
  /** The repository root: examples are transpiled into `<root>/.tmp/` so `@muse-code/sdk` self-resolves. */
  root: string;
  /** Kill the example (and its process group) after this long. @unit milliseconds @defaultValue 30 000 */
  timeoutMs?: number;
}

/** After the example exits, how long to wait for its pipes to close (a child it spawned may hold them). @unit milliseconds */
const PIPE_GRACE_MS = 2_000;

/**
 * Transpile one example (esbuild, no bundling, imports untouched) into `<root>/.tmp/` and run it
 * with plain `node` from an empty temporary directory, bounded by `timeoutMs`.
 *
 * @example
 * ```ts
 * const run = await runExample("docs/examples/getting-started.ts", { root: ".", timeoutMs: 30_000 });
 * if (!run.ok) console.error(run.output);
 * ```
 */
export async function runExample(path: string, options: RunExampleOptions): Promise<ExampleRun> {
  const root = resolve(options.root);
  const file = resolve(root, path);
  const example = exampleKey(root, file);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const buildDir = join(root, ".tmp", "docs-examples");
  mkdirSync(buildDir, { recursive: true });
  const out = mkdtempSync(join(buildDir, `${basename(file, ".ts")}-`));
  const cwd = mkdtempSync(join(tmpdir(), "docs-example-cwd-"));
  const started = Date.now();
  try {
    let code: string;
    try {
      code = transformSync(readFileSync(file, "utf8"), { loader: "ts", format: "esm", target: "node20", sourcemap: "inline", sourcefile: file }).code;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { example, ok: false, exitCode: null, signal: null, timedOut: false, stdout: "", output: `esbuild could not transpile it:\n${message}`, ms: 0 };
    }
    const script = join(out, `${basename(file, ".ts")}.mjs`);
    writeFileSync(script, code);
    const env = { ...process.env };
    delete env["NODE_OPTIONS"]; // plain node: no loader that could map @muse-code/sdk to src/
    const child = spawn(process.execPath, ["--enable-source-maps", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-(child.pid as number), "SIGKILL"); // the example's whole group
      } catch {
        // already gone
      }
    }, timeoutMs);
    const { exitCode, signal } = await new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((settle) => {
      let exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
      child.on("error", (error) => {
        output += `\ncould not start node: ${error.message}`;
        settle({ exitCode: null, signal: null });
      });
      child.on("exit", (exitCode, signal) => {
        exit = { exitCode, signal };
        // A host the example left running may still hold its stdout/stderr: stop waiting for them.
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          settle(exit as { exitCode: number | null; signal: NodeJS.Signals | null });
        }, PIPE_GRACE_MS).unref();
      });
      child.on("close", (exitCode: number | null, signal: NodeJS.Signals | null) => settle(exit ?? { exitCode, signal }));
    });
    clearTimeout(timer);
    return { example, ok: exitCode === 0 && !timedOut, exitCode, signal, timedOut, stdout, output, ms: Date.now() - started };
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** The problem line(s) for a failed run: the example's name, how it failed, and everything it printed. */
export function runProblem(run: ExampleRun, timeoutMs: number): string {
  const how = run.timedOut
    ? `still running after ${timeoutMs} ms, killed (an open client or spawned host keeps Node alive: close it, or use \`await using\`)`
    : run.signal !== null
      ? `killed by ${run.signal} after ${run.ms} ms`
      : `exited with code ${String(run.exitCode)} after ${run.ms} ms`;
  const printed =
    run.output.trimEnd() === ""
      ? "      (it printed nothing)"
      : run.output
          .trimEnd()
          .split("\n")
          .map((l) => `      | ${l}`)
          .join("\n");
  return `${run.example}:1: example ${how}; its output:\n${printed}`;
}

/** Options of {@link runDocsCheck}. */
export interface RunDocsCheckOptions extends Omit<DocsCheckOptions, "runs"> {
  /** Run the examples (and compare `output=` blocks). @defaultValue true */
  run?: boolean;
  /** Run only these examples (by file name without `.ts`). */
  only?: readonly string[];
  /** Per-example bound. @unit milliseconds @defaultValue 30 000 */
  timeoutMs?: number;
  /** Where progress lines go. @defaultValue none */
  log?: (line: string) => void;
}

/** The verdict of {@link runDocsCheck}. */
export interface DocsCheckRun extends DocsCheck {
  /** Every example run, in order. */
  runs: ExampleRun[];
}

/**
 * The whole docs:check: lint every example, run them (one at a time, each bounded), then check
 * every guide's blocks, `output=` blocks against what the examples printed.
 *
 * @example
 * ```ts
 * const result = await runDocsCheck({ root, docsDir: join(root, "docs"), examplesDir: join(root, "docs/examples") });
 * process.exitCode = result.ok ? 0 : 1;
 * ```
 */
export async function runDocsCheck(options: RunDocsCheckOptions): Promise<DocsCheckRun> {
  const log = options.log ?? (() => {});
  const timeoutMs = options.timeoutMs ?? 30_000;
  const problems: string[] = [];
  const examples = options.examplesDir === undefined ? [] : exampleFiles(options.examplesDir);
  const sources = new Map(examples.map((file) => [file, readFileSync(file, "utf8")]));
  for (const [file, source] of sources) problems.push(...lintExample(exampleKey(options.root, file), source));

  const runs: ExampleRun[] = [];
  if (options.run !== false) {
    const selected = examples.filter((file) => options.only === undefined || options.only.includes(basename(file, ".ts")));
    const needsBuild = selected.some((file) => /["']@muse-code\/sdk(\/[a-z]+)?["']/.test(sources.get(file) ?? ""));
    if (needsBuild && !existsSync(join(options.root, "dist", "index.js"))) {
      problems.push(`${join(options.root, "dist", "index.js")}:1: the examples run against the built package (dist/): run \`npm run build\` first`);
    } else {
      for (const file of selected) {
        const run = await runExample(file, { root: options.root, timeoutMs });
        runs.push(run);
        log(`  ${run.ok ? "ok  " : "FAIL"} ${run.example} (${(run.ms / 1000).toFixed(1)} s)`);
        if (!run.ok) problems.push(runProblem(run, timeoutMs));
      }
    }
  }
  const byKey = new Map(runs.map((run) => [run.example, run]));
  const docs = checkDocs({ ...options, ...(options.run === false ? {} : { runs: byKey }) });
  const all = [...problems, ...docs.problems];
  return { ...docs, ok: all.length === 0, problems: all.sort(byLocation), runs };
}

function byLocation(a: string, b: string): number {
  const pa = /^(.*?):(\d+):/.exec(a);
  const pb = /^(.*?):(\d+):/.exec(b);
  if (pa === null || pb === null) return a < b ? -1 : 1;
  return pa[1] === pb[1] ? Number(pa[2]) - Number(pb[2]) : (pa[1] as string) < (pb[1] as string) ? -1 : 1;
}

async function main(): Promise<number> {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const { values } = parseArgs({
    options: {
      write: { type: "boolean", default: false },
      "no-run": { type: "boolean", default: false },
      only: { type: "string" },
      "timeout-ms": { type: "string" },
      docs: { type: "string" },
    },
  });
  const timeoutMs = values["timeout-ms"] === undefined ? 30_000 : Number(values["timeout-ms"]);
  if (!(timeoutMs > 0)) throw new RangeError(`--timeout-ms must be a positive number, got ${values["timeout-ms"]}`);
  const result = await runDocsCheck({
    root,
    docsDir: values.docs ?? join(root, "docs"),
    extraFiles: [join(root, "README.md")],
    examplesDir: join(root, "docs", "examples"),
    write: values.write,
    run: !values["no-run"],
    timeoutMs,
    ...(values.only === undefined ? {} : { only: values.only.split(",") }),
    log: (line) => console.log(line),
  });
  for (const file of result.written) console.log(`docs:check: synced ${file}`);
  for (const problem of result.problems) console.error(problem);
  const unchecked = result.unchecked > 0 ? `, ${result.unchecked} output block(s) not checked (examples not run)` : "";
  console.log(`docs:check: ${result.runs.length} example(s) run, ${result.blocks} sourced block(s)${unchecked}, ${result.problems.length} problem(s)`);
  return result.ok ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
