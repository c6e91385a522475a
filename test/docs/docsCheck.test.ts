import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDocs, fencedBlocks, regionText } from "../../scripts/docs-check.js";

const root = process.cwd();
let dir: string;
let guide: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docs-check-"));
  guide = join(dir, "cancelling-a-turn.md");
  cpSync(join(root, "docs/cancelling-a-turn.md"), guide);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Change the first occurrence of `from` inside the first block whose info string contains `info`. */
function alter(info: string, from: string, to: string): number {
  const lines = readFileSync(guide, "utf8").split("\n");
  const block = fencedBlocks(lines).find((b) => lines[b.line - 1]?.includes(info));
  if (block === undefined) throw new Error(`no block ${info}`);
  for (let i = block.start; i < block.end; i += 1) {
    if (lines[i]?.includes(from)) {
      lines[i] = (lines[i] as string).replace(from, to);
      writeFileSync(guide, lines.join("\n"));
      return block.line;
    }
  }
  throw new Error(`${from} not in block ${info}`);
}

describe("docs:check", () => {
  it("passes on the committed docs", () => {
    const result = checkDocs({ docsDir: join(root, "docs"), root });
    expect(result.problems).toEqual([]);
    expect(result.blocks).toBeGreaterThan(30);
  });

  it("passes on an unaltered copy of the cancel guide", () => {
    expect(checkDocs({ docsDir: dir, root }).ok).toBe(true);
  });

  it("fails with file:line and a diff when one character of a wire block changes", () => {
    // "accepted" -> "accepteD" inside the cancel ack the seed quotes.
    const line = alter("transcript=transcripts/cancel-mid-turn.jsonl lines=3-4", '\\"status\\":\\"accepted\\"', '\\"status\\":\\"accepteD\\"');
    const result = checkDocs({ docsDir: dir, root });
    expect(result.ok).toBe(false);
    expect(result.problems).toHaveLength(1);
    const problem = result.problems[0] as string;
    expect(problem).toMatch(new RegExp(`cancelling-a-turn\\.md:${line}: block differs from transcripts/cancel-mid-turn\\.jsonl lines 3-4`));
    expect(problem).toContain('      - {"dir":"server"');
    expect(problem).toContain('accepteD');
  });

  it("fails when a code sample drifts from its recipe region, and --write syncs it back", () => {
    const line = alter("recipe=recipes/cancel-race.ts region=narrow", "already_terminal", "already_done");
    const failed = checkDocs({ docsDir: dir, root });
    expect(failed.problems.map((p) => p.split("\n")[0])).toEqual([`${guide}:${line}: block differs from recipes/cancel-race.ts region narrow (- source, + doc):`]);
    const written = checkDocs({ docsDir: dir, root, write: true });
    expect(written.written).toHaveLength(1);
    expect(checkDocs({ docsDir: dir, root }).ok).toBe(true);
    expect(readFileSync(guide, "utf8")).toBe(readFileSync(join(root, "docs/cancelling-a-turn.md"), "utf8"));
  });

  it("fails on a wire block that names no transcript, a missing region, and lines out of range", () => {
    writeFileSync(
      join(dir, "bad.md"),
      ["# bad", "```jsonl", "{}", "```", "```ts recipe=recipes/cancel-race.ts region=nope", "```", "```jsonl transcript=transcripts/cancel-race.jsonl lines=5-60", "```", ""].join("\n"),
    );
    const problems = checkDocs({ docsDir: dir, root }).problems.map((p) => p.replace(/^.*bad\.md/, "bad.md"));
    expect(problems).toEqual([
      "bad.md:2: a wire exchange must name its transcript: ```jsonl transcript=transcripts/<file>.jsonl lines=A-B",
      'bad.md:5: recipe recipes/cancel-race.ts has no region "nope" (// #region nope … // #endregion nope)',
      "bad.md:7: lines=5-60 is outside transcripts/cancel-race.jsonl (6 lines)",
    ]);
  });

  it("dedents a region and leaves out its markers", () => {
    const source = ["function f() {", "  // #region r", "  if (x) {", "    y();", "  }", "  // #endregion r", "}"].join("\n");
    expect(regionText(source, "r")).toBe("if (x) {\n  y();\n}");
    expect(regionText(source, "missing")).toBeUndefined();
  });
});
