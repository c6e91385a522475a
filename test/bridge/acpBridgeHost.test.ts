/**
 * `muse serve --agent acp -- <codex-acp>`, a real host process bridged to a real ACP agent
 * (@zed-industries/codex-acp 0.16.0's native binary, the pinned devDependency) with the scripted
 * Responses server as its model, driven by the SDK's client over the host's stdio:
 * - a turn that completes streams its message as deltas;
 * - a Stop during `sleep 47` ends the turn `cancelled` (cause `user`) only once the sleep is gone
 *   (checked by pid), its shell toolCall closed `cancelled`; straight to codex-acp the same sleep
 *   outlives the agent's `cancelled` (test/bridge/codexAcpAlone.test.ts pins that);
 * - the agent's permission requests asked as `tool/approve` (approve, deny, a session grant where
 *   the agent offers `allow_always`, a Stop while asking);
 * - an agent that dies mid-turn fails the turn, and its sleep is reaped;
 * - `turn/steer` is refused `steering_unsupported`;
 * and the recorded wire keeps every MSP invariant (`checkTranscript`). Waits are bounded and
 * generous; nothing asserts a duration.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MspError, type ApprovalDecision, type LedgerItem, type ToolCallItem } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnAcpBridgedHost } from "../fixtures/acp/acpBridgedHost.js";
import { makeCodexHome, type CodexHomeOptions } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ModelRequest, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { processGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pollUntil } from "../helpers/poll.js";
import { pidBelow, toolItems } from "../helpers/bridgedHostItems.js";

const WAIT_MS = 30_000;
const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

/** The bridged host, its wire recorded, with Codex's home, work dir and model set up for `script`. */
async function bridged(
  script: (request: ModelRequest) => ScriptedReply,
  homeOptions: Omit<CodexHomeOptions, "baseUrl"> = {},
): Promise<{ host: SpawnedHost; wire: string[] }> {
  const model = await startResponsesServer(script);
  cleanups.push(() => model.close());
  const home = makeCodexHome({ baseUrl: model.baseUrl, ...homeOptions });
  cleanups.push(() => home.remove());
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  const data = mkdtempSync(join(repoRoot, ".tmp", "acp-data-"));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  const wire: string[] = [];
  const host = spawnAcpBridgedHost(home, data, {
    defaultTimeoutMs: WAIT_MS,
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
  });
  cleanups.push(() => host.close());
  return { host, wire };
}

/** codex-acp asks before an escalated command: Codex's on-request policy in a workspace-write sandbox (its `auto` mode). */
const onRequest = { approvalPolicy: "on-request", sandboxMode: "workspace-write" } as const;
const escalated =
  (cmd: string) =>
  (r: ModelRequest): ScriptedReply =>
    r.hasToolOutput ? { kind: "message", text: "Done." } : { kind: "exec", cmd, escalate: true };

/** Resolves once `predicate` holds, polled; rejects after {@link WAIT_MS}. */
const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** One turn whose escalated `cmd` the agent asks about, answered `decision`: the offers, the terminal and the call. */
async function answeredTurn(cmd: string, decision: ApprovalDecision) {
  const { host, wire } = await bridged(escalated(cmd), onRequest);
  const offers: Array<readonly string[] | undefined> = [];
  host.onApproval((request) => {
    offers.push(request.decisions);
    return { decision };
  });
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input });
  const { turnId } = await turn.accepted;
  const terminal = await turn.completed;
  return { host, wire, offers, terminal, tool: toolItems(host, turnId)[0] };
}

