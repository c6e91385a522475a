/**
 * docs:check's command lines: each `muse …`/`muse-host …` command of a guide's shell blocks goes
 * through the CLI's own parser, a `--spawn` command inside it too, and a path into the installed
 * package must be one the tarball holds.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDocs, fencedBlocks } from "../../scripts/docs-check.js";
import { commandProblem, commandProblems, docCommandLines, simpleCommands } from "../../scripts/docs-commands.js";

const root = process.cwd();

/** The problems docs:check's command check finds in a guide made of `markdown`. */
function problemsOf(markdown: string): string[] {
  const lines = markdown.split("\n");
  return commandProblems("guide.md", lines, fencedBlocks(lines), root);
}

const fence = (lang: string, ...lines: string[]) => ["```" + lang, ...lines, "```"].join("\n");

describe("docs:check: the command lines of a guide", () => {
  it("passes commands the CLI takes: muse serve, muse-host serve, muse with a --spawn host, other commands untouched", () => {
    const guide = fence(
      "sh",
      "npm install @muse-code/sdk @muse-code/host",
      "(umask 077; node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\" > .muse-token)",
      "npx muse serve --ws 8080 --ui-dir dist/chat --script node_modules/@muse-code/host/models/demo.json --token-file .muse-token --data .muse-data",
      "npx muse-host serve --stdio --script node_modules/@muse-code/host/models/hello.json",
      "# a comment line, then a continued one",
      'npx muse run "check the build" \\',
      '  --spawn "muse-host serve --stdio --script node_modules/@muse-code/host/models/cli-demo.json"',
      "npx muse info --ws ws://127.0.0.1:8080/msp --token-file .muse-token 2>&1 | head -3",
      'echo "http://localhost:5173/#token=$(cat .muse-token)"',
    );
    expect(problemsOf(guide)).toEqual([]);
  });

  it("fails the serve command the trial ran into (no --script), with its line and the parser's words", () => {
    const guide = [
      "# guide",
      "",
      fence(
        "sh",
        "npx esbuild app.tsx --bundle --outfile=dist/chat/app.js && cp index.html dist/chat/",
        "npx muse serve --ws 8080 --ui-dir dist/chat --token-file .muse-token --data .muse-data",
      ),
    ].join("\n");
    expect(problemsOf(guide)).toEqual([
      "guide.md:5: `muse serve --ws 8080 --ui-dir dist/chat --token-file .muse-token --data .muse-data` is refused by its parser: serve needs --script PATH or --model NAME=PATH",
    ]);
  });

  it("fails a flag that does not exist, a flag another command takes, a flag that needs --ws, and a non-loopback address", () => {
    expect(commandProblem("muse", ["serve", "--ws", "8080", "--script", "m.json", "--ui-directory", "x"])).toBe("unknown option --ui-directory");
    expect(commandProblem("muse", ["info", "--ws", "ws://127.0.0.1:8080/msp", "--model", "x"])).toBe("muse info does not take --model");
    expect(commandProblem("muse-host", ["serve", "--stdio", "--script", "m.json", "--allow-origin", "http://localhost:5173"])).toBe(
      "--allow-origin needs --ws [ADDR:]PORT",
    );
    expect(commandProblem("muse", ["serve", "--ws", "0.0.0.0:8080", "--script", "m.json"])).toMatch(/not a loopback address.*--allow-remote/);
    expect(commandProblem("muse", ["serve", "--ws", "0.0.0.0:8080", "--script", "m.json", "--allow-remote"])).toBeUndefined();
    expect(commandProblem("muse-host", ["start", "--stdio"])).toBe("unknown command start (serve …)");
    expect(commandProblem("muse", ["serve", "--help"])).toBeUndefined();
    expect(commandProblem("muse", ["help", "serve"])).toBeUndefined();
  });

  it("checks the host command inside --spawn", () => {
    expect(commandProblem("muse", ["run", "hi", "--spawn", "muse-host serve --stdio"])).toBe(
      "its --spawn command: serve needs --script PATH or --model NAME=PATH",
    );
    expect(commandProblem("muse", ["check", "--spawn", "muse serve --stdio --model msp-check=m.json"])).toBeUndefined();
  });

  it("fails a path into the package that the tarball does not hold", () => {
    const guide = fence(
      "bash",
      "npx muse serve --stdio --script node_modules/@muse-code/host/models/nope.json",
      'npx muse check --spawn "muse-host serve --stdio --script node_modules/@muse-code/sdk/recipes/models/approve-tool.json"',
      "npx muse serve --stdio --script node_modules/@muse-code/sdk/models/hello.json",
    );
    expect(problemsOf(guide)).toEqual([
      "guide.md:2: node_modules/@muse-code/host/models/nope.json does not exist",
      'guide.md:3: node_modules/@muse-code/sdk/recipes/models/approve-tool.json is not in the packed package (package.json "files")',
      'guide.md:4: node_modules/@muse-code/sdk/models/hello.json is not in the packed package (package.json "files")',
    ]);
  });

  it("reads inline `npx muse …` spans of the prose, not fragments, elisions or console transcripts", () => {
    const guide = [
      "Run `npx muse-host serve --ws 8080` and open it; `muse-host serve --ws` is a fragment, `npx muse-host …` an elision.",
      "",
      fence("console", "$ npx muse run hi", 'muse: no host: give --spawn "CMD ARGS…" or --ws URL'),
    ].join("\n");
    expect(problemsOf(guide)).toEqual(["guide.md:1: `muse-host serve --ws 8080` is refused by its parser: serve needs --script PATH or --model NAME=PATH"]);
  });

  it("reads a shell block inside a list item (an indented fence)", () => {
    const guide = ["- To see the status:", "", "  ```sh", "  npx muse info --ws ws://127.0.0.1:8080/msp --token-flie .muse-token", "  ```"].join("\n");
    expect(problemsOf(guide)).toEqual([
      "guide.md:4: `muse info --ws ws://127.0.0.1:8080/msp --token-flie .muse-token` is refused by its parser: unknown option --token-flie",
    ]);
  });

  it("fails a shell line that does not split", () => {
    expect(problemsOf(fence("sh", 'npx muse run "unterminated'))).toEqual([
      'guide.md:2: this shell line does not split (unterminated " quote): npx muse run "unterminated',
    ]);
  });
});

