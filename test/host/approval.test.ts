/**
 * Approvals on the real host (`muse-host serve --stdio`, a child process, raw NDJSON): a scripted
 * tool call with `"approval": true` is asked about (`tool/approve`) and runs only on `approve`.
 * The tool's side effect (a marker file) proves whether it ran.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { checkTranscript } from "../../src/testing/index.js";
import { approvalModel } from "./approvalModel.js";
import { useHostProcesses, type HostProcess, type WireMessage } from "./hostProcess.js";
import { itemAfter } from "../helpers/foldedWire.js";

const { start, tempDir } = useHostProcesses("muse-approval-");

interface Started {
  host: HostProcess;
  marker: string;
  sessionId: string;
  turnId: string;
  ask: WireMessage;
}

/** Starts a host, a session and a turn, and waits for the host's `tool/approve`. */
async function untilAsked(data = tempDir(), after: Array<Record<string, unknown>> = []): Promise<Started> {
  const { model, marker } = approvalModel(tempDir(), after);
  const host = start(["--script", model, "--data", data]);
  const created = await host.request("session/create", {});
  const sessionId = created.result?.["sessionId"] as string;
  const started = await host.request("turn/start", { sessionId, input: [{ type: "text", text: "write the marker" }] });
  const turnId = started.result?.["turnId"] as string;
  const ask = await host.waitFor((m) => m.method === "tool/approve", 5000, "tool/approve");
  return { host, marker, sessionId, turnId, ask };
}

/** The tool call after each of its updates (a patch or an append), whole: as a client folds it. */
const toolUpdates = (host: HostProcess, turnId: string) =>
  host.wire
    .filter((m) => m.method === "item/updated" || m.method === "item/delta")
    .map((m) => itemAfter(host.wire, m) as unknown as Record<string, unknown>)
    .filter((i) => i["turnId"] === turnId && i["kind"] === "toolCall");

const toolCompleted = (host: HostProcess, turnId: string) =>
  host
    .notifications("item/completed", turnId)
    .map((p) => p["item"] as Record<string, unknown>)
    .find((i) => i["kind"] === "toolCall");

function answer(host: HostProcess, id: unknown, result: unknown): void {
  host.writeLine(JSON.stringify({ jsonrpc: "2.0", id, result }));
}

const terminalOf = (host: HostProcess, turnId: string) =>
  host.waitFor((m) => m.method === "turn/completed" && m.params?.["turnId"] === turnId, 10_000, `turn/completed of ${turnId}`);

/** The last viewCursor the host sent. */
function lastCursor(host: HostProcess): string | undefined {
  return host.wire
    .map((m) => m.params?.["viewCursor"])
    .filter((c): c is string => typeof c === "string")
    .at(-1);
}

