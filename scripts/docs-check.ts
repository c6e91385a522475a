/**
 * docs:check: every wire exchange and code sample in the guides is a quote of a checked
 * source, never a hand copy.
 *
 *   ```jsonl transcript=transcripts/cancel-race.jsonl lines=3-6
 *   ```ts recipe=recipes/cancel-race.ts region=narrow
 *
 * A `jsonl` block must name a transcript (and optionally `lines=A-B`, 1-based, inclusive) and
 * hold exactly those lines. A `ts` block must name a recipe region (`// #region <name>` …
 * `// #endregion <name>`) and hold exactly its text, dedented. Any difference fails with
 * file:line and a diff. `--write` syncs every block from its source instead.
 *
 *   npm run docs:check [-- --write]
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

/** Options of {@link checkDocs}. */
export interface DocsCheckOptions {
  /** The directory of guides (searched recursively; `api/` is skipped). */
  docsDir: string;
  /** The repository root that `transcript=` and `recipe=` paths are relative to. */
  root: string;
  /** Rewrite every sourced block from its source instead of failing. @defaultValue false */
  write?: boolean;
}

/** The verdict of {@link checkDocs}. */
export interface DocsCheck {
  ok: boolean;
  /** One entry per problem: `file:line: what`, then a diff when a block differs. */
  problems: string[];
  /** How many sourced blocks were checked. */
  blocks: number;
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

function markdownFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === "api" ? [] : markdownFiles(path);
      return name.endsWith(".md") ? [path] : [];
    });
}

/** Fenced blocks of a markdown file, with their info-string attributes. */
export function fencedBlocks(lines: readonly string[]): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const fence = open[1] as string;
    const attrs = new Map<string, string>();
    for (const match of (open[3] ?? "").matchAll(/(\w+)=("[^"]*"|\S+)/g)) attrs.set(match[1] as string, (match[2] as string).replace(/^"|"$/g, ""));
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`).test(lines[j] as string)) j += 1;
    blocks.push({ line: i + 1, lang: open[2] ?? "", attrs, start: i + 1, end: j });
    i = j;
  }
  return blocks;
}

/** The text of a `// #region name` … `// #endregion name` in a source, dedented. */
export function regionText(source: string, name: string): string | undefined {
  const lines = source.split("\n");
  const begin = lines.findIndex((l) => l.trim() === `// #region ${name}`);
  if (begin < 0) return undefined;
  const end = lines.findIndex((l, i) => i > begin && l.trim() === `// #endregion ${name}`);
  if (end < 0) return undefined;
  const body = lines.slice(begin + 1, end).filter((l) => !/^\s*\/\/ #(end)?region\b/.test(l));
  const indent = Math.min(...body.filter((l) => l.trim() !== "").map((l) => (/^ */.exec(l) as RegExpExecArray)[0].length));
  return body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0).trimEnd()).join("\n");
}

/** What a sourced block must contain, or a problem saying why it can't be known. */
function expectedText(block: Block, root: string): { text: string; source: string } | { problem: string } {
  const transcript = block.attrs.get("transcript");
  const recipe = block.attrs.get("recipe");
  if (transcript !== undefined) {
    let text: string;
    try {
      text = readFileSync(join(root, transcript), "utf8");
    } catch {
      return { problem: `transcript ${transcript} does not exist` };
    }
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
    let source: string;
    try {
      source = readFileSync(join(root, recipe), "utf8");
    } catch {
      return { problem: `recipe ${recipe} does not exist` };
    }
    const text = regionText(source, region);
    if (text === undefined) return { problem: `recipe ${recipe} has no region "${region}" (// #region ${region} … // #endregion ${region})` };
    return { text, source: `${recipe} region ${region}` };
  }
  return { problem: "no source" };
}

/** A small line diff: `-` lines from the source, `+` lines in the doc. */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      (lcs[i] as number[])[j] = a[i] === b[j] ? ((lcs[i + 1] as number[])[j + 1] as number) + 1 : Math.max((lcs[i + 1] as number[])[j] as number, (lcs[i] as number[])[j + 1] as number);
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

/**
 * Check (or, with `write`, sync) every sourced block of every guide under `docsDir`.
 *
 * @example
 * ```ts
 * const { ok, problems } = checkDocs({ docsDir: "docs", root: "." });
 * ```
 */
export function checkDocs(options: DocsCheckOptions): DocsCheck {
  const problems: string[] = [];
  const written: string[] = [];
  let count = 0;
  for (const file of markdownFiles(options.docsDir)) {
    const rel = relative(process.cwd(), file);
    const name = rel === "" || rel.startsWith("..") ? file : rel;
    const lines = readFileSync(file, "utf8").split("\n");
    let changed = false;
    // Work bottom-up so rewriting a block does not shift the ones above it.
    for (const block of fencedBlocks(lines).reverse()) {
      const sourced = block.attrs.has("transcript") || block.attrs.has("recipe");
      if (!sourced) {
        if (block.lang === "jsonl") problems.push(`${name}:${block.line}: a wire exchange must name its transcript: \`\`\`jsonl transcript=transcripts/<file>.jsonl lines=A-B`);
        if (block.lang === "ts" || block.lang === "typescript") problems.push(`${name}:${block.line}: a code sample must name its recipe region: \`\`\`ts recipe=recipes/<file>.ts region=<name>`);
        continue;
      }
      count += 1;
      const expected = expectedText(block, options.root);
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
  return { ok: problems.length === 0, problems: problems.sort(byLocation), blocks: count, written };
}

function byLocation(a: string, b: string): number {
  const pa = /^(.*?):(\d+):/.exec(a);
  const pb = /^(.*?):(\d+):/.exec(b);
  if (pa === null || pb === null) return a < b ? -1 : 1;
  return pa[1] === pb[1] ? Number(pa[2]) - Number(pb[2]) : (pa[1] as string) < (pb[1] as string) ? -1 : 1;
}

function main(): number {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const { values } = parseArgs({ options: { write: { type: "boolean", default: false }, docs: { type: "string" } } });
  const result = checkDocs({ docsDir: values.docs ?? join(root, "docs"), root, write: values.write });
  for (const file of result.written) console.log(`docs:check: synced ${file}`);
  for (const problem of result.problems) console.error(problem);
  console.log(`docs:check: ${result.blocks} sourced block(s), ${result.problems.length} problem(s)`);
  return result.ok ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
