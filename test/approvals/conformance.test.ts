/**
 * Approvals in the conformance tools: checkTranscript enforces invariant 6 on host requests and
 * client answers, and the canned host replays `tool/approve` and checks the client's answers
 * (a wrong answer is a reported diff, never a hang).
 */
import { describe, expect, it } from "vitest";
import { StopController } from "../../src/ui/index.js";
import { CannedHost, checkTranscript, checkTranscriptParts, type CheckTranscriptOptions } from "../../src/testing/index.js";

// These transcripts are excerpts of a connection already in use (no session/create or
// session/resume of their own): each is checked with the mid-session mark.
const checkExcerpt = (lines: Parameters<typeof checkTranscript>[0], options: CheckTranscriptOptions = {}) =>
  checkTranscript(lines, { beginsMidSession: true, ...options });
const checkExcerptParts = (parts: Parameters<typeof checkTranscriptParts>[0], options: CheckTranscriptOptions = {}) =>
  checkTranscriptParts(parts, { beginsMidSession: true, ...options });

const S = "0198f0aa-1111-7000-8000-0000000000aa";
const T = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10";
const I = "0198f0ad-0000-7000-8000-000000000001";

const client = (msg: unknown) => JSON.stringify({ dir: "client", raw: JSON.stringify(msg) });
const server = (msg: unknown) => JSON.stringify({ dir: "server", raw: JSON.stringify(msg) });
let cursor = 0;
const note = (method: string, params: Record<string, unknown>) =>
  server({ jsonrpc: "2.0", method, params: { sessionId: S, viewCursor: `v:${S}:${++cursor}`, ...params } });
const call = (revision: number, fields: Record<string, unknown>) => ({
  itemId: I,
  kind: "toolCall",
  turnId: T,
  revision,
  status: "inProgress",
  recordedAt: "2026-11-30T13:00:00Z",
  tool: "shell",
  callId: "call-1",
  args: '{"command":"ls"}',
  visibleOutput: "",
  truncated: false,
  ...fields,
});
const ask = (id: number) =>
  server({
    jsonrpc: "2.0",
    id,
    method: "tool/approve",
    params: { sessionId: S, turnId: T, itemId: I, callId: "call-1", tool: "shell", args: '{"command":"ls"}' },
  });
const answer = (id: number, result: Record<string, unknown>) => client({ jsonrpc: "2.0", id, result });

/** turn/start, its ack, the call started and set pending: the common head of every scenario. */
function head(): string[] {
  cursor = 0;
  return [
    client({ jsonrpc: "2.0", id: 1, method: "turn/start", params: { sessionId: S, commandId: T, input: [{ type: "text", text: "list files" }] } }),
    server({ jsonrpc: "2.0", id: 1, result: { commandId: T, status: "accepted", turnId: T, startedNewTurn: true, disposition: "started" } }),
    note("turn/started", { turnId: T }),
    note("item/started", { item: call(1, {}) }),
    note("item/updated", { item: call(2, { approval: "pending" }) }),
  ];
}

function approved(): string[] {
  return [
    ...head(),
    ask(100),
    answer(100, { decision: "approve" }),
    note("item/updated", { item: call(3, { approval: "approved" }) }),
    note("item/updated", { item: call(4, { approval: "approved", visibleOutput: "a.txt\n" }) }),
    note("item/completed", { item: call(5, { approval: "approved", visibleOutput: "a.txt\n", status: "completed" }) }),
    note("turn/completed", { turnId: T, terminal: "completed", reason: "completed", durationMs: 5 }),
  ];
}

function denied(): string[] {
  return [
    ...head(),
    ask(100),
    answer(100, { decision: "deny", reason: "no approval handler" }),
    note("item/updated", { item: call(3, { approval: "denied" }) }),
    note("item/completed", { item: call(4, { approval: "denied", status: "failed", failureReason: "denied by the user" }) }),
    note("turn/completed", { turnId: T, terminal: "completed", reason: "completed", durationMs: 5 }),
  ];
}

function stopWhileAsking(): string[] {
  return [
    ...head(),
    ask(100),
    answer(100, { decision: "cancelled", reason: "turn cancelled" }),
    client({ jsonrpc: "2.0", id: 2, method: "turn/cancel", params: { sessionId: S, turnId: T, commandId: "c-2" } }),
    server({ jsonrpc: "2.0", id: 2, result: { commandId: "c-2", status: "accepted", turnId: T } }),
    note("item/updated", { item: call(3, { approval: "cancelled" }) }),
    note("item/completed", { item: call(4, { approval: "cancelled", status: "cancelled", failureReason: "tool call aborted before dispatch" }) }),
    note("turn/completed", { turnId: T, terminal: "cancelled", reason: "cancelled", cause: { kind: "user" }, durationMs: 5 }),
  ];
}

