/**
 * `muse check` (runCheck) against real child processes: it passes on the reference host serving
 * the msp-check model, and fails, naming the right scenario and showing the offending wire
 * lines, on broken hosts (test/fixtures/broken-hosts and test/cli/fixtures: the reference host
 * behind a relay that tells one lie).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOptions, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * The command line (after node) of the reference host serving the msp-check model: its bundle,
 * which starts faster than tsx. With `data`, its data in a fresh temp dir, so "restart mid-tree"
 * can start it again on the same data (without, each host keeps its own temp dir, and a host
 * behind a relay that lingers after its scenario never holds the next one's data).
 */
function referenceHost({ data = false }: { data?: boolean } = {}): string[] {
  const dataArgs: string[] = [];
  if (data) {
    const dir = mkdtempSync(join(tmpdir(), "muse-check-"));
    dataDirs.push(dir);
    dataArgs.push("--data", dir);
  }
  return [
    bundles().host,
    "serve",
    "--stdio",
    ...dataArgs,
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
    ...options,
  });
  return { ...outcome, output: lines.join("\n") };
}

function resultOf(outcome: CheckOutcome, scenario: string) {
  const result = outcome.results.find((r) => r.scenario === scenario);
  if (result === undefined) throw new Error(`no result for ${scenario}`);
  return result;
}

