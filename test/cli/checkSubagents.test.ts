/**
 * `muse check`'s subagent scenarios (issue 23) against real child processes: they pass on the
 * reference host (its data in a temp dir, so "restart mid-tree" can restart it on the same data),
 * are not run on a host whose host/info lists no `capabilities.subagents`, and fail on the
 * reference host behind a relay that lies about a tree (fixtures/subagentRelay.mjs): a parent's
 * terminal before a child's, a child's cause rewritten, a stopped child's salvaged text dropped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const SUBAGENT_SCENARIOS = ["stop a tree", "a child fails on its own", "a child's question withdrawn", "restart mid-tree"];
const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** The reference host serving the msp-check model, its data in a fresh temp dir. */
function referenceHost(): string[] {
  const data = mkdtempSync(join(tmpdir(), "muse-check-subagents-"));
  dataDirs.push(data);
  return [
    bundles().host,
    "serve",
    "--stdio",
    "--data",
    data,
    "--script",
    join(repoRoot, "packages/host/models/hello.json"),
    "--model",
    `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
  ];
}

const relayed = (mode: "parent-first" | "cause-user" | "empty-output") => [
  join(repoRoot, "test/cli/fixtures/subagentRelay.mjs"),
  mode,
  "--",
  process.execPath,
  ...referenceHost(),
];

async function check(args: string[], only: string[], env?: NodeJS.ProcessEnv): Promise<CheckOutcome & { output: string }> {
  const lines: string[] = [];
  const outcome = await runCheck({
    open: spawnForCheck({ command: process.execPath, args, cwd: repoRoot, stderr: "ignore", killGraceMs: 500, ...(env === undefined ? {} : { env }) }),
    out: (line) => lines.push(line),
    color: false,
    timeoutMs: 30_000,
    only,
  });
  return { ...outcome, output: lines.join("\n") };
}

function resultOf(outcome: CheckOutcome, scenario: string) {
  const result = outcome.results.find((r) => r.scenario === scenario);
  if (result === undefined) throw new Error(`no result for ${scenario}`);
  return result;
}

describe("muse check: the subagent scenarios", () => {
  it("pass on the reference host, which lists capabilities.subagents", async () => {
    const outcome = await check(referenceHost(), ["host info", ...SUBAGENT_SCENARIOS]);
    expect(outcome.results.map((r) => [r.scenario, r.problems, r.notRun])).toEqual(["host info", ...SUBAGENT_SCENARIOS].map((name) => [name, [], undefined]));
    expect(outcome.passed).toBe(true);
    const stop = resultOf(outcome, "stop a tree").wire.map((l) => JSON.parse(l.raw) as { method?: string; params?: Record<string, unknown> });
    // The tree really ran: three child turns, one of them a grandchild, each stopped with cause parent.
    const childStarts = stop.filter((m) => m.method === "turn/started" && m.params?.["parent"] !== undefined);
    expect(childStarts.map((m) => m.params?.["depth"]).sort()).toEqual([1, 1, 2]);
    const causes = stop.filter((m) => m.method === "turn/completed").map((m) => (m.params?.["cause"] as { kind?: string } | undefined)?.kind);
    expect(causes).toEqual(["parent", "parent", "parent", "user"]);
    const restart = resultOf(outcome, "restart mid-tree").wire.map((l) => JSON.parse(l.raw) as { method?: string; params?: Record<string, unknown> });
    const failed = restart.filter((m) => m.method === "turn/completed").map((m) => [m.params?.["terminal"], m.params?.["reason"]]);
    expect(failed).toEqual(Array.from({ length: 4 }, () => ["failed", "host restarted"]));
  }, 240_000);

  it("are not run on the reference host when it cannot keep sessions across a restart (restart mid-tree) or lists no subagents", async () => {
    const noData = [
      bundles().host,
      "serve",
      "--stdio",
      "--script",
      join(repoRoot, "packages/host/models/hello.json"),
      "--model",
      `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
    ];
    // Its temp data dirs (one the SIGKILL leaves behind) under a dir of the test's.
    const temp = mkdtempSync(join(tmpdir(), "muse-check-temp-"));
    dataDirs.push(temp);
    const outcome = await check(noData, ["restart mid-tree"], { ...process.env, TMPDIR: temp });
    expect(resultOf(outcome, "restart mid-tree")).toMatchObject({ passed: false, problems: [], notRun: expect.stringMatching(/unknown_session/) as unknown });
    expect(outcome.passed).toBe(true);
    // A relay that drops capabilities.subagents from host/info: the four scenarios are not run, the run still passes.
    const hidden = await check(
      [join(repoRoot, "test/cli/fixtures/noSubagentsRelay.mjs"), "--", process.execPath, ...referenceHost()],
      ["host info", ...SUBAGENT_SCENARIOS],
    );
    for (const name of SUBAGENT_SCENARIOS) {
      expect(resultOf(hidden, name)).toMatchObject({
        passed: false,
        problems: [],
        wire: [],
        notRun: expect.stringMatching(/capabilities\.subagents/) as unknown,
      });
    }
    expect(hidden.passed).toBe(true);
    expect(hidden.output).toMatch(
      /muse check: the 1 scenario run passed; 4 not run: stop a tree, a child fails on its own, a child's question withdrawn, restart mid-tree$/m,
    );
  }, 240_000);

  it("fails \"stop a tree\" on a relay that forwards the parent's terminal before its children's (invariant 7)", async () => {
    const outcome = await check(relayed("parent-first"), ["stop a tree"]);
    const result = resultOf(outcome, "stop a tree");
    expect(result.passed).toBe(false);
    expect(result.problems.some((p) => /\(invariant 7\)/.test(p))).toBe(true);
    expect(
      result.problems.some((p) =>
        /^a tree closes leaves first: child turn \S+'s turn\/completed \(line \d+\) must come before its delegating call's item\/completed/.test(p),
      ),
    ).toBe(true);
  }, 120_000);

  it('fails "stop a tree" on a relay that rewrites a child\'s cause parent to user', async () => {
    const outcome = await check(relayed("cause-user"), ["stop a tree"]);
    const result = resultOf(outcome, "stop a tree");
    expect(result.passed).toBe(false);
    expect(
      result.problems.filter((p) =>
        /^a descendant of the stopped turn must end "cancelled" with cause\.kind "parent": .* with cause \{"kind":"user"\}$/.test(p),
      ),
    ).toHaveLength(3);
  }, 120_000);

  it('fails "stop a tree" on a relay that empties a stopped child\'s delegating call output', async () => {
    const outcome = await check(relayed("empty-output"), ["stop a tree"]);
    const result = resultOf(outcome, "stop a tree");
    expect(result.passed).toBe(false);
    const emptied = result.problems.filter((p) =>
      /^the delegating call of a stopped child must keep what the child wrote in its visibleOutput: call \S+ has ""/.test(p),
    );
    expect(emptied).toHaveLength(3);
    expect(result.lines.length).toBeGreaterThan(0);
  }, 120_000);
});
