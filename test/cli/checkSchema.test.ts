/**
 * `muse check` validates every message of every scenario, both ways, against msp.schema.json: the
 * honest reference host passes with no schema problem at all; a relay that sends fields of the
 * wrong JSON type (test/fixtures/broken-hosts/mistyped-fields.mjs), a lie no semantic rule
 * reads, fails naming the line, the method, the JSON path and the schema rule. And the rule itself
 * on hand-made lines, both directions: a request matched to its answer by id, a refusal's data,
 * the check's own raw lines left out.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCheck, spawnForCheck, type CheckOutcome } from "../../packages/host/src/cli/check/index.js";
import type { WireLine } from "../../packages/host/src/cli/check/checkWire.js";
import { schemaFindings, schemaProblems } from "../../packages/host/src/cli/check/schemaCheck.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();

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

async function check(args: string[], only?: string[], out: (line: string) => void = () => {}): Promise<CheckOutcome> {
  return runCheck({
    open: spawnForCheck({ command: process.execPath, args, cwd: repoRoot, stderr: "ignore", killGraceMs: 500 }),
    out,
    color: false,
    timeoutMs: 15_000,
    ...(only === undefined ? {} : { only }),
  });
}

const SCHEMA_PROBLEM = /^line \d+: .* \(schema rule "[^"]+" at msp\.schema\.json#\/\S+\)$/;

/** Hand-made wire lines, numbered from 1. */
function wire(...entries: Array<["client" | "server", Record<string, unknown>]>): WireLine[] {
  return entries.map(([dir, message], i) => ({ line: i + 1, dir, raw: JSON.stringify(message), message }));
}

