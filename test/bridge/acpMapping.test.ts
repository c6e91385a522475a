/**
 * The ACP bridge's mapping, unit by unit: `session/update`s to MSP items (message and reasoning
 * chunks, tool calls and their updates, usage), permission options to `tool/approve` offers and
 * back, and a prompt turn's stopReason to the MSP terminal. The updates are shaped as codex-acp
 * 0.16.0 sends them (seen through the real binary in acpBridgeHost.test.ts).
 */
import type { PermissionOption, SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { offersOf, permissionResponse } from "../../packages/host/src/bridge/acp/acpPermissions.js";
import { turnEndOf } from "../../packages/host/src/bridge/acp/acpStopReasons.js";
import { AcpTurnUpdates, commandOf, outputOf, promptUsage, toolCallView } from "../../packages/host/src/bridge/acp/acpUpdates.js";

const chunk = (kind: "agent_message_chunk" | "agent_thought_chunk", text: string, messageId?: string): SessionUpdate => ({
  sessionUpdate: kind,
  content: { type: "text", text },
  ...(messageId === undefined ? {} : { messageId }),
});

const sleepCall: SessionUpdate = {
  sessionUpdate: "tool_call",
  toolCallId: "call_1",
  title: "sleep 47",
  kind: "execute",
  status: "in_progress",
  rawInput: { command: ["/bin/bash", "-c", "sleep 47"], cwd: "/w" },
};

describe("ACP session/update → MSP items", () => {
  it("message and thought chunks are one item per run of one kind, each chunk a delta; another update ends the item", () => {
    const u = new AcpTurnUpdates();
    const events = [
      ...u.accept(chunk("agent_thought_chunk", "think")),
      ...u.accept(chunk("agent_thought_chunk", "ing")),
      ...u.accept(chunk("agent_message_chunk", "Hel")),
      ...u.accept(chunk("agent_message_chunk", "lo")),
      ...u.accept(sleepCall),
      ...u.accept(chunk("agent_message_chunk", "after")),
      ...u.endText(),
    ];
    expect(events.map((e) => [e.type, "agentItemId" in e ? e.agentItemId : "", "append" in e ? e.append : "kind" in e ? e.kind : ""])).toEqual([
      ["itemStarted", "reasoning:1", "reasoning"],
      ["itemDelta", "reasoning:1", "think"],
      ["itemDelta", "reasoning:1", "ing"],
      ["itemCompleted", "reasoning:1", ""],
      ["itemStarted", "message:2", "message"],
      ["itemDelta", "message:2", "Hel"],
      ["itemDelta", "message:2", "lo"],
      ["itemCompleted", "message:2", ""],
      ["itemStarted", "call_1", "toolCall"],
      ["itemStarted", "message:3", "message"],
      ["itemDelta", "message:3", "after"],
      ["itemCompleted", "message:3", ""],
    ]);
  });

  it("a new messageId starts a new message item", () => {
    const u = new AcpTurnUpdates();
    const started = [...u.accept(chunk("agent_message_chunk", "a", "m1")), ...u.accept(chunk("agent_message_chunk", "b", "m2"))].filter(
      (e) => e.type === "itemStarted",
    );
    expect(started).toHaveLength(2);
  });

  it("an execute tool call is a shell call whose args are its command; its output streams, completed ends it, later updates are absorbed", () => {
    const u = new AcpTurnUpdates();
    expect(u.accept(sleepCall)).toEqual([
      { type: "itemStarted", agentItemId: "call_1", kind: "toolCall", tool: "shell", callId: "call_1", args: '{"command":"sleep 47"}' },
    ]);
    const text = (t: string) => [{ type: "content" as const, content: { type: "text" as const, text: t } }];
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", content: text("one\n") })).toEqual([
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "one\n" },
    ]);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed", content: text("one\ntwo\n") })).toEqual([
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "two\n" },
      { type: "itemCompleted", agentItemId: "call_1", status: "completed" },
    ]);
    expect(u.isOpen("call_1")).toBe(false);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "failed" })).toEqual([]);
    expect(u.accept(sleepCall)).toEqual([]);
  });

  it("a call announced before its input (Claude Code's) starts once its input comes, with the command as args, not the placeholder title", () => {
    const u = new AcpTurnUpdates();
    // As claude-agent-acp 0.101.0 sends it to a client that asks for terminal_output: a terminal block, no output yet.
    const announced: SessionUpdate = {
      sessionUpdate: "tool_call",
      toolCallId: "toolu_1",
      title: "Terminal",
      kind: "execute",
      status: "pending",
      rawInput: {},
      content: [{ type: "terminal", terminalId: "toolu_1" }],
    };
    expect(u.accept(announced)).toEqual([]);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "toolu_1", title: "Terminal" })).toEqual([]);
    expect(
      u.accept({ sessionUpdate: "tool_call_update", toolCallId: "toolu_1", title: "sleep 47", rawInput: { command: "sleep 47", description: "wait" } }),
    ).toEqual([{ type: "itemStarted", agentItemId: "toolu_1", kind: "toolCall", tool: "shell", callId: "toolu_1", args: '{"command":"sleep 47"}' }]);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "toolu_1", status: "completed", rawOutput: "slept" })).toEqual([
      { type: "itemDelta", agentItemId: "toolu_1", field: "visibleOutput", append: "slept" },
      { type: "itemCompleted", agentItemId: "toolu_1", status: "completed" },
    ]);
  });

  it("a call that never brings its input starts at its first status, or at the permission request about it, with what the agent said", () => {
    const u = new AcpTurnUpdates();
    expect(u.accept({ sessionUpdate: "tool_call", toolCallId: "a", title: "Terminal", kind: "execute", status: "pending", rawInput: {} })).toEqual([]);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "failed" })).toEqual([
      { type: "itemStarted", agentItemId: "a", kind: "toolCall", tool: "shell", callId: "a", args: '{"command":"Terminal"}' },
      { type: "itemCompleted", agentItemId: "a", status: "failed", failureReason: "the agent reported the call failed" },
    ]);
    expect(u.accept({ sessionUpdate: "tool_call", toolCallId: "b", title: "Terminal", kind: "execute", status: "pending", rawInput: {} })).toEqual([]);
    expect(u.permissionAsked({ toolCallId: "b", title: "touch x", rawInput: { command: "touch x" } })).toEqual([
      { type: "itemStarted", agentItemId: "b", kind: "toolCall", tool: "shell", callId: "b", args: '{"command":"touch x"}' },
    ]);
    expect(u.isOpen("b")).toBe(true);
  });

  it("codex-acp's rawOutput is the output when there is no content; a failed call says its exit code", () => {
    const u = new AcpTurnUpdates();
    u.accept(sleepCall);
    expect(
      u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "failed", rawOutput: { formatted_output: "boom\n", exit_code: 2 } }),
    ).toEqual([
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "boom\n" },
      { type: "itemCompleted", agentItemId: "call_1", status: "failed", failureReason: "exit code 2" },
    ]);
  });

  it("output that does not extend what was streamed replaces it at the call's end", () => {
    const u = new AcpTurnUpdates();
    u.accept(sleepCall);
    const text = (t: string) => [{ type: "content" as const, content: { type: "text" as const, text: t } }];
    u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", content: text("draft") });
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", content: text("final") })).toEqual([]);
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed" })).toEqual([
      { type: "itemCompleted", agentItemId: "call_1", status: "completed", replaceText: "final" },
    ]);
  });

  it("terminal_output data in _meta streams as appends; a final rawOutput equal to it completes the call without a replacement", () => {
    const u = new AcpTurnUpdates();
    u.accept({ ...sleepCall, content: [{ type: "terminal", terminalId: "call_1" }] });
    const streamed = (data: string): SessionUpdate => ({
      sessionUpdate: "tool_call_update",
      toolCallId: "call_1",
      _meta: { terminal_output: { terminal_id: "call_1", data } },
    });
    expect([...u.accept(streamed("one\n")), ...u.accept(streamed("two\n"))]).toEqual([
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "one\n" },
      { type: "itemDelta", agentItemId: "call_1", field: "visibleOutput", append: "two\n" },
    ]);
    expect(
      u.accept({
        sessionUpdate: "tool_call_update",
        toolCallId: "call_1",
        status: "completed",
        rawOutput: { formatted_output: "one\ntwo\n", exit_code: 0 },
        _meta: { terminal_exit: { terminal_id: "call_1", exit_code: 0, signal: null } },
      }),
    ).toEqual([{ type: "itemCompleted", agentItemId: "call_1", status: "completed" }]);
  });

  it("a permission request about an unseen call starts its item; the tool_call that follows updates it; a forgotten call is absorbed", () => {
    const u = new AcpTurnUpdates();
    expect(
      u.permissionAsked({ toolCallId: "call_2", kind: "execute", status: "pending", title: "echo hi", rawInput: { command: ["/bin/bash", "-c", "echo hi"] } }),
    ).toEqual([{ type: "itemStarted", agentItemId: "call_2", kind: "toolCall", tool: "shell", callId: "call_2", args: '{"command":"echo hi"}' }]);
    expect(u.accept({ ...sleepCall, toolCallId: "call_2" })).toEqual([]);
    u.forget("call_2");
    expect(u.accept({ sessionUpdate: "tool_call_update", toolCallId: "call_2", status: "completed", rawOutput: { stdout: "hi" } })).toEqual([]);
  });

  it("usage_update's used is the input tokens; other updates show nothing", () => {
    const u = new AcpTurnUpdates();
    expect(u.accept({ sessionUpdate: "usage_update", used: 18, size: 258400 })).toEqual([
      { type: "usage", usage: { inputTokens: 18, outputTokens: 0, reasoningTokens: 0 } },
    ]);
    expect(u.accept({ sessionUpdate: "current_mode_update", currentModeId: "auto" })).toEqual([]);
  });

  it("a prompt answer's usage is the turn's own input, output and thought tokens; an answer without one shows none", () => {
    const usage = { inputTokens: 120, outputTokens: 8, thoughtTokens: 3, totalTokens: 131 };
    expect(promptUsage({ stopReason: "cancelled", usage } as never)).toEqual([
      { type: "usage", usage: { inputTokens: 120, outputTokens: 8, reasoningTokens: 3 } },
    ]);
    expect(promptUsage({ stopReason: "end_turn", usage: { ...usage, thoughtTokens: null } } as never)).toEqual([
      { type: "usage", usage: { inputTokens: 120, outputTokens: 8, reasoningTokens: 0 } },
    ]);
    expect(promptUsage({ stopReason: "end_turn" })).toEqual([]);
    expect(promptUsage(undefined)).toEqual([]);
  });

  it("commands and views: argv, sh -c scripts, strings; other kinds by name, else kind", () => {
    expect(commandOf({ command: ["/bin/bash", "-lc", "ls -la"] })).toBe("ls -la");
    expect(commandOf({ command: ["git", "status"] })).toBe("git status");
    expect(commandOf({ command: "make test" })).toBe("make test");
    expect(commandOf({})).toBeUndefined();
    expect(toolCallView({ toolCallId: "t", title: "Read a.ts", kind: "read", rawInput: { path: "a.ts" } })).toEqual({
      tool: "read",
      callId: "t",
      args: '{"path":"a.ts"}',
    });
    expect(toolCallView({ toolCallId: "t", title: "Fetch", kind: "fetch", name: "web_fetch" })).toEqual({
      tool: "web_fetch",
      callId: "t",
      args: '{"title":"Fetch"}',
    });
    expect(outputOf({ rawOutput: "plain" })).toBe("plain");
    expect(outputOf({})).toBeUndefined();
  });
});