describe("muse serve --agent acp -- codex-acp (real host, real codex-acp 0.16.0)", { timeout: 120_000 }, () => {
  it("a turn that completes: its message streamed as item/delta appends, the turn completed", async () => {
    const text = "Hello from the scripted model, streamed in chunks.";
    const { host, wire } = await bridged(() => ({ kind: "message", text, reasoning: "A greeting is wanted." }));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;

    expect(terminal).toMatchObject({ terminal: "completed", reason: "completed" });
    expect(terminal.usage?.inputTokens).toBeGreaterThan(0);
    const items = host.items.itemsOf(turnId);
    const message = items.find((i) => i.kind === "message" && i.text.includes(text));
    expect(message).toMatchObject({ status: "completed" });
    expect(items.find((i) => i.kind === "reasoning")).toMatchObject({ status: "completed", text: expect.stringContaining("A greeting is wanted.") });
    await host.close();
    const deltas = wire
      .map((line) => JSON.parse((JSON.parse(line) as { raw: string }).raw) as { method?: string; params?: Record<string, unknown> })
      .filter((m) => m.method === "item/delta" && m.params?.["itemId"] === message?.itemId);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((m) => m.params?.["append"]).join("")).toBe(message?.kind === "message" ? message.text : "");
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop during sleep 47: cancelled, cause user, the shell call closed cancelled, the sleep gone (by pid) when the terminal arrives", async () => {
    const { host, wire } = await bridged(execThenMessage("sleep 47"));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    let sleepPid = 0;
    await poll(() => (sleepPid = pidBelow(host.pid, "sleep 47")) > 0 && toolItems(host, turnId).length > 0, "the sleep running below the bridged host");
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(sleepPid);
    });

    const stopAt = Date.now();
    const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });
    const stopMs = Date.now() - stopAt;

    expect(ack).toBe("accepted");
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" }, reason: "cancelled during tool execution" });
    expect(goneAtTerminal).toBe(true);
    const [tool] = toolItems(host, turnId);
    expect(tool).toMatchObject({ tool: "shell", status: "cancelled", failureReason: "turn cancelled" });
    expect(JSON.parse(tool!.args)).toEqual({ command: "sleep 47" });
    console.log(`acp bridged stop: turn/cancel → cancelled terminal ${stopMs} ms`);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("turn/steer is refused steering_unsupported, and the turn goes on", async () => {
    const { host, wire } = await bridged(execThenMessage("sleep 41"));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await poll(() => pidBelow(host.pid, "sleep 41") > 0, "the sleep");

    const refused = await host.command("turn/steer", { sessionId, turnId, input: [{ type: "text", text: "use pnpm" }] }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(MspError.is(refused) && refused.kind === "commandRejected" && refused.data["reason"]).toBe("steering_unsupported");
    const info = await host.command("host/info", {});
    expect((info as { capabilities: Record<string, unknown> }).capabilities["steering"]).toBe(false);
    expect((await turn.cancel({ timeoutMs: WAIT_MS })).turnCompleted.terminal).toBe("cancelled");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("the agent's permission request is the session's tool/approve: approve runs the command, its item approved and completed", async () => {
    const { host, wire, offers, terminal, tool } = await answeredTurn("echo approved-ran", "approve");

    expect(terminal.terminal).toBe("completed");
    // codex-acp offers allow_once, allow_always and reject_once.
    expect(offers).toEqual([["approve", "approveForSession", "deny"]]);
    expect(tool).toMatchObject({ tool: "shell", status: "completed", approval: "approved" });
    expect(tool?.visibleOutput).toContain("approved-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("deny: the command never runs, its item failed denied by the user; codex-acp then ends its turn cancelled by itself: completed, reason cancelled by the agent", async () => {
    const { host, wire, terminal, tool } = await answeredTurn("echo never-ran", "deny");

    // codex-acp's reject_once option ("abort") ends its prompt turn `cancelled`: no Stop was asked for, so no cause is named.
    expect(terminal).toMatchObject({ terminal: "completed", reason: "cancelled by the agent" });
    expect(terminal.cause).toBeUndefined();
    expect(tool).toMatchObject({ status: "failed", approval: "denied", failureReason: "denied by the user" });
    expect(tool?.visibleOutput).not.toContain("never-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a session grant (the agent offers allow_always): the next identical call runs without a question, naming the grant", async () => {
    // Requests 1 and 3 ask for the same escalated command; 2 and 4 end each turn.
    const script = (r: ModelRequest): ScriptedReply =>
      r.n % 2 === 1 ? { kind: "exec", cmd: "echo granted-ran", escalate: true } : { kind: "message", text: "Done." };
    const { host, wire } = await bridged(script, onRequest);
    let asked = 0;
    host.onApproval(() => {
      asked += 1;
      return { decision: "approveForSession" };
    });
    const { sessionId } = await host.command("session/create", {});
    const tools: Array<ToolCallItem & LedgerItem> = [];
    for (let i = 0; i < 2; i++) {
      const turn = host.startTurn({ sessionId, input });
      const { turnId } = await turn.accepted;
      expect((await turn.completed).terminal).toBe("completed");
      tools.push(toolItems(host, turnId)[0]!);
    }

    expect(asked).toBe(1);
    expect(tools.map((t) => [t.status, t.approval])).toEqual([
      ["completed", "approved"],
      ["completed", "approved"],
    ]);
    expect(tools[0]?.grant?.grantId).toBeDefined();
    expect(tools[1]?.grant?.grantId).toBe(tools[0]?.grant?.grantId);
    expect(tools[1]?.visibleOutput).toContain("granted-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop while the agent asks: the question withdrawn, the agent answered cancelled, the call never runs, the turn cancelled awaiting approval", async () => {
    const { host, wire } = await bridged(escalated("sleep 43"), onRequest);
    let asked = false;
    host.onApproval(() => {
      asked = true;
      return new Promise(() => {});
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await poll(() => asked, "the question");

    const { turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });

    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" }, reason: "cancelled while awaiting approval" });
    const [tool] = toolItems(host, turnId);
    expect(tool).toMatchObject({ status: "cancelled", approval: "cancelled" });
    expect(descendantsOf(host.pid, scanProcesses(true)).filter((p) => p.command.includes("sleep 43"))).toEqual([]);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that dies mid-turn: the turn ends failed, its tool call closed failed, its sleep reaped", async () => {
    const { host, wire } = await bridged(execThenMessage("sleep 45"));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    let sleepPid = 0;
    await poll(() => (sleepPid = pidBelow(host.pid, "sleep 45")) > 0 && toolItems(host, turnId).length > 0, "the sleep");
    // The agent: the host's child whose command is codex-acp.
    const agentPid = [...scanProcesses(true).values()].find((p) => p.ppid === host.pid && p.command.includes("codex-acp"))?.pid ?? 0;
    expect(agentPid).toBeGreaterThan(0);
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(sleepPid);
    });

    process.kill(agentPid, "SIGKILL");
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toContain("ACP agent");
    expect(goneAtTerminal).toBe(true);
    expect(toolItems(host, turnId)[0]).toMatchObject({ status: "failed" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