describe("muse check against msp.schema.json", () => {
  it("passes the honest reference host with no schema problem in any scenario", async () => {
    const outcome = await check(referenceHost());
    const ran = outcome.results.filter((r) => r.notRun === undefined && r.notSupported === undefined);
    expect(ran.length).toBeGreaterThan(20);
    expect(outcome.results.flatMap((r) => r.problems.filter((p) => p.includes("schema rule")))).toEqual([]);
    // Nor a field the schema does not define (those are notes).
    expect(outcome.results.flatMap((r) => (r.notes ?? []).filter((n) => n.includes("schema rule")))).toEqual([]);
    expect(outcome.passed).toBe(true);
  }, 240_000);

  it("fails a host whose turn/completed durationMs is a string, naming path and rule, and only the schema notices", async () => {
    const printed: string[] = [];
    const outcome = await check(
      [join(repoRoot, "test/fixtures/broken-hosts/mistyped-fields.mjs"), "duration-string", "--", process.execPath, ...referenceHost()],
      ["start and complete"],
      (line) => printed.push(line),
    );
    const [result] = outcome.results;
    expect(result?.passed).toBe(false);
    expect(result?.problems.length).toBeGreaterThan(0);
    // No semantic rule reads the type of durationMs: every problem is the schema's.
    for (const problem of result?.problems ?? []) expect(problem).toMatch(SCHEMA_PROBLEM);
    expect(result?.problems).toContainEqual(
      expect.stringMatching(
        /^line \d+: turn\/completed from the host: \$\.params\.durationMs must be integer \(schema rule "type" at msp\.schema\.json#\/\$defs\/TurnCompletedParams\/properties\/durationMs\/type\)$/,
      ),
    );
    // The failure shows the offending wire line.
    const line = Number(/^line (\d+):/.exec(result?.problems[0] ?? "")?.[1]);
    expect(result?.lines.find((l) => l.line === line)?.raw).toMatch(/"durationMs":"\d+"/);
    // And muse check prints both: the problem under the failed scenario, then that line of the wire (cut to its first 240 characters).
    expect(printed).toContain(`  - ${result?.problems[0] ?? ""}`);
    expect(printed).toContainEqual(expect.stringMatching(new RegExp(`^ +${line} host +← \\{"jsonrpc":"2\\.0","method":"turn/completed"`)));
  }, 60_000);

  it("fails a host whose items carry recordedAt as epoch milliseconds, on the tagged item branch", async () => {
    const outcome = await check(
      [join(repoRoot, "test/fixtures/broken-hosts/mistyped-fields.mjs"), "recorded-at-epoch", "--", process.execPath, ...referenceHost()],
      ["start and complete"],
    );
    const [result] = outcome.results;
    expect(result?.passed).toBe(false);
    for (const problem of result?.problems ?? []) expect(problem).toMatch(SCHEMA_PROBLEM);
    expect(result?.problems).toContainEqual(
      expect.stringMatching(
        /^line \d+: item\/started from the host: \$\.params\.item\.recordedAt must be string \(schema rule "type" at msp\.schema\.json#\/\$defs\/MessageItem\/properties\/recordedAt\/type\)$/,
      ),
    );
    expect(result?.problems).toContainEqual(
      expect.stringMatching(/^line \d+: item\/delta from the host: \$\.params\.recordedAt must be string \(schema rule "type"/),
    );
  }, 60_000);

  it("checks the client's messages and matches each answer to its request by id, both ways", () => {
    const problems = schemaProblems(
      wire(
        ["client", { jsonrpc: "2.0", id: "1", method: "turn/start", params: { sessionId: "s", input: [{ type: "text" }] } }],
        ["server", { jsonrpc: "2.0", id: "1", result: { commandId: "c", status: "accepted", turnId: "t", startedNewTurn: "yes", disposition: "started" } }],
        [
          "server",
          { jsonrpc: "2.0", id: 9, method: "tool/approve", params: { sessionId: "s", turnId: "t", itemId: "i", callId: "c", tool: "shell", args: "{}" } },
        ],
        ["client", { jsonrpc: "2.0", id: 9, result: { decision: "maybe" } }],
        ["client", { jsonrpc: "2.0", id: "2", method: "turn/cancel", params: { sessionId: "s", turnId: "t" } }],
        ["server", { jsonrpc: "2.0", id: "2", error: { code: -32001, message: "no", data: { reason: "unknown_turn" } } }],
      ),
    );
    expect(problems).toEqual([
      'line 1: turn/start from the client: $.params.input[0] lacks the required field "text" (schema rule "required" at msp.schema.json#/$defs/TextInput/required)',
      'line 2: the response to turn/start from the host: $.result.startedNewTurn must be boolean (schema rule "type" at msp.schema.json#/$defs/TurnStartResult/properties/startedNewTurn/type)',
      'line 4: the response to tool/approve from the client: $.result.decision must be equal to one of the allowed values (schema rule "enum" at msp.schema.json#/$defs/ApprovalDecision/enum)',
      'line 6: the response to turn/cancel from the host: $.error.data lacks the required field "commandId" (schema rule "required" at msp.schema.json#/$defs/RejectionData/required)',
    ]);
  });

  it("names a field the schema does not define as a note (MSP's readers ignore it), a method sent the wrong way as a problem, and leaves the check's raw lines out", () => {
    const lines = wire(
      ["server", { jsonrpc: "2.0", method: "turn/started", params: { sessionId: "s", viewCursor: "1", turnId: "t", turnID: "t" } }],
      ["server", { jsonrpc: "2.0", id: 3, method: "turn/start", params: {} }],
      ["client", { jsonrpc: "2.0", id: "msp-check-2", params: {} }],
      ["client", { jsonrpc: "2.0", id: "x", method: "turn/cancel", params: {} }],
    );
    const unknown =
      'line 1: turn/started from the host: $.params has the field "turnID", which the schema does not define (schema rule "additionalProperties" at msp.schema.json#/$defs/TurnStartedParams/additionalProperties)';
    const wrongWay =
      'line 2: turn/start from the host as a request: msp.schema.json\'s x-msp-methods has it as a request from the client (schema rule "x-msp-methods")';
    expect(schemaFindings(lines, new Set([3, 4]))).toEqual({ problems: [wrongWay], notes: [unknown] });
    // For text that must match exactly (the docs, the transcripts), both, in line order.
    expect(schemaProblems(lines, new Set([3, 4]))).toEqual([unknown, wrongWay]);
  });
});
