import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDocs, exampleFiles, fencedBlocks, lintExample, regionText, runDocsCheck, runExample } from "../../scripts/docs-check.js";

const root = process.cwd();
let dir: string;
/** A copy of the guides (their relative links still resolve: src/ is linked beside it). */
let docsDir: string;
let guide: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "docs-check-"));
  docsDir = join(dir, "docs");
  cpSync(join(root, "docs"), docsDir, { recursive: true, filter: (path) => !path.includes(join("docs", "api")) });
  symlinkSync(join(root, "src"), join(dir, "src"));
  guide = join(docsDir, "cancelling-a-turn.md");
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

/** A directory of example programs plus a guide quoting each one (and its output), all in `dir`. */
function examplesWithGuide(examples: Record<string, string>): { examplesDir: string; docsDir: string; guide: string } {
  const examplesDir = join(dir, "examples");
  const docsDir = join(dir, "guides");
  mkdirSync(examplesDir);
  mkdirSync(docsDir);
  const page = ["# guide", ""];
  for (const [name, source] of Object.entries(examples)) {
    const file = join(examplesDir, `${name}.ts`);
    writeFileSync(file, source);
    page.push(`\`\`\`ts example=${file}`, source.replace(/\n$/, ""), "```", "", `\`\`\`text output=${file}`, "```", "");
  }
  const path = join(docsDir, "guide.md");
  writeFileSync(path, page.join("\n"));
  return { examplesDir, docsDir, guide: path };
}

