/**
 * `muse serve --agent codex --stdio`, a real host process bridged to the real Codex binary
 * (@openai/codex 0.169.0, the pinned devDependency) with the scripted Responses server as its
 * model, driven by the SDK's client over the host's stdio:
 * (a Stop during `sleep 47`, beside Codex's own stop: test/bridge/codexStopSideBySide.test.ts)
 * - a turn that completes streams its message as deltas, with the model's usage;
 * - Codex's approval requests asked as `tool/approve` (approve, deny, denyAndStop, a Stop while
 *   asking; an escalated command, for which Codex lists no `acceptForSession`, is offered no
 *   `approveForSession`);
 * and the recorded wire keeps every MSP invariant (`checkTranscript`). Waits are bounded and
 * generous; nothing asserts a duration (the measured ones are printed).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalDecision } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome, type CodexHomeOptions } from "../fixtures/codex/codexHome.js";
import { startResponsesServer, type ModelRequest, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { pollUntil } from "../helpers/poll.js";
import { toolItems } from "../helpers/bridgedHostItems.js";

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
  const data = tempDataDir();
  cleanups.push(() => data.remove());
  const wire: string[] = [];
  const host = spawnBridgedHost(home, data.dir, {
    defaultTimeoutMs: WAIT_MS,
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
  });
  cleanups.push(() => host.close());
  return { host, wire };
}

/** Codex asks before an escalated command: the scripted model asks for the escalation. */
const onRequest = { approvalPolicy: "on-request", sandboxMode: "workspace-write" } as const;
const escalated =
  (cmd: string) =>
  (r: ModelRequest): ScriptedReply =>
    r.hasToolOutput ? { kind: "message", text: "Done." } : { kind: "exec", cmd, escalate: true };

/** Resolves once `predicate` holds, polled; rejects after {@link WAIT_MS}. */
const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** One turn whose escalated `cmd` Codex asks about, answered `decision`: the tools asked about, the terminal and the call. */
async function answeredTurn(cmd: string, decision: ApprovalDecision) {
  const { host, wire } = await bridged(escalated(cmd), onRequest);
  const asked: string[] = [];
  host.onApproval((request) => {
    asked.push(request.tool);
    return { decision };
  });
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input });
  const { turnId } = await turn.accepted;
  const terminal = await turn.completed;
  return { host, wire, asked, terminal, tool: toolItems(host, turnId)[0] };
}

describe("muse serve --agent codex (real host, real codex app-server 0.169.0)", { timeout: 120_000 }, () => {
  it("a turn that completes: its message streamed as item/delta appends, with usage", async () => {
    const text = "Hello from the scripted model, streamed in chunks.";
    const { host, wire } = await bridged(() => ({ kind: "message", text, reasoning: "A greeting is wanted." }));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("completed");
    expect(terminal.usage).toEqual({ inputTokens: 11, outputTokens: 4, reasoningTokens: 3 });
    const message = host.items.itemsOf(turnId).find((i) => i.kind === "message");
    expect(message).toMatchObject({ status: "completed", text });
    await host.close();
    const deltas = wire
      .map((line) => JSON.parse((JSON.parse(line) as { raw: string }).raw) as { method?: string; params?: Record<string, unknown> })
      .filter((m) => m.method === "item/delta" && m.params?.["itemId"] === message?.itemId);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((m) => m.params?.["append"]).join("")).toBe(text);
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("Codex's approval request is the session's tool/approve: approve runs the command, its item approved and completed", async () => {
    const { host, wire, asked, terminal, tool } = await answeredTurn("echo approved-ran", "approve");

    expect(terminal.terminal).toBe("completed");
    expect(asked).toEqual(["shell"]);
    expect(tool).toMatchObject({ status: "completed", approval: "approved" });
    expect(tool?.visibleOutput).toContain("approved-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("deny: the command never runs, its item failed denied by the user, and the turn goes on to complete", async () => {
    const { host, wire, terminal, tool } = await answeredTurn("echo never-ran", "deny");

    expect(terminal.terminal).toBe("completed");
    expect(tool).toMatchObject({ status: "failed", approval: "denied", failureReason: "denied by the user" });
    expect(tool?.visibleOutput).not.toContain("never-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("Codex lists no acceptForSession for an escalated command: no approveForSession is offered, and the next identical call is asked again", async () => {
    // Requests 1 and 3 ask for the same escalated command; 2 and 4 end each turn.
    const script = (r: ModelRequest): ScriptedReply =>
      r.n % 2 === 1 ? { kind: "exec", cmd: "echo asked-ran", escalate: true } : { kind: "message", text: "Done." };
    const { host, wire } = await bridged(script, onRequest);
    const offers: Array<readonly string[] | undefined> = [];
    host.onApproval((request) => {
      offers.push(request.decisions);
      return { decision: "approve" };
    });
    const { sessionId } = await host.command("session/create", {});
    for (let i = 0; i < 2; i++) {
      const turn = host.startTurn({ sessionId, input });
      const { turnId } = await turn.accepted;
      expect((await turn.completed).terminal).toBe("completed");
      expect(toolItems(host, turnId)[0]).toMatchObject({ status: "completed", approval: "approved" });
    }

    expect(offers).toHaveLength(2);
    for (const offered of offers) expect(offered).not.toContain("approveForSession");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("denyAndStop: the command never runs, its item denied, and the turn ends cancelled (cause user)", async () => {
    const { host, wire, terminal, tool } = await answeredTurn("echo stopped-never-ran", "denyAndStop");

    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(tool?.approval).toBe("denied");
    expect(tool?.visibleOutput ?? "").not.toContain("stopped-never-ran");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop while Codex asks: the question is withdrawn, the call never runs, the turn ends cancelled awaiting approval", async () => {
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
});
