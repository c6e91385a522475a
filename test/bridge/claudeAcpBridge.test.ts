/**
 * `muse serve --agent acp -- claude-agent-acp`: a real host process bridged to Claude Code through
 * its ACP adapter (@agentclientprotocol/claude-agent-acp 0.101.0, the pinned devDependency, and the
 * Claude Code binary its SDK ships), with the scripted Messages server as its model, driven by the
 * SDK's client over the host's stdio:
 * - a turn that completes streams its message as deltas and counts the prompt's usage;
 * - a Stop during a command ends the turn `cancelled` (cause `user`) only once its `sleep` is gone
 *   (checked by pid);
 * - Claude Code's permission requests are the session's `tool/approve`: approve runs the command,
 *   deny does not, a Stop while asking answers the agent `cancelled` and nothing runs;
 * and the recorded wire keeps every MSP invariant (`checkTranscript`). Waits are bounded and
 * generous; nothing asserts a duration.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalDecision } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnAcpBridgedHost } from "../fixtures/acp/acpBridgedHost.js";
import { claudeAcpCommand, makeClaudeHome, type ClaudeTestHome } from "../fixtures/acp/claudeAcpHome.js";
import { bashThenText, startMessagesServer, type MessagesReply, type MessagesRequest } from "../fixtures/anthropic/messagesServer.js";
import { processGone } from "../helpers/processGone.js";
import { pollUntil } from "../helpers/poll.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pidBelow, toolItems } from "../helpers/bridgedHostItems.js";

const WAIT_MS = 30_000;
const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

/** The bridged host on Claude Code, its wire recorded, with a fresh home whose model plays `script`. */
async function bridged(script: (request: MessagesRequest) => MessagesReply): Promise<{ host: SpawnedHost; wire: string[]; home: ClaudeTestHome }> {
  const model = await startMessagesServer(script);
  cleanups.push(() => model.close());
  const home = makeClaudeHome(model.baseUrl);
  cleanups.push(() => home.remove());
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  const data = mkdtempSync(join(repoRoot, ".tmp", "claude-data-"));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  const wire: string[] = [];
  const host = spawnAcpBridgedHost(home, data, {
    command: claudeAcpCommand(),
    defaultTimeoutMs: WAIT_MS,
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
  });
  cleanups.push(() => host.close());
  return { host, wire, home };
}

const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** Whether any process below the host runs a command line that contains `text`. */
function runsBelow(host: SpawnedHost, text: string): boolean {
  return descendantsOf(host.pid, scanProcesses(true)).some((p) => p.command.includes(text));
}

/** One turn whose file-changing `command` Claude Code asks about, answered `decision`: the offers, the terminal, the call and the home. */
async function answeredTurn(command: string, decision: ApprovalDecision) {
  const { host, wire, home } = await bridged(bashThenText(command));
  const offers: Array<readonly string[] | undefined> = [];
  host.onApproval((request) => {
    offers.push(request.decisions);
    return { decision };
  });
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input });
  const { turnId } = await turn.accepted;
  const terminal = await turn.completed;
  return { host, wire, home, offers, terminal, tool: toolItems(host, turnId)[0] };
}

describe("muse serve --agent acp -- claude-agent-acp (real host, real Claude Code adapter 0.101.0)", { timeout: 120_000 }, () => {
  it("a turn that completes: its message streamed as item/delta appends, the turn completed with the prompt's usage", async () => {
    const text = "Hello from the scripted Messages model, streamed in parts.";
    const { host, wire } = await bridged(() => ({ kind: "text", text }));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;

    expect(terminal).toMatchObject({ terminal: "completed", reason: "completed" });
    expect(terminal.usage).toMatchObject({ inputTokens: 12, outputTokens: 8 });
    const message = host.items.itemsOf(turnId).find((i) => i.kind === "message" && i.text.includes(text));
    expect(message).toMatchObject({ status: "completed" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop during a command: cancelled, cause user, the sleep gone (by pid) when the terminal arrives, the call closed", async () => {
    const { host, wire } = await bridged(bashThenText("echo started; sleep 47; echo done"));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    let sleepPid = 0;
    await poll(() => (sleepPid = pidBelow(host.pid, "sleep 47")) > 0 && toolItems(host, turnId).length > 0, "the sleep running below the bridged host");
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(sleepPid);
    });

    const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });

    expect(ack).toBe("accepted");
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(goneAtTerminal).toBe(true);
    const [tool] = toolItems(host, turnId);
    expect(tool).toMatchObject({ tool: "shell", status: "cancelled", failureReason: "turn cancelled" });
    expect(JSON.parse(tool!.args)).toEqual({ command: "echo started; sleep 47; echo done" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("approve: Claude Code's permission request is the session's tool/approve, and the command runs", async () => {
    const { host, wire, home, offers, terminal, tool } = await answeredTurn("touch approved.txt && echo approved-ran", "approve");

    expect(terminal.terminal).toBe("completed");
    // Both model requests of the turn are counted: the command's and the answer's (12 in, 8 out each).
    expect(terminal.usage).toMatchObject({ inputTokens: 24, outputTokens: 16 });
    expect(offers).toEqual([["approve", "deny"]]);
    expect(tool).toMatchObject({ tool: "shell", status: "completed", approval: "approved" });
    expect(tool?.visibleOutput).toContain("approved-ran");
    expect(existsSync(join(home.workDir, "approved.txt"))).toBe(true);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("deny: the command never runs, its item failed denied by the user", async () => {
    const { host, wire, home, terminal, tool } = await answeredTurn("touch denied.txt && echo never-ran", "deny");

    // Claude Code goes on after a rejection: its model hears it and ends the turn.
    expect(terminal).toMatchObject({ terminal: "completed", reason: "completed" });
    expect(tool).toMatchObject({ status: "failed", approval: "denied", failureReason: "denied by the user" });
    expect(tool?.visibleOutput).not.toContain("never-ran");
    expect(existsSync(join(home.workDir, "denied.txt"))).toBe(false);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop while Claude Code asks: the question withdrawn, the agent answered cancelled, the command never runs", async () => {
    const { host, wire, home } = await bridged(bashThenText("touch stopped.txt && sleep 43"));
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
    expect(toolItems(host, turnId)[0]).toMatchObject({ status: "cancelled", approval: "cancelled" });
    expect(runsBelow(host, "sleep 43")).toBe(false);
    expect(existsSync(join(home.workDir, "stopped.txt"))).toBe(false);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