describe("checkTranscript: invariant 6", () => {
  it("accepts approve, deny and stop-while-asking", () => {
    for (const lines of [approved(), denied(), stopWhileAsking()]) expect(checkExcerpt(lines).problems).toEqual([]);
  });

  it("a tool call that runs with no approve: output, completed, approved state", () => {
    const lines = [
      ...head(),
      ask(100),
      note("item/updated", { item: call(3, { visibleOutput: "a.txt\n" }) }),
      note("item/completed", { item: call(4, { status: "completed", approval: "pending", visibleOutput: "a.txt\n" }) }),
      note("turn/completed", { turnId: T, terminal: "completed", reason: "completed", durationMs: 5 }),
    ];
    expect(checkExcerpt(lines).problems).toEqual([
      `line 7: item/updated: tool call ${I}, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)`,
      `line 8: item/completed: tool call ${I}, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)`,
    ]);
    const silent = [
      ...head(),
      ask(100),
      note("item/completed", { item: call(3, { status: "completed", approval: "pending" }) }),
      note("turn/completed", { turnId: T, terminal: "completed", reason: "completed", durationMs: 5 }),
    ];
    expect(checkExcerpt(silent).problems).toEqual([
      `line 7: item/completed: tool call ${I}, pending approval since line 5, completed with no approve answered while it was pending (invariant 6)`,
    ]);
    const deniedButApproved = denied();
    deniedButApproved[7] = note("item/updated", { item: call(3, { approval: "approved" }) });
    expect(checkExcerpt(deniedButApproved).problems[0]).toMatch(
      /^line 8: item\/updated: tool call \S+, pending approval since line 5, set approval: "approved" with no approve/,
    );
  });

  it("a late approve, after the host withdrew the question, runs nothing", () => {
    const lines = [
      ...head(),
      ask(100),
      note("item/updated", { item: call(3, { approval: "cancelled" }) }),
      answer(100, { decision: "approve" }),
      note("item/completed", { item: call(4, { status: "completed", approval: "cancelled", visibleOutput: "a.txt\n" }) }),
      note("turn/completed", { turnId: T, terminal: "cancelled", reason: "cancelled", durationMs: 5, cause: { kind: "user" } }),
    ];
    expect(checkExcerpt(lines).problems).toEqual([
      `line 9: item/completed: tool call ${I}, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)`,
    ]);
  });

  it("an approve after the client's own turn/cancel is late: it runs nothing", () => {
    const crossing = [
      ...head(),
      ask(100),
      client({ jsonrpc: "2.0", id: 2, method: "turn/cancel", params: { sessionId: S, turnId: T, commandId: "c-2" } }),
      answer(100, { decision: "approve" }),
      server({ jsonrpc: "2.0", id: 2, result: { commandId: "c-2", status: "accepted", turnId: T } }),
    ];
    const honest = [
      ...crossing,
      note("item/updated", { item: call(3, { approval: "cancelled" }) }),
      note("item/completed", { item: call(4, { approval: "cancelled", status: "cancelled" }) }),
      note("turn/completed", { turnId: T, terminal: "cancelled", reason: "cancelled", durationMs: 5, cause: { kind: "user" } }),
    ];
    expect(checkExcerpt(honest).problems).toEqual([]);
    const ranAnyway = [
      ...crossing,
      note("item/updated", { item: call(3, { visibleOutput: "a.txt\n" }) }),
      note("item/completed", { item: call(4, { status: "completed", approval: "pending", visibleOutput: "a.txt\n" }) }),
      note("turn/completed", { turnId: T, terminal: "cancelled", reason: "cancelled", durationMs: 5, cause: { kind: "user" } }),
    ];
    expect(checkExcerpt(ranAnyway).problems).toEqual([
      `line 10: item/updated: tool call ${I}, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)`,
      `line 11: item/completed: tool call ${I}, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)`,
    ]);
  });

  it("every tool/approve answered at most once; answers match a question", () => {
    const twice = approved();
    twice.splice(7, 0, answer(100, { decision: "approve" }));
    expect(checkExcerpt(twice).problems).toEqual(["line 8: a second answer to tool/approve id 100; the first was at line 7 (invariant 6)"]);
    const stray = [...head(), answer(5, { decision: "approve" })];
    expect(checkExcerpt(stray, { excerpt: true }).problems).toEqual(["line 6: the client answered id 5, which matches no earlier tool/approve"]);
  });

  it("after the turn's terminal, the only answer is cancelled", () => {
    const late = [...head(), ask(100), note("item/completed", { item: call(3, { status: "cancelled", approval: "cancelled" }) })];
    late.push(note("turn/completed", { turnId: T, terminal: "failed", reason: "host restarted", durationMs: 5 }));
    expect(checkExcerpt([...late, answer(100, { decision: "cancelled", reason: "turn ended" })]).problems).toEqual([]);
    expect(checkExcerpt([...late, answer(100, { decision: "approve" })]).problems).toEqual([
      `line 9: answered "approve" to tool/approve id 100 after turn ${T} ended at line 8; after the terminal the answer is "cancelled"`,
    ]);
  });

  it("the host's request: only tool/approve, well-formed, for a pending item of a running turn", () => {
    const noPending = [...head().slice(0, 4), ask(100), answer(100, { decision: "deny" })];
    expect(checkExcerpt(noPending, { excerpt: true }).problems).toEqual([
      `line 5: tool/approve for item ${I}, which no item/updated before it set approval: "pending" (invariant 6)`,
    ]);
    const other = [...head(), server({ jsonrpc: "2.0", id: 7, method: "fs/read", params: {} })];
    expect(checkExcerpt(other, { excerpt: true }).problems).toEqual([
      "line 6: fs/read: the host sent a request; the only request MSP hosts send is tool/approve",
    ]);
    const malformed = [...head(), server({ jsonrpc: "2.0", id: 7, method: "tool/approve", params: { sessionId: S, turnId: T } })];
    expect(checkExcerpt(malformed, { excerpt: true }).problems).toEqual(["line 6: tool/approve: itemId must be a string"]);
    const badAnswer = [...head(), ask(100), answer(100, { decision: "yes" })];
    expect(checkExcerpt(badAnswer, { excerpt: true }).problems).toEqual([
      `line 7: tool/approve: decision "yes" is not one of approve, deny, cancelled, approveForSession, denyAndStop`,
    ]);
    const badState = [...head(), note("item/updated", { item: call(3, { approval: "maybe" }) })];
    expect(checkExcerpt(badState, { excerpt: true }).problems).toEqual([
      `line 6: item/updated: item.approval "maybe" is not one of pending, approved, denied, cancelled`,
    ]);
  });

  it("resume: the question re-asked on the next connection (ids reset) and approved there", () => {
    const first = [...head(), ask(100)];
    const second = [
      client({ jsonrpc: "2.0", id: 1, method: "session/resume", params: { sessionId: S, commandId: "r-1" } }),
      server({ jsonrpc: "2.0", id: 1, result: { commandId: "r-1", status: "accepted", sessionId: S, replayed: 0 } }),
      ask(1),
      answer(1, { decision: "approve" }),
      note("item/updated", { item: call(3, { approval: "approved" }) }),
      note("item/completed", { item: call(4, { status: "completed", approval: "approved", visibleOutput: "ok" }) }),
      note("turn/completed", { turnId: T, terminal: "completed", reason: "completed", durationMs: 5 }),
    ];
    expect(checkExcerptParts([first, second]).map((c) => c.problems)).toEqual([[], []]);
  });
});

