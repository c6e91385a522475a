/**
 * The Codex mapping (codexItems.ts, codexApprovals.ts) on wire recorded from the real binary
 * (test/fixtures/codex/wire/, made by test/fixtures/codex/recordWire.ts): each recorded turn's
 * notifications, fed in wire order, give the MSP-shaped bridge events the bridge must send.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { BridgeEvent } from "../../packages/host/src/bridge/bridgeEvents.js";
import { approvalOffers, approvalResult, codexDecision, isApprovalRequest } from "../../packages/host/src/bridge/codex/codexApprovals.js";
import { TOOL_DENIED_REASON } from "@muse-code/protocol";
import { CodexTurnItems } from "../../packages/host/src/bridge/codex/codexItems.js";
import type { ServerNotification } from "../../packages/host/src/bridge/codex/generated/ServerNotification.js";
import type { ServerRequest } from "../../packages/host/src/bridge/codex/generated/ServerRequest.js";

interface Recorded {
  from: "codex" | "bridge";
  message: Record<string, unknown>;
}

function wire(name: string): Recorded[] {
  const lines = readFileSync(new URL(`../fixtures/codex/wire/${name}.jsonl`, import.meta.url), "utf8")
    .trim()
    .split("\n");
  expect(JSON.parse(lines[0]!)).toHaveProperty("comment");
  return lines.slice(1).map((line) => JSON.parse(line) as Recorded);
}

const notifications = (w: Recorded[]): ServerNotification[] =>
  w
    .filter((r) => r.from === "codex" && typeof r.message["method"] === "string" && r.message["id"] === undefined)
    .map((r) => r.message as unknown as ServerNotification);

function turnIdOf(w: Recorded[]): string {
  const started = notifications(w).find((n) => n.method === "turn/started");
  if (started?.method !== "turn/started") throw new Error("no turn/started on the wire");
  return started.params.turn.id;
}

function mapped(name: string): { events: BridgeEvent[]; items: CodexTurnItems } {
  const w = wire(name);
  const items = new CodexTurnItems(turnIdOf(w));
  return { events: notifications(w).flatMap((n) => items.accept(n)), items };
}

/** The events without the deltas, and each item's streamed text joined. */
function summary(events: BridgeEvent[]): { shape: string[]; streamed: Record<string, string> } {
  const streamed: Record<string, string> = {};
  const shape: string[] = [];
  for (const e of events) {
    if (e.type === "itemDelta") streamed[e.agentItemId] = (streamed[e.agentItemId] ?? "") + e.append;
    else if (e.type === "itemStarted") shape.push(`started ${e.kind} ${e.agentItemId}${e.kind === "toolCall" ? ` ${e.tool} ${e.args}` : ""}`);
    else if (e.type === "itemCompleted") shape.push(`completed ${e.agentItemId} ${e.status}${e.failureReason === undefined ? "" : ` (${e.failureReason})`}`);
    else if (e.type === "userInput") shape.push(`userInput ${e.text}`);
    else shape.push(`usage ${e.usage.inputTokens}/${e.usage.outputTokens}/${e.usage.reasoningTokens}`);
  }
  return { shape, streamed };
}

