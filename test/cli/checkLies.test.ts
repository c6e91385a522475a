/**
 * `muse check` against lying relays of the 2.1 wire (test/fixtures/broken-hosts: the reference
 * host behind a relay that tells one lie a host author who read the spec once might tell): each
 * lie fails the scenario that gives the host the chance to tell it, naming the rule. One relay per
 * area: streamed deltas and completions (A, B), steering and the splice (S), deny-and-stop (6),
 * policy stops (P), usage, the subagent tree (7). And a host without the feature has its scenario
 * "not applicable", never passed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** `--data DIR` in a fresh temp dir, so a restarted host finds its sessions ("restart mid-tree"). */
function dataArgs(): string[] {
  const dir = mkdtempSync(join(tmpdir(), "muse-check-lies-"));
  dataDirs.push(dir);
  return ["--data", dir];
}

function brokenHost(name: string, hostArgs: string[] = []): string[] {
  return [
    join(repoRoot, "test/fixtures/broken-hosts", `${name}.mjs`),
    "--",
    process.execPath,
    bundles().host,
    "serve",
    "--stdio",
    ...hostArgs,
    "--script",
    join(repoRoot, "packages/host/models/hello.json"),
    "--model",
    `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
  ];
}

async function check(name: string, only: string[], hostArgs: string[] = []): Promise<CheckOutcome> {
  return runCheck({
    open: spawnForCheck({ command: process.execPath, args: brokenHost(name, hostArgs), cwd: repoRoot, stderr: "ignore", killGraceMs: 500 }),
    out: () => {},
    color: false,
    timeoutMs: 15_000,
    only,
  });
}

function problemsOf(outcome: CheckOutcome, scenario: string): string[] {
  const result = outcome.results.find((r) => r.scenario === scenario);
  if (result === undefined) throw new Error(`no result for ${scenario}`);
  expect(result.passed).toBe(false);
  expect(result.notRun).toBeUndefined();
  return result.problems;
}

describe("muse check catches the lies of the 2.1 wire", () => {
  it("streamed deltas: a completion that says only the last chunk breaks B", async () => {
    const outcome = await check("completes-last-chunk", ["start and complete", "streamed deltas"]);
    for (const scenario of ["start and complete", "streamed deltas"]) {
      expect(problemsOf(outcome, scenario)).toContainEqual(
        expect.stringMatching(/^line \d+: item\/completed of item \S+ does not extend its streamed text: from character 1 it has .* \(invariant B\)$/),
      );
    }
  }, 60_000);

  it("streamed deltas: revisions numbered per turn, not per item, break A once two items of a turn are open", async () => {
    const outcome = await check("turn-wide-revisions", ["start and complete", "deltas around a steer"]);
    // One item at a time, a turn-wide counter looks right: only the scenario with two open items can tell.
    expect(outcome.results.find((r) => r.scenario === "start and complete")?.passed).toBe(true);
    expect(problemsOf(outcome, "deltas around a steer")).toContainEqual(
      expect.stringMatching(/^line \d+: item\/delta of item \S+ has revision \d+ after \d+: a gap; revision \d+ was at line \d+ \(invariant A\)$/),
    );
  }, 60_000);

  it("steering: a splice sent after its turn's terminal breaks S", async () => {
    const outcome = await check("late-splice", ["a splice on default cancel"]);
    const problems = problemsOf(outcome, "a splice on default cancel");
    // The relay holds the splice past the terminal: the wire shows it after the terminal, or (when
    // the scenario's connection closes first) not at all. Either way invariant S catches the lie.
    const late = /^line \d+: inbox\/cancelled for turn \S+ after its turn\/completed at line \d+: the splice comes before the terminal \(invariant S\)$/;
    const never = /^a default turn\/cancel of a steered turn must send exactly one inbox\/cancelled, the host sent 0$/;
    expect(
      problems.some((p) => late.test(p) || never.test(p)),
      problems.join("\n"),
    ).toBe(true);
    // Cursors still rise: the order is the only lie.
    expect(problems.filter((p) => p.includes("invariant 5"))).toEqual([]);
  }, 60_000);

  it("steering: a carried-over steer replayed without its steerId breaks S", async () => {
    const outcome = await check("carries-steer-unmarked", ["no splice with keepInbox"]);
    expect(problemsOf(outcome, "no splice with keepInbox")).toContainEqual(
      expect.stringMatching(/^line \d+: steer \S+, carried over at line \d+, does not start in turn \S+, the session's next turn \(invariant S\)$/),
    );
  }, 60_000);

  it("deny-and-stop: a host that reads denyAndStop as deny breaks 6 (the turn goes on)", async () => {
    const outcome = await check("deny-and-stop-as-deny", ["host info", "deny and stop"]);
    const problems = problemsOf(outcome, "deny and stop");
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^line \d+: turn\/completed of turn \S+ is completed with cause.kind missing, but the client answered denyAndStop at line \d+: the turn ends cancelled, cause "user" \(invariant 6\)$/,
      ),
    );
    expect(problems).toContainEqual("the step after the call answered denyAndStop must not run: the turn is stopped");
  }, 60_000);

  it("deny-and-stop: a host whose question offers no denyAndStop has the scenario not applicable, never passed", async () => {
    const outcome = await check("offers-no-decisions", ["host info", "deny and stop"]);
    const result = outcome.results.find((r) => r.scenario === "deny and stop");
    expect(result?.passed).toBe(false);
    expect(result?.notRun).toBe('not applicable (denyAndStop absent): the host\'s tool/approve offers no denyAndStop (decisions: "none, an MSP 2.0 question")');
    expect(result?.problems).toEqual([]);
  }, 60_000);

  it("policy stops: a hook stop that ends its turn failed breaks P", async () => {
    const outcome = await check("hook-stop-failed", ["hook stop's cause"]);
    expect(problemsOf(outcome, "hook stop's cause")).toContainEqual(
      expect.stringMatching(/^line \d+: turn\/completed of turn \S+ is failed with cause.kind "hook": a policy stop ends a turn cancelled \(invariant P\)$/),
    );
  }, 60_000);

  it("usage: a cancelled turn billed for the steps it never ran", async () => {
    const outcome = await check("usage-counts-unrun", ["usage on a cancelled turn"]);
    expect(problemsOf(outcome, "usage on a cancelled turn")).toContainEqual(
      expect.stringMatching(/^the cancelled turn's usage must count the step that ran.*it is \{"inputTokens":240,"outputTokens":16,"reasoningTokens":6\}$/),
    );
  }, 60_000);

  it("the subagent tree: child turns that never end break 7", async () => {
    const outcome = await check("child-never-ends", ["host info", "stop a tree"]);
    expect(problemsOf(outcome, "stop a tree")).toContainEqual(
      expect.stringMatching(/^line \d+: turn\/completed of turn \S+ before the turn\/completed of its child turn \S+, linked at line \d+ \(invariant 7\)$/),
    );
  }, 60_000);

  it("resume: an answer that lists an item in progress behind what was streamed breaks C", async () => {
    const outcome = await check("resume-items-behind", ["resume after cursor"]);
    expect(problemsOf(outcome, "resume after cursor")).toContainEqual(
      expect.stringMatching(/^line \d+: session\/resume lists item \S+ at revision \d+ unlike the fold of its notifications up to line \d+ \(invariant C\)$/),
    );
  }, 60_000);

  it("the subagent tree: a resume that ignores childCursors leaves the tree unclosed", async () => {
    const outcome = await check("ignores-child-cursors", ["host info", "restart mid-tree"], dataArgs());
    const problems = problemsOf(outcome, "restart mid-tree");
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^every turn of the tree the crash cut off must be closed "failed" \(reason "host restarted"\) by the restarted host, turn \S+ got no turn\/completed after the restart$/,
      ),
    );
    expect(problems).toContainEqual(expect.stringMatching(/before the turn\/completed of its child turn \S+, linked at line \d+ \(part 1\) \(invariant 7\)$/));
  }, 60_000);

  it("scoped grants: a grant kept per host, not per session, answers for another session's call (6)", async () => {
    const outcome = await check("grant-crosses-sessions", ["host info", "grant stays in its session"]);
    const problems = problemsOf(outcome, "grant stays in its session");
    expect(problems).toContainEqual(expect.stringMatching(/^the same call in another session must be asked about: the grant "\S+" belongs to session \S+$/));
    expect(problems).toContainEqual(expect.stringMatching(/^line \d+: item\/updated: item \S+ names grant \S+, which no earlier item of session \S+/));
  }, 60_000);

  it("scoped grants: a host whose question offers no approveForSession has the scenario not applicable, never passed", async () => {
    const outcome = await check("offers-no-decisions", ["host info", "grant stays in its session"]);
    const result = outcome.results.find((r) => r.scenario === "grant stays in its session");
    expect(result?.passed).toBe(false);
    expect(result?.notRun).toBe(
      'not applicable (approveForSession absent): the host\'s tool/approve offers no approveForSession (decisions: "none, an MSP 2.0 question")',
    );
  }, 60_000);
});
