/** The approval gate alone: request ids, the first answer deciding, withdrawal, and the bound on remembered late answers. */
import { describe, expect, it } from "vitest";
import { ApprovalGate, LATE_ANSWERS_REMEMBERED, type AskTarget } from "../../packages/host/src/server/approvalGate.js";
import type { ToolApproveParams } from "../../packages/protocol/src/index.js";

type Sent = { id: string; method: string; params: ToolApproveParams };

function target(): AskTarget & { sent: Sent[] } {
  const sent: Sent[] = [];
  return { sent, send: (message) => sent.push(message as Sent) };
}

const question = (n: number): ToolApproveParams => ({ sessionId: "s1", turnId: `t${n}`, itemId: `i${n}`, callId: `c${n}`, tool: "shell", args: "{}" });

describe("ApprovalGate", () => {
  it("asks the session's most recent connection, with a fresh id per question", async () => {
    const gate = new ApprovalGate();
    const a = target();
    const b = target();
    gate.attach("s1", a);
    gate.attach("s1", b);
    const answered = gate.ask(question(1), new AbortController().signal);
    expect(a.sent).toEqual([]);
    expect(b.sent).toEqual([{ jsonrpc: "2.0", id: "approve-1", method: "tool/approve", params: question(1) }]);
    expect(gate.answer(b, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve", reason: "ok" } })).toBe(true);
    await expect(answered).resolves.toEqual({ decision: "approve", reason: "ok" });
    expect(gate.openCount).toBe(0);
  });

  it("a withdrawn question rejects with the signal's reason, and its late answer is recognised and ignored", async () => {
    const lines: string[] = [];
    const gate = new ApprovalGate({ logger: (line) => lines.push(line) });
    const a = target();
    gate.attach("s1", a);
    const abort = new AbortController();
    const answered = gate.ask(question(1), abort.signal);
    abort.abort({ kind: "user" });
    await expect(answered).rejects.toEqual({ kind: "user" });
    expect(gate.answer(a, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve" } })).toBe(true);
    expect(lines).toEqual(['tool/approve "approve-1": answer ignored (withdrawn: its turn was cancelled)']);
  });

  it(`remembers at most ${LATE_ANSWERS_REMEMBERED} late ids per connection: older late answers read as unknown, and run nothing either way`, async () => {
    const lines: string[] = [];
    const gate = new ApprovalGate({ logger: (line) => lines.push(line), lateAnswersPerTarget: 4 });
    const a = target();
    gate.attach("s1", a);
    for (let n = 1; n <= 6; n += 1) {
      const abort = new AbortController();
      const answered = gate.ask(question(n), abort.signal);
      abort.abort("cancelled");
      await answered.catch(() => {});
    }
    expect(gate.answer(a, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve" } })).toBe(false); // forgotten: beyond the bound
    expect(gate.answer(a, { jsonrpc: "2.0", id: "approve-6", result: { decision: "approve" } })).toBe(true); // remembered as late
    expect(lines).toEqual([
      'a response to "approve-1", which this host never asked: ignored',
      'tool/approve "approve-6": answer ignored (withdrawn: its turn was cancelled)',
    ]);
    expect(gate.openCount).toBe(0);
  });

  it("a connection that closes leaves the question open; it is asked again on the next resume", async () => {
    const gate = new ApprovalGate();
    const a = target();
    gate.attach("s1", a);
    const answered = gate.ask(question(1), new AbortController().signal);
    gate.detach(a);
    expect(gate.openCount).toBe(1);
    expect(gate.answer(a, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve" } })).toBe(false); // a closed connection answers nothing
    const b = target();
    gate.attach("s1", b); // a create-like attach does not re-ask…
    expect(b.sent).toEqual([]);
    gate.attach("s1", b, { reask: true }); // …a resume does, once
    gate.attach("s1", b, { reask: true });
    expect(b.sent.map((m) => m.id)).toEqual(["approve-1"]);
    gate.answer(b, { jsonrpc: "2.0", id: "approve-1", error: { code: -32603, message: "boom" } });
    await expect(answered).resolves.toEqual({ decision: "deny", invalid: "the client answered with JSON-RPC error -32603 (boom)" });
  });
});

describe("ApprovalGate and a connection that cannot send", () => {
  it("a send that throws leaves the question open for the next resume", async () => {
    const lines: string[] = [];
    const gate = new ApprovalGate({ logger: (line) => lines.push(line) });
    gate.attach("s1", {
      send: () => {
        throw new Error("socket gone");
      },
    });
    const answered = gate.ask(question(1), new AbortController().signal);
    expect(gate.openCount).toBe(1);
    expect(lines).toEqual(["tool/approve approve-1 of call c1 could not be sent: socket gone"]);
    const b = target();
    gate.attach("s1", b, { reask: true });
    gate.answer(b, { jsonrpc: "2.0", id: "approve-1", result: { decision: "deny" } });
    await expect(answered).resolves.toEqual({ decision: "deny" });
  });
});

describe("ApprovalGate and an answer of cancelled", () => {
  it("withdraws only the connection that gave it: the question stays open, and moves on when that connection closes", async () => {
    const lines: string[] = [];
    const gate = new ApprovalGate({ logger: (line) => lines.push(line) });
    const a = target();
    const b = target();
    gate.attach("s1", a);
    gate.attach("s1", b);
    const answered = gate.ask(question(1), new AbortController().signal);
    expect(b.sent.map((m) => m.id)).toEqual(["approve-1"]);
    gate.answer(b, { jsonrpc: "2.0", id: "approve-1", result: { decision: "cancelled", reason: "closing" } });
    expect(gate.openCount).toBe(1);
    expect(a.sent).toEqual([]); // not moved while b is still there
    gate.answer(b, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve" } }); // b's second answer to that id
    expect(gate.openCount).toBe(1);
    gate.detach(b); // b closes: the question goes to a
    expect(a.sent.map((m) => m.id)).toEqual(["approve-1"]);
    gate.answer(a, { jsonrpc: "2.0", id: "approve-1", result: { decision: "approve" } });
    await expect(answered).resolves.toEqual({ decision: "approve" });
    expect(lines).toEqual([
      'tool/approve "approve-1" of call c1: the client withdrew (closing); the question stays open',
      'tool/approve "approve-1": answer ignored (this client withdrew from it)',
    ]);
  });

  it("a connection that withdrew is asked again when it resumes", async () => {
    const gate = new ApprovalGate();
    const a = target();
    gate.attach("s1", a);
    const answered = gate.ask(question(1), new AbortController().signal);
    gate.answer(a, { jsonrpc: "2.0", id: "approve-1", result: { decision: "cancelled" } });
    gate.attach("s1", a, { reask: true });
    expect(a.sent.map((m) => m.id)).toEqual(["approve-1", "approve-2"]);
    gate.answer(a, { jsonrpc: "2.0", id: "approve-2", result: { decision: "deny" } });
    await expect(answered).resolves.toEqual({ decision: "deny" });
  });
});
