import { afterEach, describe, expect, it } from "vitest";
import { cancelTurn, MspError, type LedgerItem, type ToolCallItem } from "../../src/index.js";
import { checkTranscriptParts } from "../../src/testing/index.js";
import { processGone } from "../helpers/processGone.js";
import { crashHost, killGroups, model, startHost, tempDataDir, until, type HostRun } from "../helpers/referenceHost.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function run(modelName: string, extra: string[] = []): HostRun & { data: string } {
  const data = tempDataDir();
  const r = startHost(model(modelName), data.dir, extra);
  cleanups.push(data.remove, () => r.host.close().then(() => undefined));
  return { ...r, data: data.dir };
}

/** Close the hosts, then check their recorded wire against MSP's invariants, as one history. */
async function expectWellFormed(...runs: HostRun[]): Promise<void> {
  for (const r of runs) await r.host.close();
  const check = checkTranscriptParts(runs.map((r) => r.wire));
  expect(check.flatMap((part) => part.problems)).toEqual([]);
  // MSP puts emittedAtMs on the notification envelope, beside params (as the seed's wire shows).
  for (const line of runs.flatMap((r) => r.wire)) {
    const message = JSON.parse((JSON.parse(line) as { raw: string }).raw) as {
      method?: string;
      id?: unknown;
      params?: Record<string, unknown>;
      emittedAtMs?: unknown;
    };
    if (message.method === undefined || message.id !== undefined) continue;
    expect(typeof message.emittedAtMs, line).toBe("number");
    expect(message.params?.["emittedAtMs"], line).toBeUndefined();
  }
  expect(runs.every((r) => r.wire.length > 0)).toBe(true);
}

