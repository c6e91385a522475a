/**
 * runCheck: `muse check`, a conformance run for MSP hosts. It drives a host through the
 * scenarios the recipes cover, each on a fresh connection and bounded by a timeout, checks
 * every scenario's live wire against the invariants (`checkTranscript`) and the scenario's own
 * expectations, and prints a pass/fail table with the offending wire lines of each failure.
 */
import { MspError, type MspClient } from "@muse-code/sdk";
import { WireTap, type CheckWire, type WireLine } from "./checkWire.js";
import { formatFailure, formatHeader, formatNotes, formatRow, formatSummary } from "./checkReport.js";
import type { CheckOutcome, CheckResult } from "./checkResult.js";
import { ScenarioContext } from "./scenarioContext.js";
import { featuresOf, unknownFeatures } from "./hostFeatures.js";
import type { Scenario } from "./scenario.js";
import { SCENARIOS } from "./scenarios.js";
import { schemaFindings } from "./schemaCheck.js";
import { transcriptRule } from "./transcriptRule.js";

export type { CheckWire } from "./checkWire.js";
import type { SpawnedProcess } from "./spawnedProcess.js";
export type { SpawnedProcess } from "./spawnedProcess.js";

/** Default bound of each scenario. @unit milliseconds */
export const DEFAULT_SCENARIO_TIMEOUT_MS = 20_000;
/** Bound on closing one scenario's connection. @unit milliseconds */
const CLOSE_TIMEOUT_MS = 10_000;
/** Most offending wire lines shown per failure. @unit lines */
const MAX_LINES_SHOWN = 12;

/**
 * The host under check as one scenario's `open()` returns it: a client on a fresh connection, and
 * how to close it.
 */
export interface CheckedHost {
  client: MspClient;
  /** Close the client's connection (and stop a spawned host). */
  close(): Promise<void>;
  /**
   * The host's process, when the opener spawned it (`spawnForCheck`): the "shutdown mid-tool"
   * scenario signals it and waits for its exit, and "restart mid-tree" kills it and calls `open`
   * again (the same command: a restart). Without it (a WebSocket host the check did not start)
   * those scenarios are not run.
   */
  spawned?: SpawnedProcess;
}

/** Options of {@link runCheck}. */
export interface CheckOptions {
  /**
   * Open a fresh connection to the host; called once per scenario. Pass `wire.wrapChannel` to
   * `spawnHost`'s `wrapChannel`, or `wire.webSocket(WebSocket)` to `connectWebSocket`'s
   * `WebSocket` (see {@link CheckWire}); `spawnForCheck` and `webSocketForCheck` do it for you.
   */
  open(wire: CheckWire): Promise<CheckedHost>;
  /** Where the table goes, one line per call (no trailing newline). */
  out: (line: string) => void;
  /** Colour PASS and FAIL (ANSI). */
  color: boolean;
  /** Bound of each scenario, from opening its connection to its last expectation. @unit milliseconds @defaultValue 20 000 */
  timeoutMs?: number;
  /** Run only the scenarios with these names (default: all, see {@link CHECK_SCENARIOS}). */
  only?: readonly string[];
  /**
   * The model every scenario's sessions are created with, which must play the directives
   * (`muse check --model`): a host bridged to an agent offers the agent's model, whose provider
   * plays them (docs/checkable-hosts.md). @defaultValue "msp-check"
   */
  model?: string;
}

/** The names of the scenarios, in the order they run. */
export const CHECK_SCENARIOS: readonly string[] = SCENARIOS.map((s) => s.name);

/** The `line <n>` references in a problem sentence. */
function linesIn(problem: string): number[] {
  return [...problem.matchAll(/\bline (\d+)/g)].map((m) => Number(m[1]));
}