describe("docs:check", () => {
  it("passes on the committed docs and README (output blocks aside: they need the built package)", () => {
    const result = checkDocs({ docsDir: join(root, "docs"), root, extraFiles: [join(root, "README.md")], examplesDir: join(root, "docs/examples") });
    expect(result.problems).toEqual([]);
    expect(result.blocks).toBeGreaterThan(30);
    expect(result.unchecked).toBeGreaterThan(5);
  });

  it("every committed example is a standalone program: a header, public entry points only, no repo paths", () => {
    const files = exampleFiles(join(root, "docs/examples"));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) expect(lintExample(file, readFileSync(file, "utf8"))).toEqual([]);
  });

  it("passes on an unaltered copy of the guides", () => {
    expect(checkDocs({ docsDir, root }).problems).toEqual([]);
  });

  it("fails with file:line and a diff when one character of a wire block changes", () => {
    // "accepted" -> "accepteD" inside the cancel ack.
    const line = alter("transcript=transcripts/cancel-mid-turn.jsonl lines=3-4", '\\"status\\":\\"accepted\\"', '\\"status\\":\\"accepteD\\"');
    const result = checkDocs({ docsDir, root });
    expect(result.ok).toBe(false);
    // The diff, and the schema's word on the altered message (status is the constant "accepted").
    expect(result.problems).toHaveLength(2);
    const problem = result.problems.find((p) => p.includes("block differs")) as string;
    expect(problem).toMatch(new RegExp(`cancelling-a-turn\\.md:${line}: block differs from transcripts/cancel-mid-turn\\.jsonl lines 3-4`));
    expect(result.problems).toContainEqual(
      expect.stringMatching(
        /cancelling-a-turn\.md:\d+: the response to turn\/start from the host: \$\.result\.status must be equal to constant \(schema rule "const"/,
      ),
    );
    expect(problem).toContain('      - {"dir":"server"');
    expect(problem).toContain("accepteD");
  });

  it("fails when a code sample drifts from its example, and --write syncs it back", () => {
    const line = alter("example=docs/examples/cancel-race.ts region=narrow", "already_terminal", "already_done");
    const failed = checkDocs({ docsDir, root });
    expect(failed.problems.map((p) => p.split("\n")[0])).toEqual([
      `${guide}:${line}: block differs from docs/examples/cancel-race.ts region narrow (- source, + doc):`,
    ]);
    const written = checkDocs({ docsDir, root, write: true });
    expect(written.written).toHaveLength(1);
    expect(checkDocs({ docsDir, root }).ok).toBe(true);
    expect(readFileSync(guide, "utf8")).toBe(readFileSync(join(root, "docs/cancelling-a-turn.md"), "utf8"));
  });

  it("fails on a block with no source, a missing region or example, and lines out of range", () => {
    writeFileSync(
      join(docsDir, "bad.md"),
      [
        "# bad",
        "```jsonl",
        "{}",
        "```",
        "```ts example=docs/examples/cancel-race.ts region=nope",
        "```",
        "```jsonl transcript=transcripts/cancel-race.jsonl lines=5-60",
        "```",
        "```ts",
        "connect();",
        "```",
        "```text output=docs/examples/missing.ts",
        "```",
        "",
      ].join("\n"),
    );
    const problems = checkDocs({ docsDir, root }).problems.map((p) => p.replace(/^.*bad\.md/, "bad.md"));
    expect(problems).toEqual([
      "bad.md:2: a wire exchange must name its transcript: ```jsonl transcript=transcripts/<file>.jsonl lines=A-B",
      'bad.md:5: example docs/examples/cancel-race.ts has no region "nope" (// #region nope … // #endregion nope)',
      "bad.md:7: lines=5-60 is outside transcripts/cancel-race.jsonl (13 lines)",
      "bad.md:9: a code sample must name the example it quotes: ```ts example=docs/examples/<file>.ts [region=<name>]",
      "bad.md:12: example docs/examples/missing.ts does not exist",
    ]);
  });

  it("fails on a link to a file that does not exist, relative or into this repository on GitHub", () => {
    writeFileSync(
      join(docsDir, "links.md"),
      [
        "# links",
        "[fine](cancelling-a-turn.md#the-race-you-must-handle) [fine too](https://github.com/meta-models/muse-code-sdk/tree/main/recipes)",
        "[gone](gone.md) [elsewhere](https://example.com/x.md)",
        "[gone on GitHub](https://github.com/meta-models/muse-code-sdk/blob/main/recipes/nope.ts)",
        "```md",
        "[inside a code block](nowhere.md)",
        "```",
        "",
      ].join("\n"),
    );
    const problems = checkDocs({ docsDir, root }).problems.map((p) => p.replace(/^.*links\.md/, "links.md"));
    expect(problems).toEqual([
      "links.md:3: link to gone.md: no such file",
      "links.md:4: link to https://github.com/meta-models/muse-code-sdk/blob/main/recipes/nope.ts: no such file",
    ]);
  });

  it("fails on recipe-harness talk and on seeds", () => {
    writeFileSync(join(docsDir, "harness.md"), ["# harness", "", "Get a client with `env.connect()`.", "", "As seed 000 says.", ""].join("\n"));
    const problems = checkDocs({ docsDir, root }).problems.map((p) => p.replace(/^.*harness\.md/, "harness.md"));
    expect(problems).toEqual([
      'harness.md:3: guides speak of the reader\'s app: no recipe harness (env.connect(), env.session(), …) and no "seed" (env.connect)',
      'harness.md:5: guides speak of the reader\'s app: no recipe harness (env.connect(), env.session(), …) and no "seed" (seed)',
    ]);
  });

  it("fails on an example that no guide quotes, that has no header, or that imports what an app cannot", () => {
    const examplesDir = join(dir, "examples");
    mkdirSync(examplesDir);
    const file = join(examplesDir, "stray.ts");
    writeFileSync(file, ['import { thing } from "../src/index.js";', 'const data = "dist/host/cli.js";', "console.log(thing, data);", ""].join("\n"));
    expect(checkDocs({ docsDir, root, examplesDir }).problems).toEqual([`${file}:1: no guide quotes this example (\`\`\`ts example=${file})`]);
    expect(lintExample("stray.ts", readFileSync(file, "utf8"))).toEqual([
      "stray.ts:1: an example opens with a /** header */ saying what it shows",
      'stray.ts:1: imports "../src/index.js": an example may import only @muse-code/sdk, @muse-code/sdk/{node,host,testing,framing,websocket,ui,session,react} and node: built-ins',
      "stray.ts:2: names a path inside this repository; an example must run in an app outside it",
    ]);
  });

  it("dedents a region and leaves out its markers", () => {
    const source = ["function f() {", "  // #region r", "  if (x) {", "    y();", "  }", "  // #endregion r", "}"].join("\n");
    expect(regionText(source, "r")).toBe("if (x) {\n  y();\n}");
    expect(regionText(source, "missing")).toBeUndefined();
  });
});

