/**
 * `muse check`'s "streamed deltas" scenario against real child processes: it passes on the
 * reference host, and fails on the reference host behind a lying relay (fixtures/deltaRelay.mjs)
 * that drops one item/delta of the long message (a gap: invariant A on the wire, the client's
 * refusals, and a folded text that is not the directed one) or relays one twice (a repeat: the
 * client folds on unharmed, and invariant A alone says what is wrong).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const ONLY = ["host info", "streamed deltas"];

function referenceHost(): string[] {
  return [
    bundles().host,
    "serve",
    "--stdio",
    "--script",
    join(repoRoot, "packages/host/models/hello.json"),
    "--model",
    `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
  ];
}

async function check(args: string[]): Promise<CheckOutcome & { output: string }> {
  const lines: string[] = [];
  const outcome = await runCheck({
    open: spawnForCheck({ command: process.execPath, args, cwd: repoRoot, stderr: "ignore", killGraceMs: 500 }),
    out: (line) => lines.push(line),
    color: false,
    timeoutMs: 15_000,
    only: ONLY,
  });
  return { ...outcome, output: lines.join("\n") };
}

const relayed = (mode: "drop" | "duplicate" | "stale") => [
  join(repoRoot, "test/cli/fixtures/deltaRelay.mjs"),
  mode,
  "--",
  process.execPath,
  ...referenceHost(),
];

function streamed(outcome: CheckOutcome) {
  const result = outcome.results.find((r) => r.scenario === "streamed deltas");
  if (result === undefined) throw new Error("no result for streamed deltas");
  return result;
}

describe('muse check: "streamed deltas"', () => {
  it("passes on the reference host: a long message and a tool's output fold into the directed text and the completed output", async () => {
    const outcome = await check(referenceHost());
    expect(outcome.results.map((r) => [r.scenario, r.problems])).toEqual(ONLY.map((name) => [name, []]));
    const wire = streamed(outcome).wire.map((l) => JSON.parse(l.raw) as { method?: string; params?: { field?: string } });
    expect(wire.filter((m) => m.method === "item/delta" && m.params?.field === "text").length).toBeGreaterThan(250);
    expect(wire.some((m) => m.method === "item/delta" && m.params?.field === "visibleOutput")).toBe(true);
  }, 60_000);

  it("fails on a relay that drops one item/delta: the gap on the wire, the client's refusals, the folded text", async () => {
    const outcome = await check(relayed("drop"));
    const result = streamed(outcome);
    expect(result.passed).toBe(false);
    const gap = result.problems
      .map((p) => /^line \d+: item\/delta of item \S+ has revision (\d+) after (\d+): a gap; revision \2 was at line \d+ \(invariant A\)$/.exec(p))
      .find(Boolean);
    expect(Number(gap?.[1])).toBe(Number(gap?.[2]) + 2);
    expect(result.problems).toContainEqual(
      expect.stringMatching(
        /^the client could not fold \d+ of the host's item notifications \(it applies none it cannot fold\); the first: item\/delta of item \S+ has revision \d+ after \d+: a gap$/,
      ),
    );
    expect(result.problems).toContainEqual(
      expect.stringMatching(
        /^the message the client folded from its item\/delta appends, before its item\/completed, is not the directed text: from character \d+ it has ".*" where the directive has ".+"$/,
      ),
    );
    expect(result.lines.some((l) => l.raw.includes('"method":"item/delta"'))).toBe(true);
    expect(outcome.output).toMatch(/^streamed deltas +FAIL/m);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: streamed deltas/);
  }, 60_000);

  it("fails on a relay that relays one item/delta twice: a repeat, which invariant A alone reports", async () => {
    const outcome = await check(relayed("duplicate"));
    const result = streamed(outcome);
    expect(result.passed).toBe(false);
    expect(result.problems).toEqual([
      expect.stringMatching(/^line (\d+): item\/delta of item \S+ has revision (\d+), not above revision \2 at line \d+: a repeat \(invariant A\)$/),
    ]);
    const [line] = /^line (\d+)/.exec(result.problems[0] ?? "")?.slice(1) ?? [];
    const repeated = result.wire[Number(line) - 1];
    const original = result.wire[Number(line) - 2];
    expect(JSON.parse(repeated?.raw ?? "{}").params.append).toBe(JSON.parse(original?.raw ?? "{}").params.append);
  }, 60_000);

  it("fails on a relay that re-sends an older revision after a newer one: a stale revision, which invariant A names a step back", async () => {
    const outcome = await check(relayed("stale"));
    const result = streamed(outcome);
    expect(result.passed).toBe(false);
    const stale = result.problems
      .map((p) => /^line (\d+): item\/delta of item \S+ has revision (\d+), not above revision (\d+) at line \d+: a step back \(invariant A\)$/.exec(p))
      .find(Boolean);
    expect(Number(stale?.[2])).toBe(Number(stale?.[3]) - 1);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: streamed deltas/);
  }, 60_000);
});
