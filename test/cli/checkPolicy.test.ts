/**
 * `muse check`'s MSP 2.1 scenarios of policy stops and usage ("hook stop's cause", "usage on a
 * cancelled turn") against real child processes: they pass on the reference host, and fail,
 * naming the lie and showing its wire line, on relays in front of it (test/fixtures/broken-hosts)
 * that say `user` for a hook stop or send a negative, fractional or no usage; a host that refuses
 * the directive keys has no such feature, and the scenarios are not run, never passed.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { runCheck, spawnForCheck, webSocketForCheck, type CheckOptions, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import type { WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";
import { serveStdioGateway } from "./stdioGateway.js";

const bundles = useMuseBundles();
const POLICY = ["hook stop's cause", "usage on a cancelled turn"];

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

function brokenHost(name: string, ...modeArgs: string[]): string[] {
  return [join(repoRoot, "test/fixtures/broken-hosts", `${name}.mjs`), ...modeArgs, "--", process.execPath, ...referenceHost()];
}

async function check(args: string[], options: Partial<CheckOptions> = {}): Promise<CheckOutcome & { output: string }> {
  const lines: string[] = [];
  const outcome = await runCheck({
    open: spawnForCheck({ command: process.execPath, args, cwd: repoRoot, stderr: "ignore", killGraceMs: 500 }),
    out: (line) => lines.push(line),
    color: false,
    timeoutMs: 15_000,
    only: POLICY,
    ...options,
  });
  return { ...outcome, output: lines.join("\n") };
}

function resultOf(outcome: CheckOutcome, scenario: string) {
  const result = outcome.results.find((r) => r.scenario === scenario);
  if (result === undefined) throw new Error(`no result for ${scenario}`);
  return result;
}

describe("muse check: policy stops and usage (MSP 2.1)", () => {
  it("passes both on the reference host over stdio: a hook stop says cause hook with its reason, a cancelled turn carries its usage", async () => {
    const outcome = await check(referenceHost());
    expect(outcome.results.map((r) => [r.scenario, r.passed, r.problems, r.notRun])).toEqual(POLICY.map((name) => [name, true, [], undefined]));
    const terminal = (scenario: string) =>
      JSON.parse(resultOf(outcome, scenario).wire.find((l) => l.dir === "server" && l.raw.includes('"method":"turn/completed"'))?.raw ?? "{}") as {
        params?: Record<string, unknown>;
      };
    expect(terminal("hook stop's cause").params).toMatchObject({ terminal: "cancelled", cause: { kind: "hook", reason: "muse check: a policy hook" } });
    expect(terminal("usage on a cancelled turn").params).toMatchObject({
      terminal: "cancelled",
      cause: { kind: "user" },
      usage: { inputTokens: 120, outputTokens: 8, reasoningTokens: 3 },
    });
    expect(outcome.output).toMatch(/^hook stop's cause +PASS/m);
    expect(outcome.output).toMatch(/^usage on a cancelled turn +PASS/m);
  }, 60_000);

  it("passes both on the reference host over --ws (a WebSocket gateway in front of it)", async () => {
    const gateway = await serveStdioGateway(referenceHost());
    try {
      const outcome = await check([], { open: webSocketForCheck(gateway.url, { WebSocket: WebSocket as unknown as WebSocketConstructor }) });
      expect(outcome.results.map((r) => [r.scenario, r.passed, r.problems, r.notRun])).toEqual(POLICY.map((name) => [name, true, [], undefined]));
      expect(outcome.output).toMatch(/muse check: all 2 scenarios passed/);
    } finally {
      await gateway.close();
    }
  }, 60_000);

  it('fails "hook stop\'s cause" on a host that says cause.kind "user" for a hook stop, showing the line', async () => {
    const outcome = await check(brokenHost("user-on-hook-stop"));
    const failed = resultOf(outcome, "hook stop's cause");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toContainEqual(
      'a turn a policy hook stopped must say cause.kind "hook", it says cause {"kind":"user"}: "user" is a user\'s turn/cancel, and the client sent none (hook stop\'s cause)',
    );
    expect(failed.lines.some((l) => l.raw.includes('"method":"turn/completed"') && l.raw.includes('"kind":"user"'))).toBe(true);
    expect(resultOf(outcome, "usage on a cancelled turn").passed).toBe(true); // a user's Stop stays "user"
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: hook stop's cause/);
  }, 60_000);

  it.each([
    ["negative", /inputTokens is -1/, /usage must be \{inputTokens, outputTokens, reasoningTokens\}, each a non-negative integer \(invariant U\)/],
    ["fractional", /outputTokens is 2\.5/, /usage must be \{inputTokens, outputTokens, reasoningTokens\}, each a non-negative integer \(invariant U\)/],
    ["dropped", /carries no usage, though its directive declared usage for the step that ran/, undefined],
  ])(
    'fails "usage on a cancelled turn" on a host that sends %s usage',
    async (mode, problem, invariant) => {
      const outcome = await check(brokenHost("bad-usage", mode), { only: ["usage on a cancelled turn"] });
      const failed = resultOf(outcome, "usage on a cancelled turn");
      expect(failed.passed).toBe(false);
      expect(failed.problems).toContainEqual(expect.stringMatching(problem));
      if (invariant !== undefined) expect(failed.problems).toContainEqual(expect.stringMatching(invariant));
      expect(failed.lines.some((l) => l.raw.includes('"method":"turn/completed"'))).toBe(true);
    },
    60_000,
  );
});

describe("muse check on a host without policy stops and usage", () => {
  it("reports both scenarios not run, with the host's reason, when it refuses the directive keys (never passed)", async () => {
    const outcome = await check(brokenHost("no-policy-directives", "refuses"));
    for (const [scenario, key] of [
      ["hook stop's cause", "stopByHook"],
      ["usage on a cancelled turn", "usage"],
    ] as const) {
      const result = resultOf(outcome, scenario);
      expect(result.passed, scenario).toBe(false);
      expect(result.problems, scenario).toEqual([]);
      expect(result.notRun, scenario).toMatch(
        new RegExp(
          `^the host refused the directive key ${key} \\(no ${key === "usage" ? "usage" : "policy stops"}\\): (failed: )?invalid msp-check directive at \\$\\.steps\\[\\d\\]\\.unknown-${key}: unknown key`,
        ),
      );
    }
    expect(outcome.passed).toBe(true); // not run is not failed
    expect(outcome.output).toMatch(/^hook stop's cause +N\/A/m);
    expect(outcome.output).toMatch(/2 not run: hook stop's cause, usage on a cancelled turn/);
  }, 60_000);

  it("fails both, never 'not run', when the host has the keys and refuses their values", async () => {
    const outcome = await check(brokenHost("no-policy-directives", "misreads"));
    for (const scenario of ["hook stop's cause", "usage on a cancelled turn"]) {
      const result = resultOf(outcome, scenario);
      expect(result.notRun, scenario).toBeUndefined();
      expect(result.problems.length, scenario).toBeGreaterThan(0);
    }
    expect(outcome.passed).toBe(false);
  }, 60_000);

  it("fails both when it ignores the keys: a turn neither stopped nor counted is not a pass", async () => {
    const outcome = await check(brokenHost("no-policy-directives", "ignores"));
    expect(resultOf(outcome, "hook stop's cause").problems).toContainEqual(
      'a turn a policy hook stopped must end "cancelled", it ended "completed" (a host without policy stops must refuse the directive key stopByHook: fail the turn naming it)',
    );
    expect(resultOf(outcome, "usage on a cancelled turn").problems).toContainEqual(expect.stringMatching(/carries no usage/));
    expect(outcome.passed).toBe(false);
  }, 60_000);
});