describe("CannedHost: host requests and the client's answers", () => {
  it("replays tool/approve and accepts the matching answer", async () => {
    const host = CannedHost.fromLines(approved());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    msp.onApproval(() => ({ decision: "approve" }));
    const turn = msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    expect((await turn.completed).terminal).toBe("completed");
    await host.done({ timeoutMs: 2_000 });
    await msp.close();
  });

  it("deny: the SDK's own 'no approval handler' answer matches", async () => {
    const host = CannedHost.fromLines(denied());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    const turn = msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    expect((await turn.completed).terminal).toBe("completed");
    await host.done({ timeoutMs: 2_000 });
    await msp.close();
  });

  it("Stop with the dialog open: the cancelled answer before turn/cancel, as the transcript has it", async () => {
    const host = CannedHost.fromLines(stopWhileAsking());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    msp.onApproval(() => new Promise(() => {}));
    const turn = msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    const stop = new StopController(turn);
    await new Promise<void>((resolve) => msp.events.once("approvalAsked", () => resolve()));
    const final = await stop.stop();
    expect(final).toMatchObject({ state: "ended", turnCompleted: { terminal: "cancelled" } });
    await host.done({ timeoutMs: 2_000 });
    await msp.close();
  });

  it("a wrong answer is a reported diff, and nothing hangs", async () => {
    const host = CannedHost.fromLines(approved());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    msp.onApproval(() => ({ decision: "deny", reason: "nope" }));
    const turn = msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    await expect(host.done({ timeoutMs: 2_000 })).rejects.toThrow(
      /does not match line 7:\n {2}result\.decision: expected "approve", got "deny"\n {2}result\.reason: expected nothing, got "nope"/,
    );
    await expect(turn.completed).rejects.toMatchObject({ kind: "connectionClosed" });
    await msp.close();
  });

  it("an answer where the transcript has a command (or the reverse order) is a diff", async () => {
    const host = CannedHost.fromLines(stopWhileAsking());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    msp.onApproval(() => new Promise(() => {}));
    const turn = msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    await new Promise<void>((resolve) => msp.events.once("approvalAsked", () => resolve()));
    // Answer approve instead of stopping: the transcript expects the cancelled answer.
    expect(msp.approvals.openOf(turn.commandId)[0]?.answer("approve")).toBe(true);
    await expect(host.done({ timeoutMs: 2_000 })).rejects.toThrow(/result\.decision: expected "cancelled", got "approve"/);
    await expect(turn.completed).rejects.toMatchObject({ kind: "connectionClosed" });
    await msp.close();
  });

  it("a client that never answers: done() reports where it waits", async () => {
    const host = CannedHost.fromLines(approved());
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    msp.onApproval(() => new Promise(() => {}));
    msp.startTurn({ sessionId: S, input: [{ type: "text", text: "list files" }] });
    await expect(host.done({ timeoutMs: 200 })).rejects.toThrow(/not finished after 200 ms; waiting at line 7 \(client: /);
    await msp.close();
  });
});