describe("Codex notifications → bridge events (recorded wire of codex 0.169.0)", () => {
  it("reasoning and the agent message stream as text deltas; usage counts reasoning apart", () => {
    const { events } = mapped("message");
    const { shape, streamed } = summary(events);
    expect(shape).toEqual(["started reasoning rs_1", "completed rs_1 completed", "started message msg_1", "completed msg_1 completed", "usage 11/4/3"]);
    expect(streamed).toEqual({ rs_1: "The user wants a greeting.", msg_1: "Hello from the scripted model." });
    expect(events.filter((e) => e.type === "itemDelta" && e.agentItemId === "msg_1").length).toBeGreaterThan(1);
  });

  it("a command is a shell toolCall whose output streams; its completion only extends what was streamed, and says when Codex streamed less than it ran", () => {
    const { events } = mapped("command-output");
    const { shape } = summary(events);
    expect(shape[0]).toBe(`started toolCall call_1 shell ${JSON.stringify({ command: "/bin/bash -c 'for i in 1 2 3; do echo line$i; sleep 0.4; done'" })}`);
    expect(events.filter((e) => e.type === "itemDelta" && e.agentItemId === "call_1").map((e) => (e as { append: string }).append)).toEqual([
      "line2\n",
      "line3\n",
    ]);
    // Codex streamed line2 and line3 but not line1, which only its aggregatedOutput has: the
    // completion adds nothing, as an MSP completion may only extend the streamed text (invariant B),
    // and says the output it carries is incomplete.
    expect(events.find((e) => e.type === "itemCompleted" && e.agentItemId === "call_1")).toEqual({
      type: "itemCompleted",
      agentItemId: "call_1",
      status: "completed",
      incomplete: true,
    });
    expect(shape.at(-1)).toBe("usage 22/8/6");
  });

  it("a command that exits non-zero fails with its exit code, its output sent first", () => {
    const { events } = mapped("command-fails");
    const call = events.filter((e) => "agentItemId" in e && e.agentItemId === "call_1");
    expect(call.slice(1)).toEqual([
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "oops\n" },
      { type: "itemCompleted", agentItemId: "call_1", status: "failed", failureReason: "exit code 3" },
    ]);
  });

  it("a declined command fails 'denied by the user' and the turn goes on", () => {
    const { events } = mapped("approve-decline");
    expect(events.find((e) => e.type === "itemCompleted" && e.agentItemId === "call_1")).toEqual({
      type: "itemCompleted",
      agentItemId: "call_1",
      status: "failed",
      failureReason: TOOL_DENIED_REASON,
    });
    expect(summary(events).shape).toContain("completed msg_2 completed");
  });

  it("a stopped command stays open at Codex's terminal, with what it printed, until Codex's late completion", () => {
    const w = wire("stop-sleep");
    const turnId = turnIdOf(w);
    const items = new CodexTurnItems(turnId);
    const all = notifications(w);
    const terminal = all.findIndex((n) => n.method === "turn/completed");
    for (const n of all.slice(0, terminal + 1)) items.accept(n);
    // At Codex's own `interrupted` the command's item is still open: the bridge closes it `cancelled`.
    expect(items.openItems).toEqual(["call_1"]);
    expect(items.sentOf("call_1")).toBe("");
    // The item/completed Codex sends after its terminal (the terminated process, exit -1) maps to a failure
    // the bridge absorbs, as the item is already closed by then.
    const late = all.slice(terminal + 1).flatMap((n) => items.accept(n));
    expect(late).toEqual([{ type: "itemCompleted", agentItemId: "call_1", status: "failed", failureReason: "exit code -1" }]);
  });

  it("the turn's own input is not steering; a later user message is the steer Codex took, at its next step", () => {
    const { events } = mapped("steer");
    expect(summary(events).shape).toEqual([
      "started toolCall call_1 shell " + JSON.stringify({ command: "/bin/bash -c 'sleep 2'" }),
      "completed call_1 completed",
      "usage 11/4/3",
      "userInput Also say goodbye.",
      "started message msg_2",
      "completed msg_2 completed",
      "usage 22/8/6",
    ]);
  });

  it("ignores what belongs to another turn", () => {
    const items = new CodexTurnItems("another-turn");
    expect(notifications(wire("message")).flatMap((n) => items.accept(n))).toEqual([]);
  });
});

describe("Codex approvals ↔ tool/approve (recorded wire of codex 0.169.0)", () => {
  const asked = (name: string): { request: ServerRequest; answer: unknown } => {
    const w = wire(name);
    const request = w.find((r) => r.from === "codex" && typeof r.message["method"] === "string" && r.message["id"] !== undefined)!
      .message as unknown as ServerRequest;
    const answer = w.find((r) => r.from === "bridge" && r.message["id"] === request.id && "result" in r.message)!.message["result"];
    return { request, answer };
  };

  it("offers what Codex lists (accept, cancel), plus deny, which Codex takes unlisted", () => {
    const { request } = asked("approve-accept");
    expect(isApprovalRequest(request)).toBe(true);
    if (!isApprovalRequest(request)) return;
    expect(request.method).toBe("item/commandExecution/requestApproval");
    expect(approvalOffers(request)).toEqual(["approve", "deny", "denyAndStop"]);
  });

  it("approve was sent as accept and ran the command; deny as decline", () => {
    const accept = asked("approve-accept");
    expect(accept.answer).toEqual({ decision: "accept" });
    const commandOutput = summary(mapped("approve-accept").events);
    expect(commandOutput.streamed["call_1"]).toBe("approved-ran\n");
    expect(asked("approve-decline").answer).toEqual({ decision: "decline" });
  });

  it("maps every MSP decision to Codex's", () => {
    expect({
      approve: codexDecision("approve"),
      approveForSession: codexDecision("approveForSession"),
      deny: codexDecision("deny"),
      denyAndStop: codexDecision("denyAndStop"),
      cancelled: codexDecision("cancelled"),
    }).toEqual({ approve: "accept", approveForSession: "acceptForSession", deny: "decline", denyAndStop: "cancel", cancelled: "cancel" });
  });

  it("a permissions request grants the requested profile for the turn or the session, or nothing", () => {
    const request = {
      method: "item/permissions/requestApproval",
      id: 7,
      params: {
        threadId: "t",
        turnId: "u",
        itemId: "i",
        environmentId: null,
        startedAtMs: 0,
        cwd: "/w",
        reason: null,
        permissions: { network: { enabled: true }, fileSystem: null },
      },
    } as unknown as ServerRequest;
    if (!isApprovalRequest(request)) throw new Error("not an approval");
    expect(approvalResult(request, "approve")).toEqual({ permissions: { network: { enabled: true } }, scope: "turn" });
    expect(approvalResult(request, "approveForSession")).toEqual({ permissions: { network: { enabled: true } }, scope: "session" });
    expect(approvalResult(request, "deny")).toEqual({ permissions: {}, scope: "turn" });
  });
});