function describe(error: unknown): string {
  if (error instanceof MspError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** Run one scenario on a fresh connection, bounded by `timeoutMs`. */
async function runScenario(scenario: Scenario, options: CheckOptions, timeoutMs: number): Promise<CheckResult> {
  const wire = new WireTap();
  const started = Date.now();
  const problems: Array<{ text: string; lines: number[] }> = [];
  let timedOut = false;
  let checked: CheckedHost | undefined;
  /** Hosts a scenario opened after its first (a restart), closed with it. */
  const reopened: CheckedHost[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ctx: ScenarioContext | undefined;
  const deadline = new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, timeoutMs, "timeout")));
  let notRun: string | undefined;
  const body = (async () => {
    checked = await options.open(wire);
    if (!wire.attached) {
      throw new Error(
        "open() did not attach the check's wire hooks: pass wire.wrapChannel to spawnHost's wrapChannel, or wire.webSocket(...) to connectWebSocket",
      );
    }
    if (scenario.needsSpawnedHost === true && checked.spawned === undefined) {
      notRun = "the check did not spawn this host (it connected to it), so it cannot shut it down";
      return;
    }
    ctx = new ScenarioContext(checked.client, wire, checked.spawned, options.model);
    ctx.reopen = async () => {
      // The same command again, recorded on the same wire: a restart of a spawned host.
      const again = await options.open(wire);
      reopened.push(again);
      return again;
    };
    await scenario.run(ctx);
    notRun = ctx.notRunReason;
  })();
  try {
    const first = await Promise.race([body.then(() => "done" as const), deadline]);
    if (first === "timeout") {
      timedOut = true;
      // Where it stopped: the last lines of the wire.
      const last = wire.lines.slice(-3).map((l) => l.line);
      problems.push({ text: `timed out after ${timeoutMs} ms ${ctx?.doing ?? "opening the connection"}`, lines: last });
      body.catch(() => {}); // it settles once the connection closes; its error is the timeout's consequence
    }
  } catch (error) {
    const doing = ctx?.doing ?? "opening the connection";
    const commandId = error instanceof MspError ? (error.data as { commandId?: unknown } | undefined)?.commandId : undefined;
    const at = typeof commandId === "string" && ctx !== undefined ? ctx.exchange(commandId).response?.line : undefined;
    problems.push({ text: `stopped while ${doing}: ${describe(error)}`, lines: at === undefined ? [] : [at] });
  } finally {
    clearTimeout(timer);
  }
  // The scenario's own findings, as they stood when it ended (a timed-out scenario's later steps do not count).
  if (ctx !== undefined) problems.unshift(...ctx.problems.splice(0));
  wire.close(new Error("the scenario is over"));
  for (const host of [checked, ...reopened]) {
    if (host === undefined) continue;
    const closing = host.close().catch(() => {});
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref())]);
  }
  if (wire.overflow !== undefined) problems.push({ text: wire.overflow, lines: [] });
  for (const text of wire.stops) problems.push({ text, lines: [] });
  // Invariants on the live wire.
  for (const line of wire.lines) {
    if (line.dir === "server" && line.message === undefined) {
      problems.push({ text: `line ${line.line}: the host sent a message that is not a JSON object`, lines: [line.line] });
    }
  }
  // Every message, both ways, against msp.schema.json (the check's own raw lines aside).
  const schema = schemaFindings(wire.lines, wire.sentRaw);
  for (const text of schema.problems) problems.push({ text, lines: linesIn(text) });
  const own = scenario.checkWire?.bind(scenario);
  const findings = transcriptRule(wire.lines, {
    ...(ctx?.shutdownAfter === undefined ? {} : { shutdownAfter: ctx.shutdownAfter }),
    ...(own === undefined ? {} : { invariants: () => own(wire) }),
  });
  const allNotes = [...schema.notes, ...findings.notes];
  const notes = allNotes.length === 0 ? {} : { notes: allNotes };
  for (const text of findings.problems) problems.push({ text: text.replace("; pass {excerpt: true} for an excerpt", ""), lines: linesIn(text) });
  const wanted = new Set(problems.flatMap((p) => [...p.lines, ...linesIn(p.text)]));
  const strip = ({ line, dir, raw }: WireLine) => ({ line, dir, raw });
  notRun ??= ctx?.notRunReason;
  if (notRun !== undefined && problems.length === 0) {
    return { scenario: scenario.name, passed: false, timedOut: false, durationMs: Date.now() - started, problems: [], lines: [], wire: [], notRun };
  }
  return {
    ...notes,
    scenario: scenario.name,
    passed: problems.length === 0,
    timedOut,
    durationMs: Date.now() - started,
    problems: problems.map((p) => p.text),
    lines: wire.lines
      .filter((l) => wanted.has(l.line))
      .slice(0, MAX_LINES_SHOWN)
      .map(strip),
    wire: wire.lines.map(strip),
  };
}

