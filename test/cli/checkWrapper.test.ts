/**
 * `muse check` through a wrapper process (test/fixtures/wrappers/wrapper.mjs: a real child
 * process that runs the reference host on its own stdio, as `npx` does). A wrapper that passes
 * SIGTERM on lets the honest host pass every scenario, "shutdown mid-tool" included; one that dies
 * of the signal and leaves the host on the check's stdio fails "shutdown mid-tool" saying so,
 * without waiting for the scenario's bound.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOptions, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();

function wrapped(...wrapperArgs: string[]): string[] {
  return [
    join(repoRoot, "test/fixtures/wrappers/wrapper.mjs"),
    ...wrapperArgs,
    "--",
    process.execPath,
    bundles().host,
    "serve",
    "--stdio",
    "--script",
    join(repoRoot, "packages/host/models/hello.json"),
    "--model",
    `msp-check=${join(repoRoot, "packages/host/models/check.json")}`,
  ];
}

async function check(args: string[], options: Partial<CheckOptions> = {}): Promise<CheckOutcome> {
  return runCheck({
    open: spawnForCheck({ command: process.execPath, args, cwd: repoRoot, stderr: "ignore", killGraceMs: 500 }),
    out: () => {},
    color: false,
    timeoutMs: 15_000,
    ...options,
  });
}

describe("muse check through a wrapper process", () => {
  it("passes the honest reference host behind a wrapper that forwards SIGTERM, every scenario", async () => {
    const outcome = await check(wrapped());
    expect(outcome.results.filter((r) => !r.passed && r.notRun === undefined).map((r) => [r.scenario, r.problems])).toEqual([]);
    expect(outcome.passed).toBe(true);
    const shutdown = outcome.results.find((r) => r.scenario === "shutdown mid-tool");
    expect(shutdown).toMatchObject({ passed: true });
    expect(shutdown?.notRun).toBeUndefined();
  }, 240_000);

  it("fails shutdown mid-tool behind a wrapper that drops SIGTERM, naming the wrapper, before the scenario's bound", async () => {
    const outcome = await check(wrapped("--drops-sigterm"), { only: ["shutdown mid-tool"], timeoutMs: 12_000 });
    const [result] = outcome.results;
    expect(result?.passed).toBe(false);
    expect(result?.timedOut).toBe(false);
    expect(result?.problems).toContainEqual(
      expect.stringMatching(
        /^the process the check spawned was killed by SIGTERM after SIGTERM \(sent after line \d+\), leaving processes of its group running: the command is a wrapper \(npx, a shell script, a supervisor\) that did not pass SIGTERM on to the host it runs/,
      ),
    );
  }, 60_000);
});
