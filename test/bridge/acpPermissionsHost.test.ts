/**
 * What the ACP agent hears when the bridge answers its `session/request_permission`, seen from the
 * agent's side: test/fixtures/acp/askingAgent.ts (built on the ACP SDK's own `agent()`) offers all
 * four option kinds and writes down every answer and cancel it gets, behind a real
 * `muse serve --agent acp` host driven over stdio:
 * - the question offers the four MSP decisions;
 * - a Stop while asking: the request is answered `cancelled` before `session/cancel` arrives;
 * - `approveForSession`: the agent hears `allow_once` (the host keeps the exact grant);
 * - `denyAndStop`: the agent hears `cancelled`, and the turn ends cancelled, cause user.
 */
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalDecision } from "../../src/index.js";
import { checkTranscript, formatTranscriptEntry, parseTranscript, recordingChannel, type TranscriptLine } from "../../src/testing/index.js";
import { spawnAcpBridgedHost } from "../fixtures/acp/acpBridgedHost.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pollUntil } from "../helpers/poll.js";

const WAIT_MS = 30_000;
const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

/** The bridged host on the asking agent, its wire recorded, and what the agent heard so far. */
function askingHost(env: NodeJS.ProcessEnv = {}) {
  // The agent needs no model: the home only gives it a working directory under .tmp/.
  const home = makeCodexHome({ baseUrl: "http://127.0.0.1:9/v1" });
  cleanups.push(() => home.remove());
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  const data = mkdtempSync(join(repoRoot, ".tmp", "acp-data-"));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  const log = join(home.workDir, "heard.jsonl");
  const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
  const wire: string[] = [];
  const host = spawnAcpBridgedHost(home, data, {
    defaultTimeoutMs: WAIT_MS,
    command: [process.execPath, "--import", tsx, join(repoRoot, "test/fixtures/acp/askingAgent.ts")],
    env: { ASKING_AGENT_LOG: log, ...env },
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
  });
  cleanups.push(() => host.close());
  const heard = (): Array<Record<string, unknown>> =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  return { host, wire, heard };
}

/** Resolves once `predicate` holds, polled; rejects after {@link WAIT_MS}. */
const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** The `item/completed` notifications of item `itemId` on the recorded wire. */
function completionsOf(wire: readonly string[], itemId: string | undefined): TranscriptLine[] {
  return parseTranscript(wire).filter(
    (l) => l.message["method"] === "item/completed" && (l.message["params"] as { item?: { itemId?: string } } | undefined)?.item?.itemId === itemId,
  );
}

/** One turn answered `decision`: the offers, the terminal, the tool item, and what the agent heard once it had its answer. */
async function answered(decision: ApprovalDecision) {
  const { host, wire, heard } = askingHost();
  const offers: Array<readonly string[] | undefined> = [];
  host.onApproval((request) => {
    offers.push(request.decisions);
    return { decision };
  });
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input });
  const { turnId } = await turn.accepted;
  const terminal = await turn.completed;
  await poll(() => heard().some((e) => e["event"] === "answer"), "the agent's answer");
  const tool = host.items.itemsOf(turnId).find((i) => i.kind === "toolCall");
  return { host, wire, offers, terminal, tool, heard: heard() };
}

describe("the ACP agent's side of tool/approve (asking agent built on the ACP SDK's agent())", { timeout: 120_000 }, () => {
  it("a Stop while asking: the agent's request is answered cancelled before session/cancel reaches it, and the turn ends cancelled awaiting approval", async () => {
    const { host, wire, heard } = askingHost();
    let asked = false;
    host.onApproval(() => {
      asked = true;
      return new Promise(() => {});
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    await turn.accepted;
    await poll(() => asked, "the question");

    const { turnCompleted } = await turn.cancel({ timeoutMs: WAIT_MS });
    await poll(() => heard().length >= 2, "the agent's answer and cancel");

    expect(turnCompleted).toMatchObject({ terminal: "cancelled", cause: { kind: "user" }, reason: "cancelled while awaiting approval" });
    expect(heard()).toEqual([{ event: "answer", outcome: { outcome: "cancelled" } }, { event: "cancel" }]);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that dies while it asks: the question is withdrawn and its item closed once, the turn failed; a late answer runs nothing", async () => {
    const { host, wire } = askingHost({ ASKING_AGENT_DIES: "1" });
    let late: ((answer: { decision: ApprovalDecision }) => void) | undefined;
    host.onApproval(() => new Promise((resolve) => (late = resolve)));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;

    const terminal = await turn.completed;
    late?.({ decision: "approve" });
    await host.command("host/info", {});

    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toContain("ACP agent");
    expect(late).toBeDefined();
    const tool = host.items.itemsOf(turnId).find((i) => i.kind === "toolCall");
    expect(tool).toMatchObject({ status: "cancelled", approval: "cancelled" });
    await host.close();
    // One item/completed for the call, none after the terminal, and every question closed (checkTranscript's invariants).
    expect(completionsOf(wire, tool?.itemId)).toHaveLength(1);
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that ends its turn while it asks: the question is withdrawn, the agent answered cancelled, the item closed once, the turn completed", async () => {
    const { host, wire, heard } = askingHost({ ASKING_AGENT_ENDS: "1" });
    let late: ((answer: { decision: ApprovalDecision }) => void) | undefined;
    host.onApproval(() => new Promise((resolve) => (late = resolve)));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;

    const terminal = await turn.completed;
    late?.({ decision: "approve" });
    await poll(() => heard().length > 0, "the agent's answer");

    expect(terminal.terminal).toBe("completed");
    expect(late).toBeDefined();
    expect(heard()).toEqual([{ event: "answer", outcome: { outcome: "cancelled" } }]);
    const tool = host.items.itemsOf(turnId).find((i) => i.kind === "toolCall");
    expect(tool).toMatchObject({ status: "cancelled", approval: "cancelled" });
    await host.close();
    expect(completionsOf(wire, tool?.itemId)).toHaveLength(1);
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("all four option kinds offer all four decisions; approveForSession is the agent's allow_once, the host keeping the grant", async () => {
    const { host, wire, offers, terminal, tool, heard } = await answered("approveForSession");

    expect(offers).toEqual([["approve", "approveForSession", "deny", "denyAndStop"]]);
    expect(heard).toEqual([{ event: "answer", outcome: { outcome: "selected", optionId: "once" } }]);
    expect(terminal.terminal).toBe("completed");
    expect(tool).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "asked\n" });
    expect(tool?.kind === "toolCall" && tool.grant?.grantId).toBeTruthy();
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("deny is the agent's reject_once; the turn completes", async () => {
    const { host, wire, terminal, tool, heard } = await answered("deny");

    expect(heard).toEqual([{ event: "answer", outcome: { outcome: "selected", optionId: "no" } }]);
    expect(terminal.terminal).toBe("completed");
    expect(tool).toMatchObject({ status: "failed", approval: "denied", failureReason: "denied by the user" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("denyAndStop: the agent hears cancelled, and the turn ends cancelled, cause user", async () => {
    const { host, wire, terminal, tool, heard } = await answered("denyAndStop");

    expect(heard[0]).toEqual({ event: "answer", outcome: { outcome: "cancelled" } });
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(tool).toMatchObject({ approval: "denied" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