/** Why the other scenarios cannot run after "host info", if they cannot: no msp-check model, or no working host/info at all. */
function whyNotCheckable(hostInfo: CheckResult): string | undefined {
  const fatal = hostInfo.problems.find((p) => p.includes("not checkable") || p.startsWith("stopped while") || p.startsWith("timed out"));
  return fatal === undefined ? undefined : `"host info" failed: ${fatal}`;
}

/**
 * Check a host: run every scenario (or `options.only`) on its own connection from
 * `options.open`, each bounded by `options.timeoutMs`, print a pass/fail table to `options.out`
 * (each failure with its problems and offending wire lines), and resolve with the verdicts. A
 * scenario that hangs fails by timeout, naming what it waited for, and the run goes on. The host
 * must serve the msp-check model (docs/checkable-hosts.md); if `host/info` lists none, or does not
 * answer, the other scenarios are not run and fail saying so. The approval scenarios are reported
 * "not supported" (and count as passed) when host/info says `capabilities.approvals: false`; a
 * scenario needing a capability the host lacks (`subagents` not listed, `policyHooks` or `steering`
 * said `false`) is "not run", not applicable (./hostFeatures.ts). A
 * scenario that must shut the host down ("shutdown mid-tool") is "not run" when `open` did not
 * spawn the host (no `spawned`): neither passed nor failed, it does not fail the run.
 * Never rejects for a host's fault.
 */
export async function runCheck(options: CheckOptions): Promise<CheckOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS;
  if (!(typeof timeoutMs === "number" && timeoutMs > 0)) throw new RangeError(`runCheck: timeoutMs must be a positive number, got ${String(timeoutMs)}`);
  const only = options.only;
  if (only !== undefined) {
    const unknown = only.filter((name) => !CHECK_SCENARIOS.includes(name));
    if (unknown.length > 0)
      throw new RangeError(`runCheck: no scenario named ${unknown.map((n) => JSON.stringify(n)).join(", ")} (scenarios: ${CHECK_SCENARIOS.join(", ")})`);
  }
  const scenarios = SCENARIOS.filter((s) => only === undefined || only.includes(s.name));
  const { out, color } = options;
  for (const line of formatHeader(scenarios.length, timeoutMs, color)) out(line);
  const results: CheckResult[] = [];
  let notCheckable: string | undefined;
  let features = unknownFeatures();
  for (const scenario of scenarios) {
    let result: CheckResult;
    const needs = scenario.needs ?? [];
    const notSupported = needs.map((need) => features.notSupported.get(need)).find((why) => why !== undefined);
    const lacking = needs.map((need) => features.lacking.get(need)).find((why) => why !== undefined);
    if (notCheckable !== undefined) {
      result = { scenario: scenario.name, passed: false, timedOut: false, durationMs: 0, problems: [`not run: ${notCheckable}`], lines: [], wire: [] };
    } else if (lacking !== undefined) {
      result = { scenario: scenario.name, passed: false, timedOut: false, durationMs: 0, problems: [], lines: [], wire: [], notRun: lacking };
    } else if (notSupported !== undefined) {
      result = { scenario: scenario.name, passed: true, timedOut: false, durationMs: 0, problems: [], lines: [], wire: [], notSupported };
    } else {
      result = await runScenario(scenario, options, timeoutMs);
      if (scenario.name === "host info") {
        notCheckable = whyNotCheckable(result);
        features = featuresOf(result);
      }
    }
    results.push(result);
    out(formatRow(result, color));
  }
  const failed = results.filter((r) => !r.passed && r.notRun === undefined);
  for (const result of failed) for (const line of formatFailure(result, color)) out(line);
  for (const line of formatNotes(results)) out(line);
  for (const line of formatSummary(results, color)) out(line);
  return { passed: failed.length === 0, results };
}