describe("runCheck", () => {
  it("passes on the reference host, every scenario", async () => {
    const outcome = await check(referenceHost({ data: true }));
    expect(outcome.results.filter((r) => !r.passed).map((r) => [r.scenario, r.problems])).toEqual([]);
    expect(outcome.passed).toBe(true);
    expect(outcome.results.map((r) => r.scenario)).toEqual([
      "host info",
      "start and complete",
      "streamed deltas",
      "cancel mid-model",
      "cancel mid-tool",
      "cancel racing completion",
      "stale turnId",
      "keepInbox",
      "cancel queued turn",
      "resume after cursor",
      "duplicate commandId",
      "malformed input",
      "approve",
      "deny",
      "deny and stop",
      "stop while asking",
      "late approve after a cancel",
      "hook stop's cause",
      "usage on a cancelled turn",
      "session grant is exact",
      "grant stays in its session",
      "steer after terminal rejected",
      "a splice on default cancel",
      "no splice with keepInbox",
      "deltas around a steer",
      "stop a tree",
      "a child fails on its own",
      "a child's question withdrawn",
      "restart mid-tree",
      "shutdown mid-tool",
    ]);
    for (const result of outcome.results) expect(result.wire.length).toBeGreaterThan(0);
    expect(outcome.output).toMatch(/^cancel mid-tool +PASS/m);
    expect(outcome.output).toMatch(/muse check: all 30 scenarios passed/);
    // docs/checkable-hosts.md shows this output, times aside.
    const page = readFileSync(join(repoRoot, "docs/checkable-hosts.md"), "utf8");
    const sample = /<!-- muse check sample: pass -->\n```text\n([^`]*)```/.exec(page)?.[1];
    const shape = (text: string) => text.trimEnd().replace(/ *\d+ ms/g, " N ms");
    expect(shape(outcome.output)).toBe(shape(sample ?? ""));
  }, 180_000);

  it("fails 'start and complete' on a host that sends an item after the terminal, showing the line", async () => {
    // The relay of broken-hosts/item-after-terminal.mjs reads MSP 2.0's item/delta too.
    const relay = [join(repoRoot, "test/fixtures/broken-hosts/item-after-terminal.mjs"), "--", process.execPath, ...referenceHost()];
    const outcome = await check(relay, { only: ["host info", "start and complete"] });
    expect(outcome.passed).toBe(false);
    expect(resultOf(outcome, "host info").passed).toBe(true);
    const failed = resultOf(outcome, "start and complete");
    expect(failed.passed).toBe(false);
    expect(failed.problems.join("\n")).toMatch(/item\/updated \(item .+\) for turn .+ after its turn\/completed at line \d+ \(invariant 3\)/);
    const shown = failed.lines.map((l) => JSON.parse(l.raw) as { method?: string });
    expect(shown.map((m) => m.method)).toEqual(expect.arrayContaining(["turn/completed", "item/updated"]));
    expect(outcome.output).toMatch(/^start and complete +FAIL/m);
    expect(outcome.output).toMatch(/^FAIL start and complete$/m);
    expect(outcome.output).toMatch(/host {3}← \{"jsonrpc":"2.0","method":"item\/updated"/);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: start and complete/);
  }, 60_000);

  it("fails 'cancel mid-model' on a host that answers already_terminal before the terminal", async () => {
    const outcome = await check(brokenHost("early-already-terminal"), { only: ["start and complete", "cancel mid-model"] });
    expect(resultOf(outcome, "start and complete").passed).toBe(true);
    const failed = resultOf(outcome, "cancel mid-model");
    expect(failed.passed).toBe(false);
    const problems = failed.problems.join("\n");
    expect(problems).toMatch(/already_terminal rejection for turn .+ before that turn's turn\/completed \(invariant 4\)/);
    expect(problems).toMatch(/turn\/cancel of a streaming turn must be accepted/);
    expect(failed.lines.some((l) => l.raw.includes('"reason":"already_terminal"'))).toBe(true);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: cancel mid-model/);
  }, 60_000);

  it("fails 'cancel mid-model' by timeout on a host that never sends a cancelled turn's terminal, and goes on", async () => {
    const outcome = await check(brokenHost("lost-cancel-terminal"), { only: ["cancel mid-model", "stale turnId"], timeoutMs: 5_000 });
    const failed = resultOf(outcome, "cancel mid-model");
    expect(failed.passed).toBe(false);
    expect(failed.timedOut).toBe(true);
    expect(failed.problems[0]).toMatch(/^timed out after 5000 ms waiting for the turn\/completed of turn \S+$/);
    expect(failed.problems.join("\n")).toMatch(/turn .+, accepted here, never gets a turn\/completed \(invariant 1/);
    expect(failed.durationMs).toBeLessThan(15_000);
    // The run went on after the timeout.
    expect(resultOf(outcome, "stale turnId").passed).toBe(true);
    expect(outcome.output).toMatch(/^cancel mid-model +FAIL +\d+ ms {2}\(timed out\)$/m);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: cancel mid-model/);
  }, 60_000);

  it("fails every approval scenario, naming invariant 6, on a host that runs the tool before the user's answer", async () => {
    const approvals = ["approve", "deny", "stop while asking", "late approve after a cancel"];
    const outcome = await check(brokenHost("approves-for-the-user"), { only: ["host info", ...approvals] });
    expect(resultOf(outcome, "host info").passed).toBe(true);
    for (const scenario of approvals) {
      const failed = resultOf(outcome, scenario);
      expect(failed.passed, scenario).toBe(false);
      expect(failed.problems.join("\n"), scenario).toMatch(
        /line \d+: item\/(updated|completed): tool call \S+, pending approval since line \d+, set approval: "approved" with no approve answered while it was pending \(invariant 6\)/,
      );
      expect(
        failed.lines.some((l) => l.raw.includes('"approval":"approved"')),
        scenario,
      ).toBe(true);
    }
    expect(resultOf(outcome, "approve").problems).toContain('the tool call ran (output or approval: "approved") before the client\'s approve');
    expect(resultOf(outcome, "deny").problems).toContain('the denied tool call ran (output or approval: "approved")');
    expect(resultOf(outcome, "stop while asking").problems).toContain("the tool call ran although the question was withdrawn");
    expect(outcome.output).toMatch(/^approve +FAIL/m);
    expect(outcome.output).toMatch(/4 of 5 scenarios failed: approve, deny, stop while asking, late approve after a cancel/);
  }, 90_000);

  it("fails the session-grant scenario, naming invariant 6, on a host whose grant covers a different call (too wide)", async () => {
    const name = "session grant is exact";
    const outcome = await check(brokenHost("grant-too-wide"), { only: ["host info", name] });
    expect(resultOf(outcome, "host info").passed).toBe(true);
    const failed = resultOf(outcome, name);
    expect(failed.passed).toBe(false);
    const problems = failed.problems.join("\n");
    expect(problems).toMatch(
      /line \d+: item\/updated: tool call \S+ \(shell .+\) ran under grant \S+, whose exact rule covers shell .+: a grant covers only the same call \(invariant 6\)/,
    );
    expect(failed.problems).toContain("a call with different arguments must be asked about: an exact grant does not cover it");
    expect(failed.problems).toContain("the call with different arguments ran, though the check denied it");
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: session grant is exact/);
  }, 60_000);

  it("reports the session-grant scenario not run, with the reason, on a host that offers no decisions (MSP 2.0)", async () => {
    const name = "session grant is exact";
    const outcome = await check(brokenHost("offers-no-decisions"), { only: ["host info", name] });
    const result = resultOf(outcome, name);
    expect(result.notRun).toMatch(
      /^not applicable \(approveForSession absent\): the host's tool\/approve offers no approveForSession \(decisions: "none, an MSP 2.0 question"\)$/,
    );
    expect(result.problems).toEqual([]);
    expect(outcome.passed).toBe(true);
    expect(outcome.output).toMatch(/1 not run: session grant is exact/);
  }, 60_000);

  it("fails 'duplicate commandId' on a host that answers a retried turn/start with the original acceptance but runs the prompt again", async () => {
    const outcome = await check(brokenHost("reruns-retried-turn"), { only: ["duplicate commandId"] });
    const failed = resultOf(outcome, "duplicate commandId");
    expect(failed.passed).toBe(false);
    // The answers are the original acceptance every time: only the count of turn/started shows the lie.
    expect(failed.problems.filter((p) => /must get the same answer/.test(p))).toEqual([]);
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^three turn\/start with one commandId must start exactly one turn \(a duplicate commandId starts no other\), session \S+ shows 3 turn\/started besides the new commandId's: turnIds /,
      ),
    );
    expect(failed.lines.filter((l) => l.raw.includes('"method":"turn/started"')).length).toBe(3);
    expect(outcome.output).toMatch(/1 of 1 scenarios failed: duplicate commandId/);
  }, 60_000);

  it("fails 'cancel mid-model' on a host that completes the cut message \"completed\" without interrupted: true", async () => {
    const outcome = await check(brokenHost("completes-cut-message", "as-completed"), { only: ["cancel mid-model"] });
    const failed = resultOf(outcome, "cancel mid-model");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toEqual([
      expect.stringMatching(
        /^the message cut by the cancel must complete status "cancelled" with interrupted: true, it completed status "completed", interrupted undefined \(cut-off text\)$/,
      ),
    ]);
    expect(failed.lines.some((l) => l.raw.includes('"method":"item/completed"'))).toBe(true);
  }, 60_000);

  it("fails 'cancel mid-model', in the scenario and in checkTranscript, on a host that completes the cut message \"cancelled\" without interrupted: true", async () => {
    const outcome = await check(brokenHost("completes-cut-message", "no-interrupted"), { only: ["cancel mid-model"] });
    const failed = resultOf(outcome, "cancel mid-model");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^the message cut by the cancel must complete status "cancelled" with interrupted: true, it completed status "cancelled", interrupted undefined/,
      ),
    );
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^line \d+: item\/completed of message \S+ is "cancelled" without interrupted: true: a text cut by a Stop must say so \(cut-off text\)$/,
      ),
    );
  }, 60_000);

  it('fails every cancelling scenario, naming the cancel cause, on a host that says cause.kind "disposed" for a user\'s Stop', async () => {
    const cancelling = ["cancel mid-model", "cancel mid-tool", "keepInbox"];
    const outcome = await check(brokenHost("disposed-on-stop"), { only: ["start and complete", ...cancelling] });
    expect(resultOf(outcome, "start and complete").passed).toBe(true);
    for (const scenario of cancelling) {
      const failed = resultOf(outcome, scenario);
      expect(failed.passed, scenario).toBe(false);
      expect(failed.problems, scenario).toContainEqual(
        expect.stringMatching(
          /^line \d+: turn\/completed of turn \S+ is "cancelled" after the client's turn\/cancel at line \d+, with cause \{"kind":"disposed"\}: a turn a user's turn\/cancel stopped says cause\.kind "user" \("disposed" is a host shutting down\) \(cancel cause\)$/,
        ),
      );
      expect(
        failed.lines.some((l) => l.raw.includes('"kind":"disposed"')),
        scenario,
      ).toBe(true);
    }
    expect(outcome.output).toMatch(/3 of 4 scenarios failed: cancel mid-model, cancel mid-tool, keepInbox/);
  }, 90_000);

  it("passes 'shutdown mid-tool' on the reference host over stdio: SIGTERM, a cancelled terminal with cause disposed, exit 0", async () => {
    const outcome = await check(referenceHost(), { only: ["shutdown mid-tool"] });
    const result = resultOf(outcome, "shutdown mid-tool");
    expect([result.passed, result.problems]).toEqual([true, []]);
    expect(result.notRun).toBeUndefined();
    const terminals = result.wire.filter((l) => l.dir === "server" && l.raw.includes('"method":"turn/completed"'));
    expect(terminals).toHaveLength(1);
    expect(JSON.parse(terminals[0]?.raw ?? "{}")).toMatchObject({ params: { terminal: "cancelled", cause: { kind: "disposed" } } });
    expect(outcome.output).toMatch(/^shutdown mid-tool +PASS/m);
    expect(outcome.output).toMatch(/muse check: the 1 scenario passed/);
  }, 60_000);

  it("fails 'shutdown mid-tool', naming the cancel cause, on a host that says cause.kind \"user\" for a turn its shutdown ended", async () => {
    const outcome = await check(brokenHost("user-on-shutdown"), { only: ["start and complete", "shutdown mid-tool"] });
    expect(resultOf(outcome, "start and complete").passed).toBe(true);
    const failed = resultOf(outcome, "shutdown mid-tool");
    expect(failed.passed).toBe(false);
    expect(failed.notRun).toBeUndefined();
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^line \d+: turn\/completed of turn \S+ is "cancelled" after the check shut the host down \(SIGTERM after line \d+\), with cause \{"kind":"user"\}, and the client sent no turn\/cancel: a turn a host shutting down stopped says cause\.kind "disposed" \("user" is a user's turn\/cancel\) \(cancel cause\)$/,
      ),
    );
    expect(failed.lines.some((l) => l.raw.includes('"kind":"user"'))).toBe(true);
    expect(outcome.output).toMatch(/^FAIL shutdown mid-tool$/m);
    expect(outcome.output).toMatch(/1 of 2 scenarios failed: shutdown mid-tool/);
  }, 60_000);

  it("fails 'shutdown mid-tool', naming the missing terminal, on a host that closes on SIGTERM without the running turn's turn/completed", async () => {
    const outcome = await check(brokenHost("user-on-shutdown", "drop-terminal"), { only: ["shutdown mid-tool"] });
    const failed = resultOf(outcome, "shutdown mid-tool");
    expect(failed.passed).toBe(false);
    expect(failed.timedOut).toBe(false);
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^the host closed its stdout without a turn\/completed for turn \S+, whose tool was running when the host got SIGTERM \(after line \d+\): missing its terminal "cancelled" with cause\.kind "disposed"/,
      ),
    );
    expect(failed.problems.join("\n")).toMatch(/never gets a turn\/completed \(invariant 1/);
    expect(outcome.output).toMatch(/1 of 1 scenarios failed: shutdown mid-tool/);
  }, 60_000);

  it("fails the approval scenarios, naming invariant 6, on a host that asks one approval twice while the first question is open", async () => {
    // Not "stop while asking": its client answers at once, and may answer the first question before the second is read.
    const asking = ["approve", "deny"];
    const outcome = await check(brokenHost("asks-twice"), { only: asking });
    for (const scenario of asking) {
      const failed = resultOf(outcome, scenario);
      expect(failed.passed, scenario).toBe(false);
      expect(failed.problems, scenario).toContainEqual(
        expect.stringMatching(
          /^line \d+: tool\/approve for item \S+ while the tool\/approve at line \d+ about it is still open: at most one open question per item \(invariant 6\)$/,
        ),
      );
      expect(failed.lines.filter((l) => l.raw.includes('"method":"tool/approve"')).length, scenario).toBe(2);
    }
    expect(outcome.output).toMatch(/2 of 2 scenarios failed: approve, deny/);
  }, 90_000);

  it("fails 'start and complete', naming the foreign session, on a host that sends the notifications of a session the connection never created or resumed", async () => {
    const outcome = await check(brokenHost("foreign-session"), { only: ["start and complete"] });
    const failed = resultOf(outcome, "start and complete");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toContainEqual(
      expect.stringMatching(/^line \d+: \S+ for session \S+, which this connection neither created nor resumed \(foreign session\)$/),
    );
    expect(outcome.output).toMatch(/1 of 1 scenarios failed: start and complete/);
  }, 60_000);

  it("fails 'start and complete', naming invariant A, on a host whose message items come as their item/completed alone (no item/started)", async () => {
    const outcome = await check(brokenHost("unstarted-items"), { only: ["start and complete"] });
    const failed = resultOf(outcome, "start and complete");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toContainEqual(expect.stringMatching(/^line \d+: item\/completed for item \S+ before any item\/started of it \(invariant A\)$/));
    expect(outcome.output).toMatch(/1 of 1 scenarios failed: start and complete/);
  }, 60_000);

  it("fails 'cancel queued turn' on a host whose cancel of a queued turn stops the running one", async () => {
    const outcome = await check(brokenHost("cancels-running"), { only: ["cancel queued turn"] });
    const failed = resultOf(outcome, "cancel queued turn");
    expect(failed.passed).toBe(false);
    expect(failed.problems).toContainEqual(
      expect.stringMatching(
        /^a cancel of the queued turn \S+ must leave the running turn alone: it must go on to "completed", it ended "cancelled" \(cancel queued turn\)$/,
      ),
    );
    expect(outcome.output).toMatch(/1 of 1 scenarios failed: cancel queued turn/);
  }, 60_000);

  it("reports the approval scenarios not supported, and passes, on a host whose host/info says capabilities.approvals: false", async () => {
    const outcome = await check(brokenHost("no-approvals"), {
      only: ["host info", "start and complete", "approve", "deny", "stop while asking", "late approve after a cancel"],
    });
    expect(outcome.passed).toBe(true);
    for (const scenario of ["approve", "deny", "stop while asking", "late approve after a cancel"]) {
      const result = resultOf(outcome, scenario);
      expect(result.notSupported).toBe("host/info says capabilities.approvals: false (the host never asks before a tool runs)");
      expect(result.wire).toEqual([]);
    }
    expect(outcome.output).toMatch(/^stop while asking +N\/A +0 ms {2}\(not supported: host\/info says capabilities\.approvals: false/m);
    expect(outcome.output).toMatch(
      /muse check: all 2 scenarios run passed; 4 not supported by this host: approve, deny, stop while asking, late approve after a cancel$/m,
    );
  }, 60_000);

  it("fails the approval scenarios clearly on a host that ignores approval: true (runs the tool without asking)", async () => {
    const outcome = await check(brokenHost("ignores-approval"), { only: ["approve", "stop while asking"] });
    expect(outcome.passed).toBe(false);
    for (const scenario of ["approve", "stop while asking"]) {
      const failed = resultOf(outcome, scenario);
      expect(failed.passed).toBe(false);
      expect(failed.timedOut).toBe(false);
      expect(failed.problems[0]).toMatch(
        /^turn \S+ ended without a tool\/approve: its tool call's directive says approval: true, so the host must ask before it runs \(a host without approvals says capabilities\.approvals: false in host\/info; see docs\/checkable-hosts\.md\)$/,
      );
      expect(failed.lines.some((l) => l.raw.includes('"method":"turn/completed"'))).toBe(true);
    }
  }, 60_000);

  it("fails 'a splice on default cancel', naming invariant S, on a host that drops inbox/cancelled; the other steering scenarios still pass", async () => {
    const outcome = await check(brokenHost("drops-splice"), {
      only: ["steer after terminal rejected", "a splice on default cancel", "no splice with keepInbox"],
    });
    expect(outcome.passed).toBe(false);
    const failed = resultOf(outcome, "a splice on default cancel");
    expect(failed.passed).toBe(false);
    expect(failed.problems[0]).toBe("a default turn/cancel of a steered turn must send exactly one inbox/cancelled, the host sent 0");
    expect(
      failed.problems.some((p) =>
        /no inbox\/cancelled of turn \S+ before it lists it: discarded steering is listed in its turn's splice \(invariant S\)$/.test(p),
      ),
    ).toBe(true);
    expect(resultOf(outcome, "steer after terminal rejected").passed).toBe(true);
    expect(resultOf(outcome, "no splice with keepInbox").passed).toBe(true);
  }, 60_000);

  it("reports the steering scenarios not run, never passed, on a host that does not know turn/steer (method not found)", async () => {
    const names = ["steer after terminal rejected", "a splice on default cancel", "no splice with keepInbox", "deltas around a steer"];
    const outcome = await check(brokenHost("no-steering"), { only: ["start and complete", ...names] });
    for (const scenario of names) {
      const result = resultOf(outcome, scenario);
      expect(result.passed).toBe(false);
      expect(result.notRun).toBe("the host does not know turn/steer (method not found): it does not implement MSP 2.1 steering");
    }
    expect(resultOf(outcome, "start and complete").passed).toBe(true);
    expect(outcome.output).toMatch(/; 4 not run: steer after terminal rejected, a splice on default cancel, no splice with keepInbox, deltas around a steer$/m);
  }, 60_000);

  it("runs nothing more on a host without the msp-check model, saying it is not checkable", async () => {
    const outcome = await check([bundles().host, "serve", "--stdio", "--script", join(repoRoot, "packages/host/models/hello.json")]);
    expect(outcome.passed).toBe(false);
    const info = resultOf(outcome, "host info");
    expect(info.problems).toEqual([
      expect.stringMatching(/^host\/info lists no model "msp-check" \(it lists \["default"\]\): the host is not checkable; see docs\/checkable-hosts\.md$/),
    ]);
    for (const result of outcome.results.slice(1)) {
      expect(result.passed).toBe(false);
      expect(result.problems).toEqual([expect.stringMatching(/^not run: "host info" failed: host\/info lists no model "msp-check"/)]);
      expect(result.wire).toEqual([]);
    }
    expect(outcome.output).toMatch(/30 of 30 scenarios failed/);
  }, 60_000);

  it("fails, without hanging, when the host cannot be started", async () => {
    const lines: string[] = [];
    const outcome = await runCheck({
      open: spawnForCheck({ command: join(repoRoot, "no-such-host"), stderr: "ignore" }),
      out: (line) => lines.push(line),
      color: false,
      only: ["host info", "start and complete"],
    });
    expect(outcome.passed).toBe(false);
    expect(resultOf(outcome, "host info").problems[0]).toMatch(/^stopped while waiting for the answer to host\/info: .*could not start .*no-such-host/);
    expect(resultOf(outcome, "start and complete").problems[0]).toMatch(/^not run: "host info" failed: stopped while/);
  }, 30_000);
});
