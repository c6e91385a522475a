/**
 * The sample sessions of docs/muse-cli.md are real: every ```console muse-session block is run, one
 * `$ ` command at a time, with the bundled `muse` and `muse-host` (the words `muse` and `muse-host`
 * of the samples), from a fresh directory holding the package's models/, and what each printed
 * (stdout and stderr) must be the lines the block shows after it. A `^C` line is a Ctrl-C: SIGINT,
 * sent once the lines above it have been printed. `$ echo $?` shows the last exit code. Ids,
 * durations and fingerprints differ from run to run, so both sides are normalised: the n-th
 * distinct UUID becomes <id n> (and an id a sample's command repeats from earlier output is
 * replaced by the id that run really printed), `after 1.3 s` becomes `after <s> s`, `962 ms` `<n> ms`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { splitCommand } from "../../packages/host/src/cli/splitCommand.js";
import { lineDiff } from "../../scripts/docs-check.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles, type MuseBundles } from "./museProcess.js";

const DOC = "docs/muse-cli.md";
const bundles = useMuseBundles();
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Sample {
  /** 1-based line of the block's opening fence. */
  line: number;
  lines: string[];
}

function samples(text: string): Sample[] {
  const lines = text.split("\n");
  const found: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```console\s+muse-session\s*$/.test(lines[i] as string)) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end] as string)) end++;
    found.push({ line: i + 1, lines: lines.slice(start, end) });
    i = end;
  }
  return found;
}

/** Numbers UUIDs by first appearance, one table per side. */
class IdTable {
  readonly #ids = new Map<string, number>();
  index(id: string): number {
    let n = this.#ids.get(id);
    if (n === undefined) this.#ids.set(id, (n = this.#ids.size + 1));
    return n;
  }
  idAt(n: number): string | undefined {
    for (const [id, i] of this.#ids) if (i === n) return id;
    return undefined;
  }
  normalise(text: string): string {
    return text
      .replace(UUID, (id) => `<id ${this.index(id)}>`)
      .replace(/after \d+\.\d s/g, "after <s> s")
      .replace(/sha256:[0-9a-f]{64}/g, "sha256:<hex>")
      .replace(/ +\d+ ms\b/g, " <n> ms")
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n");
  }
}

/** argv for a sample's command: `muse` and `muse-host` are the bundles, run by this Node. */
function argvOf(words: string[], b: MuseBundles): string[] {
  const node = JSON.stringify(process.execPath);
  const spawnAt = words.indexOf("--spawn");
  if (spawnAt >= 0 && words[spawnAt + 1]?.startsWith("muse-host ")) {
    words[spawnAt + 1] = `${node} ${JSON.stringify(b.host)} ${(words[spawnAt + 1] as string).slice("muse-host ".length)}`;
  }
  // `npx muse …`, as a user with the package installed locally types it.
  const from = words[0] === "npx" ? 1 : 0;
  if (words[from] !== "muse") throw new Error(`a sample command runs npx muse (or muse), not ${words.slice(0, from + 1).join(" ")}`);
  return [process.execPath, b.muse, ...words.slice(from + 1)];
}

function run(
  argv: string[],
  cwd: string,
  interruptAfter: string | undefined,
  seen: (printed: string) => boolean,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(argv[0] as string, argv.slice(1), { cwd, env: { ...process.env, NO_COLOR: "" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let interrupted = interruptAfter === undefined;
  const take = (chunk: string) => {
    output += chunk;
    if (!interrupted && seen(output)) {
      interrupted = true;
      child.kill("SIGINT");
    }
  };
  child.stdout.setEncoding("utf8").on("data", take);
  child.stderr.setEncoding("utf8").on("data", take);
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe(`the sample sessions of ${DOC}`, () => {
  const all = samples(readFileSync(join(repoRoot, DOC), "utf8"));

  it("has sample sessions", () => {
    expect(all.length).toBeGreaterThanOrEqual(4);
  });

  for (const sample of all) {
    it(`${DOC}:${sample.line} prints what it shows`, async () => {
      const cwd = mkdtempSync(join(tmpdir(), "muse-docs-"));
      symlinkSync(join(repoRoot, "packages/host/models"), join(cwd, "models"));
      const doc = new IdTable();
      const real = new IdTable();
      const expected: string[] = [];
      const actual: string[] = [];
      let lastCode: number | null = null;
      try {
        let i = 0;
        while (i < sample.lines.length) {
          const command = sample.lines[i] as string;
          if (!command.startsWith("$ ")) throw new Error(`${DOC}:${sample.line + 1 + i}: expected a "$ " command line, got ${JSON.stringify(command)}`);
          let j = i + 1;
          while (j < sample.lines.length && !(sample.lines[j] as string).startsWith("$ ")) j++;
          const shown = sample.lines.slice(i + 1, j);
          i = j;
          expected.push(doc.normalise(command));
          // The command as run: ids it repeats from earlier output are the ids this run printed.
          const line = command.slice(2).replace(UUID, (id) => real.idAt(doc.index(id)) ?? id);
          actual.push(doc.normalise(command));
          if (line === "echo $?") {
            expected.push(...shown.map((l) => doc.normalise(l)));
            actual.push(String(lastCode));
            continue;
          }
          const stop = shown.indexOf("^C");
          // Each side numbered afresh: the lines above ^C against what this command printed so far.
          const beforeStop = stop < 0 ? undefined : new IdTable().normalise(shown.slice(0, stop).join("\n"));
          const result = await run(argvOf(splitCommand(line), bundles()), cwd, beforeStop, (printed) =>
            new IdTable().normalise(printed).startsWith(`${beforeStop as string}\n`),
          );
          lastCode = result.code;
          expected.push(...shown.filter((l) => l !== "^C").map((l) => doc.normalise(l)));
          actual.push(...real.normalise(result.output.replace(/\n$/, "")).split("\n"));
        }
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
      const want = expected.join("\n");
      const got = actual.join("\n");
      if (got !== want) throw new Error(`${DOC}:${sample.line}: the sample differs from a real run (- doc, + run):\n${lineDiff(want, got)}`);
    }, 60_000);
  }
});