function toolItems(r: HostRun, turnId: string): Array<ToolCallItem & LedgerItem> {
  return r.host.items.itemsOf(turnId).filter((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
}

describe("SDK against the reference host (real processes)", () => {
  it("cancels during the shell tool: output kept, terminal cancelled, shell and grandchild gone", async () => {
    const r = run("shell-sleep.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await until(r.host, () => /grandchild \d+/.test(toolItems(r, turnId)[0]?.visibleOutput ?? ""), "the grandchild's output");
    const output = toolItems(r, turnId)[0]?.visibleOutput ?? "";
    const shellPid = Number(/started (\d+)/.exec(output)?.[1]);
    const grandchildPid = Number(/grandchild (\d+)/.exec(output)?.[1]);
    expect(processGone(grandchildPid)).toBe(false);

    const ack = await r.host.command("turn/cancel", { sessionId, turnId });
    expect(ack.status).toBe("accepted");
    const terminal = await r.host.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.reason).toBe("cancelled during tool execution");
    expect(terminal.cause).toEqual({ kind: "user" });
    const tool = toolItems(r, turnId)[0];
    expect(tool?.status).toBe("cancelled");
    expect(tool?.synthesized).toBeUndefined();
    expect(tool?.visibleOutput).toContain(`started ${shellPid}`);
    expect(processGone(shellPid)).toBe(true);
    expect(processGone(grandchildPid)).toBe(true);
    await expectWellFormed(r);
  });

  it("cancels mid-stream: the salvaged message is marked interrupted and its tool call dropped", async () => {
    const r = run("slow-text.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await until(r.host, () => r.host.items.itemsOf(turnId).some((i) => i.kind === "message" && i.text.length >= 8), "some streamed text");
    const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: 10_000 });
    expect(ack).toBe("accepted");
    expect(terminal.reason).toBe("cancelled during model stream");
    const items = r.host.items.itemsOf(turnId);
    const message = items.find((i) => i.kind === "message");
    expect(message?.kind === "message" && message.interrupted).toBe(true);
    expect(message?.kind === "message" && "This answer streams slowly".startsWith(message.text.slice(0, 8))).toBe(true);
    expect(items.some((i) => i.kind === "toolCall")).toBe(false);
    await expectWellFormed(r);
  });

  it("drains a tool that ignores SIGTERM (killed after the grace) and closes scheduled calls as aborted before dispatch", async () => {
    const r = run("shell-stubborn.json", ["--kill-grace-ms", "300"]);
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await until(r.host, () => /stubborn \d+/.test(toolItems(r, turnId)[0]?.visibleOutput ?? ""), "the stubborn tool's output");
    const pid = Number(/stubborn (\d+)/.exec(toolItems(r, turnId)[0]?.visibleOutput ?? "")?.[1]);
    const sent = performance.now();
    const { turnCompleted: terminal } = await turn.cancel({ timeoutMs: 10_000 });
    expect(performance.now() - sent).toBeGreaterThanOrEqual(250);
    expect(terminal.terminal).toBe("cancelled");
    const [running, scheduled] = toolItems(r, turnId);
    expect(running?.status).toBe("cancelled");
    expect(scheduled?.status).toBe("cancelled");
    expect(scheduled?.failureReason).toBe("tool call aborted before dispatch");
    expect(processGone(pid)).toBe(true);
    await expectWellFormed(r);
  });

  it("keepInbox keeps a queued turn; the default discards it with its own cancelled terminal", async () => {
    const r = run("shell-sleep.json");
    const { sessionId } = await r.host.command("session/create", {});
    const first = r.host.startTurn({ sessionId, input });
    const queued = r.host.startTurn({ sessionId, input });
    expect((await queued.accepted).disposition).toBe("queued");
    const { turnId } = await first.accepted;
    await until(r.host, () => toolItems(r, turnId).length > 0, "the first turn's tool");
    await first.cancel({ keepInbox: true });
    // The queued turn survives: it starts and runs its own tool.
    const queuedId = (await queued.accepted).turnId;
    await until(r.host, () => toolItems(r, queuedId).length > 0, "the queued turn to run");
    expect(r.host.turns.get(queuedId)).toBeUndefined();

    const third = r.host.startTurn({ sessionId, input });
    expect((await third.accepted).disposition).toBe("queued");
    await queued.cancel();
    const discarded = await third.waitForTerminal({ timeoutMs: 10_000 });
    expect(discarded.terminal).toBe("cancelled");
    expect(discarded.reason).toBe("discarded from inbox");
    expect((await queued.completed).reason).toBe("cancelled during tool execution");
    await expectWellFormed(r);
  });

  it("a cancel after completion gets already_terminal and resolves with the turn's own terminal", async () => {
    const r = run("hello.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const done = await turn.completed;
    expect(done.terminal).toBe("completed");
    const raw = await r.host.command("turn/cancel", { sessionId, turnId: done.turnId }).catch((e: unknown) => e);
    expect(MspError.is(raw) && raw.isAlreadyTerminal()).toBe(true);
    const outcome = await cancelTurn(r.host, { sessionId, turnId: done.turnId });
    expect(outcome).toEqual({ ack: "already_terminal", turnCompleted: done });
    const stale = await cancelTurn(r.host, { sessionId, turnId: "0198f0aa-0000-7000-8000-000000000000" }).catch((e: unknown) => e);
    expect(MspError.is(stale) && stale.kind === "commandRejected" && stale.data["reason"]).toBe("unknown_turn");
    await expectWellFormed(r);
  });

  it("SIGKILL mid-turn: waits settle connectionClosed; a restart on the same data dir replays the turn as failed", async () => {
    const r = run("shell-sleep.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    await until(r.host, () => /grandchild/.test(toolItems(r, turnId)[0]?.visibleOutput ?? ""), "the tool and its grandchild to run");
    const lastCursor = r.host.lastViewCursor(sessionId);
    expect(lastCursor).toMatch(new RegExp(`^v:${sessionId}:\\d+$`));
    const seenBefore = r.host.items.itemsOf(turnId).length;
    expect(seenBefore).toBeGreaterThan(0);
    const waiting = r.host.turns.terminalOf(turnId, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    const orphans = crashHost(r.host.pid);
    cleanups.push(() => killGroups(orphans));
    expect(orphans.length).toBeGreaterThan(0);
    const error = (await waiting) as MspError<"connectionClosed">;
    expect(error.kind).toBe("connectionClosed");
    expect(error.data["signal"]).toBe("SIGKILL");
    // Closed: the ledger is released, the last cursor stays readable for the resume below.
    expect(r.host.items.itemsOf(turnId)).toEqual([]);
    expect(r.host.lastViewCursor(sessionId)).toBe(lastCursor);

    const again = startHost(model("shell-sleep.json"), r.data);
    cleanups.push(() => again.host.close().then(() => undefined));
    const replayed: string[] = [];
    again.host.onNotification((n) => replayed.push(n.method));
    const resumed = await again.host.command("session/resume", { sessionId, afterCursor: lastCursor as string });
    expect(resumed.replayed).toBeGreaterThan(0);
    const terminal = await again.host.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toBe("host restarted");
    expect(replayed.at(-1)).toBe("turn/completed");
    expect(replayed.filter((m) => m === "turn/completed")).toHaveLength(1);
    await expectWellFormed(r, again);
  });
});
