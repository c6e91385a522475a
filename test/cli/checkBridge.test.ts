/**
 * `muse check --model codex --spawn "muse serve --stdio --agent codex …"`, end to end: the real
 * `muse check` (the bundled bin) against a real bridged host (the bundled `muse serve`), which
 * runs the real pinned Codex binary (@openai/codex 0.169.0) whose model is the directive-playing
 * Responses server (test/fixtures/check-model/directiveResponses.ts). Codex asks before an
 * escalated command (`on-request`, `workspace-write`), so the approval scenarios run. Every
 * scenario must pass or be not applicable with a reason; none may fail; and the not-applicable
 * ones must be exactly those whose capability the bridged host's host/info says it lacks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { startDirectiveResponses, type DirectiveResponsesServer } from "../fixtures/check-model/directiveResponses.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { problemsOf, rowsOf, type Row } from "./checkTable.js";
import { runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
let model: DirectiveResponsesServer;
let home: CodexTestHome;
let data: { dir: string; remove(): void };
beforeAll(async () => {
  model = await startDirectiveResponses();
  home = makeCodexHome({ baseUrl: model.baseUrl, approvalPolicy: "on-request", sandboxMode: "workspace-write" });
  data = tempDataDir();
});
afterAll(async () => {
  await model?.close();
  home?.remove();
  data?.remove();
});

/** The scenarios each capability the bridged host lacks (host/info says so) makes not applicable. */
const NEEDING: Record<string, readonly string[]> = {
  policyHooks: ["hook stop's cause"],
  subagents: ["stop a tree", "a child fails on its own", "a child's question withdrawn", "restart mid-tree"],
};
/** The scenarios Codex's questions make not applicable: an escalated command's approval request offers no acceptForSession. */
const NO_SESSION_GRANT = ["session grant is exact", "grant stays in its session"];

describe("muse check against the Codex bridge (real muse check, real muse serve --agent codex, real Codex 0.169.0)", () => {
  it("passes every scenario the bridge supports and reports the rest not applicable, naming what is absent", async () => {
    // Codex works in the host's directory: the host is started there, by exec, so the check's signals reach it.
    const serve = `cd ${q(home.workDir)} && exec ${q(process.execPath)} ${q(bundles().host)} serve --stdio --agent codex --data ${q(data.dir)}`;
    const result = await runMuse(bundles(), ["check", "--model", "codex", "--spawn", `sh -c ${q(serve)}`], {
      timeoutMs: 600_000,
      env: { ...home.env, CODEX_HOME: home.codexHome },
    });
    console.log(result.stdout);
    const rows = rowsOf(result.stdout);
    expect(rows.map((r) => r.scenario)).toContain("host info");
    expect(rows).toHaveLength(30);

    // Failed: none.
    expect(
      rows.filter((r) => r.verdict === "FAIL").map((r) => `${r.scenario}: ${problemsOf(result.stdout, r.scenario).join("; ")}`),
      "failed scenarios",
    ).toEqual([]);

    // Not applicable: exactly what the bridged host lacks, each saying what is absent and why; never passed.
    const notApplicable = rows.filter((r) => r.verdict === "N/A");
    for (const row of notApplicable) expect(row.note).toMatch(/^\(not run: not applicable \((capability \w+|\w+) absent\): .+\)$/);
    const absent = (r: Row) => /not applicable \((?:capability )?(\w+) absent\)/.exec(r.note)?.[1];
    const expected = [
      ...Object.entries(NEEDING).flatMap(([capability, scenarios]) => scenarios.map((scenario) => `${scenario}: capability ${capability}`)),
      ...NO_SESSION_GRANT.map((scenario) => `${scenario}: approveForSession`),
    ];
    const seen = notApplicable.map((r) => `${r.scenario}: ${/\(capability /.test(r.note) ? "capability " : ""}${absent(r) ?? "?"}`);
    expect(seen.sort()).toEqual(expected.sort());
    expect(rows.filter((r) => r.verdict === "PASS")).toHaveLength(30 - expected.length);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^muse check: all 23 scenarios run passed; .*7 not run: /m);
    expect(model.requests.some((r) => r.steps !== undefined)).toBe(true);
  }, 620_000);
});