describe("docs:check: splitting a shell line", () => {
  it("splits at operators and drops redirections with their targets", () => {
    expect(simpleCommands(`cd app && npx muse info --ws "ws://127.0.0.1:8080/msp" > info.txt 2>&1; echo $(cat .t) | tee x`)).toEqual([
      ["cd", "app"],
      ["npx", "muse", "info", "--ws", "ws://127.0.0.1:8080/msp"],
      ["echo", "$(cat .t)"],
      ["tee", "x"],
    ]);
    expect(simpleCommands(`(umask 077; node -e "a('b')" > .muse-token)`)).toEqual([
      ["umask", "077"],
      ["node", "-e", "a('b')"],
    ]);
  });

  it("joins continued lines and skips comments and blank lines", () => {
    const lines = ["```sh", "# start it", "", "npx muse serve \\", "  --stdio --script m.json", "```"];
    expect(docCommandLines(lines, fencedBlocks(lines))).toEqual([{ line: 4, text: "npx muse serve  --stdio --script m.json" }]);
  });
});

describe("docs:check fails a guide whose command does not parse", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "docs-commands-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("through checkDocs, with the file and line", () => {
    writeFileSync(join(dir, "guide.md"), ["# guide", "", fence("sh", "npx muse-host serve --ws 8080 --ui-dir dist/chat")].join("\n"));
    const result = checkDocs({ docsDir: dir, root });
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([
      expect.stringMatching(/guide\.md:4: `muse-host serve --ws 8080 --ui-dir dist\/chat` is refused by its parser: serve needs --script/),
    ]);
  });
});
