/**
 * `npm run graph:check` (dependency-cruiser with .dependency-cruiser.mjs): the repository's own config,
 * run the way the npm script runs it, on tiny src/ trees in a temp dir. It passes a clean tree, and
 * fails on a circle (a type-only one too) and on each "never" arrow it holds.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

const scripts = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
const GRAPH_CHECK = scripts["graph:check"] ?? "";
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes `files` (path → text) under a fresh temp dir with a tsconfig.json, runs graph:check's command there with the repository's config. */
function graphCheck(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "graph-check-"));
  dirs.push(dir);
  const all = { "tsconfig.json": JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true } }), ...files };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  // The npm script's own arguments, with the config named by its absolute path in the repository.
  const args = GRAPH_CHECK.split(" ")
    .slice(1)
    .map((arg) => (arg === ".dependency-cruiser.mjs" ? join(repoRoot, arg) : arg));
  const run = spawnSync(join(repoRoot, "node_modules/.bin/depcruise"), args, { cwd: dir, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The rule names the err reporter printed, sorted and de-duplicated. */
const rules = (output: string) => [...new Set([...output.matchAll(/error ([a-z-]+):/g)].map((m) => m[1]))].sort();

describe("graph:check", () => {
  it("is the first gate of npm run check and cruises src/ with the repository's config", () => {
    expect(scripts["check"]?.startsWith("npm run graph:check && ")).toBe(true);
    expect(GRAPH_CHECK).toBe("depcruise src --config .dependency-cruiser.mjs --output-type err");
  });

  it("passes a tree without circles or forbidden arrows", () => {
    const run = graphCheck({
      "src/index.ts": 'export { a } from "./a.js";\n',
      "src/a.ts": 'import type { B } from "./protocol/b.js";\nexport const a: B = 1;\n',
      "src/protocol/b.ts": "export type B = number;\n",
      "src/host/h.ts": 'import type { B } from "../protocol/b.js";\nimport { readFileSync } from "node:fs";\nexport const h: B = readFileSync.length;\n',
      "src/host/index.ts": 'export { h } from "./h.js";\n',
      // `muse serve` loads the host through its entry point.
      "src/node/cli/serveCommand.ts": 'export const serve = async () => (await import("../../host/index.js")).h;\n',
    });
    expect(run.output).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  }, 60_000);

  it("fails on two files that import each other, even with type-only imports", () => {
    const run = graphCheck({
      "src/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "src/b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
    });
    expect(run.status).not.toBe(0);
    expect(rules(run.output)).toEqual(["no-circular"]);
    expect(run.output).toMatch(/src\/a\.ts → \s*src\/b\.ts →\s*src\/a\.ts/);
  }, 60_000);

  it("fails on each never-arrow of ARCHITECTURE.md that it holds", () => {
    const run = graphCheck({
      "src/client/mspClient.ts": 'import { stop } from "../ui/stop.js";\nexport const client = stop;\n',
      "src/ui/stop.ts": "export const stop = 1;\n",
      "src/rpc/endpoint.ts": 'import { recorder } from "../turns/recorder.js";\nexport const endpoint = recorder;\n',
      "src/internal/boundedMap.ts": "export const boundedMap = 1;\n",
      "src/internal/other.ts": "export const other = 1;\n",
      "packages/host/src/cli/main.ts": 'import { other } from "../../internal/other.js";\nexport const main = other;\n',
      "src/core.ts": 'import { readFileSync } from "node:fs";\nimport { h } from "./host/h.js";\nexport const core = [readFileSync, h];\n',
      "src/host/h.ts":
        'import { client } from "../client/mspClient.js";\nimport { boundedMap } from "../internal/boundedMap.js";\nexport const h = [client, boundedMap];\n',
      "src/turns/recorder.ts": 'import { client } from "../client/mspClient.js";\nexport const recorder = client;\n',
      "src/gone.ts": 'import { x } from "./nowhere.js";\nexport const gone = x;\n',
      // `muse serve` past the host's entry point, with import() (which the gate sees too).
      "src/node/cli/serveCommand.ts": 'export const serve = async () => (await import("../../host/h.js")).h;\n',
    });
    expect(run.status).not.toBe(0);
    expect(rules(run.output)).toEqual([
      "cli-public-entries-only",
      "cli-serve-host-entry-only",
      "client-no-host",
      "client-not-above",
      "core-no-node-builtins",
      "core-no-node-only-code",
      "endpoint-knows-only-json-rpc",
      "host-shares-only-protocol",
      "no-unresolvable",
      "turns-not-above",
    ]);
    // boundedMap is the one internal file the host may share with the client.
    expect(run.output).not.toContain("src/host/h.ts → src/internal/boundedMap.ts");
  }, 60_000);
});