describe("docs:check runs the examples", () => {
  it("a broken example makes docs:check fail, naming the example and showing what it printed", async () => {
    const { examplesDir, docsDir } = examplesWithGuide({
      fine: '/** fine: prints one line. */\nconsole.log("all good");\n',
      broken: '/** broken: prints, then throws. */\nconst step: number = 2;\nconsole.log(`reached step ${step}`);\nthrow new Error("the example is broken");\n',
    });
    const result = await runDocsCheck({ root, docsDir, examplesDir, write: true, timeoutMs: 10_000 });
    expect(result.ok).toBe(false);
    expect(result.runs.map((r) => [r.example.replace(/^.*\//, ""), r.ok])).toEqual([
      ["broken.ts", false],
      ["fine.ts", true],
    ]);
    const failures = result.problems.filter((p) => p.includes("example exited"));
    expect(failures).toHaveLength(1);
    const failure = failures[0] as string;
    expect(failure).toMatch(new RegExp(`^${join(examplesDir, "broken.ts")}:1: example exited with code 1 after \\d+ ms; its output:`));
    expect(failure).toContain("      | reached step 2");
    expect(failure).toContain("Error: the example is broken");
    // The stack points into the example's own source, not the transpiled copy.
    expect(failure).toContain(`${join(examplesDir, "broken.ts")}:4`);
    // The good example's output was synced; the broken one's cannot be.
    expect(result.problems.filter((p) => !p.includes("example exited")).map((p) => p.replace(/^.*guide\.md:\d+: /, ""))).toEqual([
      `example ${join(examplesDir, "broken.ts")} did not run cleanly, so its output cannot be checked (see its own problem)`,
    ]);
  });

  it("fails an example that does not exit by itself within its bound", async () => {
    const { examplesDir, docsDir } = examplesWithGuide({
      hangs: '/** hangs: an open handle keeps Node running. */\nsetInterval(() => {}, 1_000);\nconsole.log("started");\n',
    });
    const result = await runDocsCheck({ root, docsDir, examplesDir, write: true, timeoutMs: 1_500 });
    expect(result.ok).toBe(false);
    expect(result.runs[0]?.timedOut).toBe(true);
    expect(result.problems[0]).toContain("hangs.ts:1: example still running after 1500 ms, killed");
    expect(result.problems[0]).toContain("      | started");
  });

  it("checks an output block against what the example printed, and --write syncs it", async () => {
    const {
      examplesDir,
      docsDir,
      guide: page,
    } = examplesWithGuide({ greet: '/** greet: prints two lines. */\nconsole.log("hello");\nconsole.log("turn completed");\n' });
    const stale = await runDocsCheck({ root, docsDir, examplesDir, timeoutMs: 10_000 });
    expect(stale.problems.map((p) => p.split("\n")[0]?.replace(/^.*guide\.md:\d+: /, ""))).toEqual([
      `block differs from the output of ${join(examplesDir, "greet.ts")} (- source, + doc):`,
    ]);
    const synced = await runDocsCheck({ root, docsDir, examplesDir, write: true, timeoutMs: 10_000 });
    expect(synced.ok).toBe(true);
    expect(readFileSync(page, "utf8")).toContain("```text output=" + join(examplesDir, "greet.ts") + "\nhello\nturn completed\n```");
    expect((await runDocsCheck({ root, docsDir, examplesDir, timeoutMs: 10_000 })).ok).toBe(true);
  });

  it("runs an example with plain node, so @muse-code/sdk and @muse-code/host resolve through package.json exports to their dist/, never to src/", async () => {
    const examplesDir = join(dir, "examples");
    mkdirSync(examplesDir);
    const probe = join(examplesDir, "probe.ts");
    const entries = ["@muse-code/sdk", "@muse-code/sdk/node", "@muse-code/sdk/testing", "@muse-code/host"];
    writeFileSync(
      probe,
      `/** probe */\nfor (const entry of ${JSON.stringify(entries)}) console.log(import.meta.resolve(entry));\nconsole.log(process.cwd());\n`,
    );
    const run = await runExample(probe, { root, timeoutMs: 10_000 });
    expect(run.ok).toBe(true);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 4)).toEqual(
      ["dist/index.js", "dist/node/index.js", "dist/testing/index.js", "packages/host/dist/index.js"].map((p) => pathToFileURL(join(root, p)).href),
    );
    // From an empty directory of its own: an example cannot lean on the repo as its cwd.
    expect(lines[4]).not.toBe(root);
    expect(lines[4]?.startsWith(tmpdir())).toBe(true);
  });
});
