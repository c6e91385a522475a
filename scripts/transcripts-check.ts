/**
 * transcripts:check: run checkTranscript over wire transcripts and print one line per file.
 *
 *   npm run transcripts:check [files…]
 *
 * With no files, checks every transcripts/*.jsonl (not transcripts/broken/). The parts of one
 * scenario, `<name>.jsonl`, `<name>.2.jsonl`, …, are successive connections and are checked as
 * one history (a turn accepted before a crash may end in the resumed part). `--excerpt` lets
 * an accepted turn end after the file does. Exits non-zero on any problem.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { checkTranscriptParts, type TranscriptCheck } from "@muse-code/sdk/testing";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Group files into scenarios: `x.jsonl` with `x.2.jsonl`, `x.3.jsonl`, … in order. */
export function groupParts(files: readonly string[]): string[][] {
  const groups = new Map<string, Array<{ n: number; file: string }>>();
  for (const file of files) {
    const match = /^(.*?)(?:\.(\d+))?\.jsonl$/.exec(basename(file));
    const stem = join(dirname(file), match?.[1] ?? basename(file));
    const n = match?.[2] === undefined ? 1 : Number(match[2]);
    const list = groups.get(stem) ?? [];
    list.push({ n, file });
    groups.set(stem, list);
  }
  return [...groups.values()].map((list) => list.sort((a, b) => a.n - b.n).map((p) => p.file));
}

/** Check files; returns one verdict per file, in the order given. */
export function checkFiles(files: readonly string[], options: { excerpt?: boolean } = {}): Map<string, TranscriptCheck> {
  const verdicts = new Map<string, TranscriptCheck>();
  for (const group of groupParts(files)) {
    const results = checkTranscriptParts(
      group.map((file) => readFileSync(file, "utf8")),
      options,
    );
    group.forEach((file, i) => verdicts.set(file, results[i] as TranscriptCheck));
  }
  return verdicts;
}

/** Every committed transcript: transcripts/*.jsonl, not transcripts/broken/. */
export function committedTranscripts(dir = join(root, "transcripts")): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => join(dir, name));
}

function main(): number {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { excerpt: { type: "boolean", default: false } } });
  const files = positionals.length > 0 ? positionals : committedTranscripts();
  if (files.length === 0) {
    console.error("transcripts:check: no transcripts to check");
    return 2;
  }
  const verdicts = checkFiles(files, { excerpt: values.excerpt });
  let bad = 0;
  for (const file of files) {
    const verdict = verdicts.get(file) as TranscriptCheck;
    const name = relative(process.cwd(), file) || file;
    if (verdict.ok) console.log(`✓ ${name}`);
    else {
      bad += 1;
      console.log(`✗ ${name}`);
      for (const problem of verdict.problems) console.log(`    ${name}: ${problem}`);
    }
  }
  console.log(`${files.length - bad} ok, ${bad} with problems`);
  return bad === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main();