/** Waits (bounded) until the host's stderr matches. */
async function stderrMatches(host: HostProcess, pattern: RegExp, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(host.stderr)) {
    if (Date.now() > deadline) throw new Error(`stderr never matched ${String(pattern)}:\n${host.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function expectClean(host: HostProcess): void {
  const verdict = checkTranscript(host.transcript);
  expect(verdict.problems).toEqual([]);
}

/** The transcript's one problem is the client's answer (this test's deliberate fault): the host kept every rule. */
function expectOnlyClientFault(host: HostProcess, fault: RegExp): void {
  const { problems } = checkTranscript(host.transcript);
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(fault);
}

describe("tool/approve on the reference host", () => {
  it("asks after an item/updated that sets approval pending, with the call's own ids", async () => {
    const { host, sessionId, turnId, ask } = await untilAsked();
    const pendingAt = host.indexOf((m) => m.method === "item/updated" && (m.params?.["item"] as { approval?: string }).approval === "pending");
    expect(pendingAt).toBeGreaterThanOrEqual(0);
    expect(pendingAt).toBeLessThan(host.wire.indexOf(ask));
    const item = itemAfter(host.wire, host.wire[pendingAt]!) as unknown as Record<string, unknown>;
    expect(ask.id).toEqual(expect.any(String));
    expect(ask.params).toEqual({
      sessionId,
      turnId,
      itemId: item["itemId"],
      callId: item["callId"],
      tool: "shell",
      args: item["args"],
      decisions: ["approve", "approveForSession", "deny", "denyAndStop"],
      grant: { tool: "shell", args: item["args"], match: "exact" },
    });
    expect(item["status"]).toBe("inProgress");
    expect(item["visibleOutput"]).toBe("");
    await host.stop();
  });

  it("approve: approval approved, then the tool runs, and the turn completes", async () => {
    const { host, marker, turnId, ask } = await untilAsked();
    expect(existsSync(marker)).toBe(false); // not before the answer
    answer(host, ask.id, { decision: "approve" });
    const terminal = await terminalOf(host, turnId);
    expect(terminal.params).toMatchObject({ terminal: "completed", reason: "completed" });
    expect(toolUpdates(host, turnId).map((i) => i["approval"])).toEqual(expect.arrayContaining(["pending", "approved"]));
    const states = toolUpdates(host, turnId).map((i) => i["approval"]);
    expect(states.slice(0, 2)).toEqual(["pending", "approved"]);
    // no output before "approved"
    const firstOutput = toolUpdates(host, turnId).findIndex((i) => i["visibleOutput"] !== "");
    expect(firstOutput === -1 || firstOutput >= 2).toBe(true);
    expect(toolCompleted(host, turnId)).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "wrote it\n" });
    expect(existsSync(marker)).toBe(true);
    expectClean(host);
    await host.stop();
  });

  it("deny: approval denied, the call fails 'denied by the user', nothing runs, and the script goes on", async () => {
    const { host, marker, turnId, ask } = await untilAsked();
    answer(host, ask.id, { decision: "deny", reason: "not today" });
    const terminal = await terminalOf(host, turnId);
    expect(terminal.params).toMatchObject({ terminal: "completed" });
    expect(toolUpdates(host, turnId).map((i) => i["approval"])).toEqual(["pending", "denied"]);
    expect(toolCompleted(host, turnId)).toMatchObject({
      status: "failed",
      approval: "denied",
      failureReason: "denied by the user",
      error: { name: "ToolDenied", code: "TOOL_DENIED", message: "not today" },
      visibleOutput: "",
    });
    const messages = host
      .notifications("item/completed", turnId)
      .map((p) => p["item"] as Record<string, unknown>)
      .filter((i) => i["kind"] === "message")
      .map((i) => i["text"]);
    expect(messages).toEqual(["I will write the marker.", "Finished."]); // the step after the denied call ran
    expect(existsSync(marker)).toBe(false);
    expectClean(host);
    await host.stop();
  });

  it("a cancel while asking withdraws the question; an approve that crosses it is accepted and runs nothing", async () => {
    const { host, marker, sessionId, turnId, ask } = await untilAsked();
    const cancelId = host.send("turn/cancel", { sessionId, turnId });
    answer(host, ask.id, { decision: "approve" }); // the user clicked Approve as the cancel went out
    const cancel = await host.waitFor((m) => m.id === cancelId && m.method === undefined, 5000, "the cancel's answer");
    expect(cancel.result).toMatchObject({ status: "accepted", turnId });
    const terminal = await terminalOf(host, turnId);
    expect(terminal.params).toMatchObject({ terminal: "cancelled", reason: "cancelled while awaiting approval", cause: { kind: "user" } });
    expect(toolUpdates(host, turnId).map((i) => i["approval"])).toEqual(["pending", "cancelled"]);
    expect(toolCompleted(host, turnId)).toMatchObject({
      status: "cancelled",
      approval: "cancelled",
      failureReason: "tool call aborted before dispatch",
      error: { name: "AbortError", code: "TOOL_ABORTED_BEFORE_DISPATCH" },
      visibleOutput: "",
    });
    await stderrMatches(host, /answer ignored \(withdrawn: its turn was cancelled\)/);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    expectClean(host);
    await host.stop();
  });

  it("a cancel while asking gives the step's later calls their synthetic 'aborted before dispatch' results", async () => {
    const { host, sessionId, turnId } = await untilAsked(undefined, [{ tool: "shell", args: { command: "echo never" } }]);
    await host.request("turn/cancel", { sessionId, turnId });
    const terminal = await terminalOf(host, turnId);
    expect(terminal.params).toMatchObject({ terminal: "cancelled", reason: "cancelled while awaiting approval" });
    const calls = host
      .notifications("item/completed", turnId)
      .map((p) => p["item"] as Record<string, unknown>)
      .filter((i) => i["kind"] === "toolCall");
    expect(calls).toEqual([
      expect.objectContaining({ status: "cancelled", approval: "cancelled", failureReason: "tool call aborted before dispatch" }),
      expect.objectContaining({ status: "cancelled", args: '{"command":"echo never"}', failureReason: "tool call aborted before dispatch", visibleOutput: "" }),
    ]);
    expect(calls[1]).not.toHaveProperty("approval");
    expectClean(host);
    await host.stop();
  });

  it("an approve sent after the turn's terminal runs nothing; the host goes on serving (checkTranscript blames the client)", async () => {
    const { host, marker, sessionId, turnId, ask } = await untilAsked();
    await host.request("turn/cancel", { sessionId, turnId });
    await terminalOf(host, turnId);
    const seen = host.wire.length;
    answer(host, ask.id, { decision: "approve" }); // late: a correct client answers "cancelled" by now
    const info = await host.request("host/info", {});
    expect(info.result).toMatchObject({ status: "accepted" });
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    // Nothing about the turn after its terminal: only host/info's answer came.
    expect(host.wire.slice(seen).map((m) => m.method ?? `response ${String(m.id)}`)).toEqual([`response ${String(info.id)}`]);
    expectOnlyClientFault(
      host,
      /answered "approve" to tool\/approve id "approve-1" after turn .* ended at line \d+; after the terminal the answer is "cancelled"/,
    );
    await host.stop();
  });

  it("a Stop (an answer of cancelled, then turn/cancel): the cancel is accepted, nothing runs, one terminal", async () => {
    const { host, marker, sessionId, turnId, ask } = await untilAsked();
    answer(host, ask.id, { decision: "cancelled", reason: "turn cancelled" });
    const cancel = await host.request("turn/cancel", { sessionId, turnId });
    expect(cancel.result).toMatchObject({ status: "accepted", turnId }); // the answer alone ended nothing
    const terminal = await terminalOf(host, turnId);
    expect(terminal.params).toMatchObject({ terminal: "cancelled", reason: "cancelled while awaiting approval", cause: { kind: "user" } });
    expect(toolCompleted(host, turnId)).toMatchObject({ status: "cancelled", approval: "cancelled", failureReason: "tool call aborted before dispatch" });
    expect(existsSync(marker)).toBe(false);
    expectClean(host);
    await host.stop();
  });

  it("an answer of cancelled alone withdraws this connection: the call stays pending, unasked, until a resume asks again", async () => {
    const { host, marker, sessionId, turnId, ask } = await untilAsked();
    answer(host, ask.id, { decision: "cancelled" });
    await stderrMatches(host, /the client withdrew \(cancelled\); the question stays open/);
    await new Promise((r) => setTimeout(r, 200));
    expect(toolUpdates(host, turnId).map((i) => i["approval"])).toEqual(["pending"]); // still pending
    expect(host.wire.filter((m) => m.method === "tool/approve")).toHaveLength(1); // not asked again by itself
    expect(host.notifications("turn/completed", turnId)).toEqual([]);
    const resumed = await host.request("session/resume", { sessionId, afterCursor: lastCursor(host) });
    expect(resumed.result).toMatchObject({ status: "accepted", replayed: 0 });
    const again = await host.waitFor((m) => m.method === "tool/approve" && m.id !== ask.id, 5000, "the question asked again");
    expect(again.params).toEqual(ask.params);
    answer(host, again.id, { decision: "approve" });
    await terminalOf(host, turnId);
    expect(toolCompleted(host, turnId)).toMatchObject({ status: "completed", approval: "approved" });
    expect(existsSync(marker)).toBe(true);
    expectClean(host);
    await host.stop();
  });

  it.each([
    ["an unknown decision", { decision: "yes" }, /decision "yes"|result\.decision must be/],
    ["a result that is not an object", "approve", /not an object|must be an object/],
    ["a reason that is not a string", { decision: "approve", reason: 7 }, /reason must be a string/],
  ])("a malformed answer (%s) is a deny that says why; nothing runs", async (_what, result, why) => {
    const { host, marker, turnId, ask } = await untilAsked();
    answer(host, ask.id, result);
    await terminalOf(host, turnId);
    const call = toolCompleted(host, turnId);
    expect(call).toMatchObject({ status: "failed", approval: "denied" });
    expect(call?.["failureReason"]).toMatch(/^denied: /);
    expect(call?.["failureReason"]).toMatch(why);
    expect(existsSync(marker)).toBe(false);
    expectOnlyClientFault(host, why);
    await host.stop();
  });

  it("a JSON-RPC error answer (a client that cannot ask) is a deny", async () => {
    const { host, marker, turnId, ask } = await untilAsked();
    host.writeLine(JSON.stringify({ jsonrpc: "2.0", id: ask.id, error: { code: -32601, message: "Method not found" } }));
    await terminalOf(host, turnId);
    expect(toolCompleted(host, turnId)).toMatchObject({
      status: "failed",
      approval: "denied",
      failureReason: "denied: the client answered with JSON-RPC error -32601 (Method not found)",
      error: { name: "ToolDenied", code: "TOOL_DENIED", message: "the client answered with JSON-RPC error -32601 (Method not found)" },
    });
    expect(existsSync(marker)).toBe(false);
    await host.stop();
  });

  it("a second answer to the same question, and an answer to an id never asked, change nothing", async () => {
    const { host, marker, turnId, ask } = await untilAsked();
    answer(host, "approve-999", { decision: "approve" });
    answer(host, ask.id, { decision: "deny" });
    answer(host, ask.id, { decision: "approve" });
    await terminalOf(host, turnId);
    expect(toolCompleted(host, turnId)).toMatchObject({ status: "failed", approval: "denied" });
    expect(host.wire.filter((m) => m.id === "approve-999" || m.id === ask.id)).toEqual([ask]); // never answered back
    expect(existsSync(marker)).toBe(false);
    await stderrMatches(host, /never asked: ignored/);
    await stderrMatches(host, /answer ignored \(already answered "deny"\)/);
    await host.stop();
  });

  it("logs every change of the question durably: approval records pending, then approved, beside the notifications", async () => {
    const data = tempDir();
    const { host, sessionId, turnId, ask } = await untilAsked(data);
    answer(host, ask.id, { decision: "approve", reason: "looks safe" });
    await terminalOf(host, turnId);
    await host.stop();
    const records = readFileSync(join(data, "sessions", `${sessionId}.jsonl`), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const approvals = records.filter((r) => r["type"] === "approval");
    expect(approvals.map((r) => [r["state"], r["reason"]])).toEqual([
      ["pending", undefined],
      ["approved", "looks safe"],
    ]);
    expect(approvals[0]).toMatchObject({ turnId, itemId: ask.params?.["itemId"], callId: ask.params?.["callId"] });
    // Each record precedes the item/updated that carries its state to the wire.
    const at = (state: string) => records.findIndex((r) => r["type"] === "approval" && r["state"] === state);
    const sent = (state: string) =>
      records.findIndex((r) => r["method"] === "item/updated" && (r["params"] as { item: { approval?: string } }).item.approval === state);
    expect(at("pending")).toBeLessThan(sent("pending"));
    expect(at("approved")).toBeLessThan(sent("approved"));
  });

  it("a shutdown while asking (stdin closed) withdraws the question: the turn ends cancelled, cause disposed, nothing runs", async () => {
    const { host, marker, turnId } = await untilAsked();
    const exit = await host.stop();
    expect(exit.code).toBe(0);
    const terminal = host.notifications("turn/completed", turnId)[0];
    expect(terminal).toMatchObject({ terminal: "cancelled", reason: "cancelled while awaiting approval", cause: { kind: "disposed" } });
    expect(toolCompleted(host, turnId)).toMatchObject({ status: "cancelled", approval: "cancelled", failureReason: "tool call aborted before dispatch" });
    expect(existsSync(marker)).toBe(false);
    expectClean(host);
  });

  it("a host killed while asking restarts and closes the turn 'host restarted'; the question is withdrawn", async () => {
    const data = tempDir();
    const first = await untilAsked(data);
    await first.host.kill();
    const { model } = approvalModel(tempDir());
    const again = start(["--script", model, "--data", data]);
    const resumed = await again.request("session/resume", { sessionId: first.sessionId });
    expect(resumed.result).toMatchObject({ status: "accepted" });
    const terminal = await terminalOf(again, first.turnId);
    expect(terminal.params).toMatchObject({ terminal: "failed", reason: "host restarted" });
    expect(toolCompleted(again, first.turnId)).toMatchObject({ status: "failed", approval: "cancelled", failureReason: "host restarted" });
    await new Promise((r) => setTimeout(r, 200));
    expect(again.wire.some((m) => m.method === "tool/approve")).toBe(false); // nobody is asked again
    expect(existsSync(first.marker)).toBe(false);
    await again.stop();
  });
});

describe("a scripted tool call's approval key", () => {
  it("is kept when true, dropped when false, and anything but a boolean is refused with its path", () => {
    const turns = (approval: unknown) => ({ turns: [{ steps: [{ toolCalls: [{ tool: "shell", args: { command: "ls" }, approval }] }] }] });
    expect(parseScriptedModel(turns(true), "m").turnAt(0).steps[0]?.toolCalls[0]).toEqual({ tool: "shell", args: { command: "ls" }, approval: true });
    expect(parseScriptedModel(turns(false), "m").turnAt(0).steps[0]?.toolCalls[0]).toEqual({ tool: "shell", args: { command: "ls" } });
    expect(() => parseScriptedModel(turns("yes"), "m")).toThrow(/\$\.turns\[0\]\.steps\[0\]\.toolCalls\[0\]\.approval: approval must be a boolean/);
  });
});
