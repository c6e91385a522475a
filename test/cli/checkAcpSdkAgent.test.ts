/**
 * `muse check --model acp --spawn "muse serve --stdio --agent acp -- <an ACP SDK agent>"`, end to
 * end: the real `muse check` (the bundled bin) against a real ACP-bridged host (the bundled
 * `muse serve`), whose agent is built on the ACP SDK's own agent side and plays the check's
 * directives with real shell commands (../fixtures/acp/directiveAgent.ts). This agent can do
 * everything an ACP agent can (decline a call and go on, reject and stop, report a turn's usage),
 * so every scenario the bridge supports must pass, with no pin; the rest are exactly those whose
 * capability `host/info` says the bridge lacks, reported not applicable with why.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { problemsOf, rowsOf } from "./checkTable.js";
import { runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
let data: { dir: string; remove(): void };
beforeAll(() => {
  data = tempDataDir();
});
afterAll(() => data?.remove());

/** The scenarios each capability the bridged host lacks makes not applicable. */
const NEEDING: Record<string, readonly string[]> = {
  policyHooks: ["hook stop's cause"],
  steering: ["steer after terminal rejected", "a splice on default cancel", "no splice with keepInbox", "deltas around a steer"],
  subagents: ["stop a tree", "a child fails on its own", "a child's question withdrawn", "restart mid-tree"],
};

describe("muse check against the ACP bridge with an ACP SDK agent (real muse check, real muse serve --agent acp, real shell commands)", () => {
  it("passes every scenario the bridge supports and reports exactly the rest not applicable", async () => {
    const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
    const agent = [process.execPath, "--import", tsx, join(repoRoot, "test/fixtures/acp/directiveAgent.ts")].map(q).join(" ");
    const serve = `exec ${q(process.execPath)} ${q(bundles().host)} serve --stdio --agent acp --data ${q(data.dir)} -- ${agent}`;
    const result = await runMuse(bundles(), ["check", "--model", "acp", "--spawn", `sh -c ${q(serve)}`], { timeoutMs: 600_000 });
    console.log(result.stdout);
    const rows = rowsOf(result.stdout);
    expect(rows).toHaveLength(30);
    for (const row of rows.filter((r) => r.verdict === "FAIL")) expect.fail(`${row.scenario} failed: ${problemsOf(result.stdout, row.scenario).join("; ")}`);
    const notApplicable = rows.filter((r) => r.verdict === "N/A");
    for (const row of notApplicable) expect(row.note).toMatch(/^\(not run: not applicable \(capability \w+ absent\): .+\)$/);
    const seen = notApplicable.map((r) => `${r.scenario}: ${/not applicable \(capability (\w+) absent\)/.exec(r.note)?.[1] ?? "?"}`);
    const expected = Object.entries(NEEDING).flatMap(([capability, scenarios]) => scenarios.map((scenario) => `${scenario}: ${capability}`));
    expect(seen.sort()).toEqual(expected.sort());
    expect(rows.filter((r) => r.verdict === "PASS").map((r) => r.scenario)).toContain("deny and stop");
    expect(result.code).toBe(0);
  }, 620_000);
});