describe("ACP permissions ↔ tool/approve", () => {
  const codexAcp: PermissionOption[] = [
    { optionId: "approved", name: "Yes, proceed", kind: "allow_once" },
    { optionId: "approved-execpolicy-amendment", name: "Yes, and don't ask again", kind: "allow_always" },
    { optionId: "abort", name: "No", kind: "reject_once" },
  ];

  it("offers only the MSP decisions whose option the agent offered, in MSP's order", () => {
    expect(offersOf(codexAcp)).toEqual(["approve", "approveForSession", "deny"]);
    expect(
      offersOf([
        { optionId: "n", name: "Never", kind: "reject_always" },
        { optionId: "y", name: "Yes", kind: "allow_once" },
      ]),
    ).toEqual(["approve", "denyAndStop"]);
    expect(offersOf([])).toEqual([]);
  });

  it("approved → allow_once (allow_always only when it is the one allow); denied → reject_once, else reject_always; a stop → cancelled", () => {
    expect(permissionResponse(codexAcp, "approved")).toEqual({ outcome: { outcome: "selected", optionId: "approved" } });
    expect(permissionResponse([{ optionId: "always", name: "Always", kind: "allow_always" }], "approved")).toEqual({
      outcome: { outcome: "selected", optionId: "always" },
    });
    expect(permissionResponse(codexAcp, "denied")).toEqual({ outcome: { outcome: "selected", optionId: "abort" } });
    expect(permissionResponse([{ optionId: "never", name: "Never", kind: "reject_always" }], "denied")).toEqual({
      outcome: { outcome: "selected", optionId: "never" },
    });
    expect(permissionResponse(codexAcp, "cancelled")).toEqual({ outcome: { outcome: "cancelled" } });
    expect(permissionResponse([], "approved")).toEqual({ outcome: { outcome: "cancelled" } });
  });
});

describe("ACP stopReason → MSP terminal", () => {
  it("end_turn completes; max_tokens, max_turn_requests and refusal complete with the reason kept; cancelled is ours only when we asked", () => {
    expect(turnEndOf("end_turn", false)).toEqual({ terminal: "completed" });
    for (const r of ["max_tokens", "max_turn_requests", "refusal"] as const) expect(turnEndOf(r, false)).toEqual({ terminal: "completed", reason: r });
    expect(turnEndOf("cancelled", true)).toEqual({ terminal: "cancelled" });
    expect(turnEndOf("cancelled", false)).toEqual({ terminal: "completed", reason: "cancelled by the agent" });
    expect(turnEndOf("bogus" as never, false)).toMatchObject({ terminal: "failed" });
  });
});
