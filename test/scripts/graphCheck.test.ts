/**
 * `npm run graph:check` (dependency-cruiser with .dependency-cruiser.mjs): the repository's own config,
 * run the way the npm script runs it, on tiny trees (src/ and packages/NAME/src/) in a temp dir. It passes a clean tree, and
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
  it("is the first gate of npm run check and cruises the SDK and each package with the repository's config", () => {
    expect(scripts["check"]?.startsWith("npm run graph:check && ")).toBe(true);
    expect(GRAPH_CHECK).toBe("depcruise src packages/protocol/src packages/host/src --config .dependency-cruiser.mjs --output-type err");
  });

  it("passes a tree without circles or forbidden arrows", () => {
    const run = graphCheck({
      "src/index.ts": 'export { a } from "./a.js";\n',
      "src/a.ts": 'import type { B } from "../packages/protocol/src/b.js";\nexport const a: B = 1;\n',
      "packages/protocol/src/b.ts": "export type B = number;\n",
      "packages/host/src/server/h.ts":
        'import type { B } from "../../../protocol/src/b.js";\nimport { readFileSync } from "node:fs";\nexport const h: B = readFileSync.length;\n',
      "packages/host/src/index.ts": 'export { h } from "./server/h.js";\n',
      // The muse CLI uses the SDK's public entry; `muse serve` loads the host through its entry point.
      "packages/host/src/cli/run.ts": 'export { a } from "../../../../src/index.js";\n',
      "packages/host/src/cli/serveCommand.ts": 'export const serve = async () => (await import("../index.js")).h;\n',
    });
    expect(run.output).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  }, 60_000);

  it("fails on two files that import each other, even with type-only imports", () => {
    const run = graphCheck({
      "src/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
      "src/b.ts": 'import type { A } from "./a.js";\nexport type B = { a?: A };\n',
      "packages/protocol/src/p.ts": "export type P = number;\n",
      "packages/host/src/index.ts": "export const h = 1;\n",
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
      "src/internal/other.ts": "export const other = 1;\n",
      "src/core.ts": 'import { readFileSync } from "node:fs";\nexport const core = readFileSync;\n',
      "src/node/spawn.ts": 'import { h } from "../../packages/host/src/server/h.js";\nexport const spawn = h;\n',
      "src/turns/recorder.ts": 'import { client } from "../client/mspClient.js";\nexport const recorder = client;\n',
      "src/gone.ts": 'import { x } from "./nowhere.js";\nexport const gone = x;\n',
      "packages/protocol/src/words.ts": 'import { other } from "../../../src/internal/other.js";\nexport const words = other;\n',
      "packages/protocol/src/boundedMap.ts": "export const boundedMap = 1;\n",
      "packages/host/src/server/h.ts":
        'import { client } from "../../../../src/client/mspClient.js";\nimport { boundedMap } from "../../../protocol/src/boundedMap.js";\nexport const h = [client, boundedMap];\n',
      "packages/host/src/server/usesCli.ts": 'import { main } from "../cli/main.js";\nexport const usesCli = main;\n',
      "packages/host/src/index.ts": 'export { h } from "./server/h.js";\n',
      "packages/host/src/cli/main.ts": 'import { other } from "../../../../src/internal/other.js";\nexport const main = other;\n',
      // `muse serve` past the host's entry point, with import() (which the gate sees too).
      "packages/host/src/cli/serveCommand.ts": 'export const serve = async () => (await import("../server/h.js")).h;\n',
    });
    expect(run.status).not.toBe(0);
    expect(rules(run.output)).toEqual([
      "cli-public-entries-only",
      "cli-serve-host-entry-only",
      "client-not-above",
      "core-no-node-builtins",
      "endpoint-knows-only-json-rpc",
      "host-no-client",
      "host-not-cli",
      "no-unresolvable",
      "protocol-imports-neither",
      "sdk-no-host",
      "turns-not-above",
    ]);
    // @muse-code/protocol (BoundedMap included) is what the host shares with the client.
    expect(run.output).not.toContain("packages/host/src/server/h.ts → packages/protocol/src/boundedMap.ts");
  }, 60_000);

  it("keeps the browser-safe core off Node-only code", () => {
    const run = graphCheck({
      "src/core.ts": 'import { n } from "./node/n.js";\nexport const core = n;\n',
      "src/node/n.ts": "export const n = 1;\n",
      "packages/protocol/src/p.ts": "export const p = 1;\n",
      "packages/host/src/index.ts": "export const h = 1;\n",
    });
    expect(rules(run.output)).toEqual(["core-no-node-only-code"]);
  }, 60_000);
});
