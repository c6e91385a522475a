/**
 * Issue 22 on the reference host (real processes): usage on every terminal (the sum of the steps a
 * turn ran) and policy stops (`cause: {kind: "hook"}`) from `--turn-time-limit-ms`, a model's
 * `turnTimeLimitMs` and a step's `stopByHook`, durable across a restart and a resume.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { LedgerItem, ToolCallItem } from "../../src/index.js";
import { checkTranscriptParts } from "../../src/testing/index.js";
import { processGone } from "../helpers/processGone.js";
import { model, startHost, tempDataDir, until, type HostRun } from "../helpers/referenceHost.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function run(modelName: string, extra: string[] = [], dataDir?: string): HostRun & { data: string } {
  let data = dataDir;
  if (data === undefined) {
    const temp = tempDataDir();
    cleanups.push(temp.remove);
    data = temp.dir;
  }
  const r = startHost(model(modelName), data, extra);
  cleanups.push(() => r.host.close().then(() => undefined));
  return { ...r, data };
}

/** Each host's wire, checked on its own (a whole replay is a second history of the session, from cursor 1). */
async function expectWellFormed(...runs: HostRun[]): Promise<void> {
  for (const r of runs) {
    await r.host.close();
    expect(checkTranscriptParts([r.wire]).flatMap((part) => part.problems)).toEqual([]);
  }
}

function toolItems(r: HostRun, turnId: string): Array<ToolCallItem & LedgerItem> {
  return r.host.items.itemsOf(turnId).filter((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
}

/** The shell's pid, once the turn's tool printed it. */
async function toolStarted(r: HostRun, turnId: string): Promise<number> {
  await until(r.host, () => /started \d+/.test(toolItems(r, turnId)[0]?.visibleOutput ?? ""), "the tool's output");
  return Number(/started (\d+)/.exec(toolItems(r, turnId)[0]?.visibleOutput ?? "")?.[1]);
}

/** A second host on the same data dir replays the whole session; returns its terminal of `turnId`. */
async function replayed(r: HostRun & { data: string }, modelName: string, sessionId: string, turnId: string) {
  await r.host.close();
  const again = run(modelName, [], r.data);
  const resumed = await again.host.command("session/resume", { sessionId });
  expect(resumed.replayed).toBeGreaterThan(0);
  return { again, terminal: await again.host.turns.terminalOf(turnId, { timeoutMs: 10_000 }) };
}

describe("usage on every terminal", () => {
  it("a turn cancelled mid-tool carries the usage of the step that ran; a completed turn carries the sum of its steps", async () => {
    const r = run("usage.json");
    const { sessionId } = await r.host.command("session/create", {});
    const first = r.host.startTurn({ sessionId, input });
    const { turnId } = await first.accepted;
    const pid = await toolStarted(r, turnId);
    const { turnCompleted: terminal } = await first.cancel({ timeoutMs: 10_000 });
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.cause).toEqual({ kind: "user" });
    // Step 1 ran (cut short in its tool: it counts in full); step 2 never started.
    expect(terminal.usage).toEqual({ inputTokens: 100, outputTokens: 5, reasoningTokens: 2 });
    expect(processGone(pid)).toBe(true);

    const second = r.host.startTurn({ sessionId, input });
    const done = await second.completed;
    expect(done.terminal).toBe("completed");
    // 10+20+0, 4+6+0, 1+0+0: the third step declares none and counts 0.
    expect(done.usage).toEqual({ inputTokens: 30, outputTokens: 10, reasoningTokens: 1 });

    // Durable: replayed as sent after a restart.
    const { again, terminal: replayedTerminal } = await replayed(r, "usage.json", sessionId, turnId);
    expect(replayedTerminal.usage).toEqual({ inputTokens: 100, outputTokens: 5, reasoningTokens: 2 });
    await expectWellFormed(r, again);
  });

  it("a model that declares no usage sends no usage field", async () => {
    const r = run("hello.json");
    const { sessionId } = await r.host.command("session/create", {});
    const done = await r.host.startTurn({ sessionId, input }).completed;
    expect(done.terminal).toBe("completed");
    expect("usage" in done).toBe(false);
    expect(r.wire.some((line) => line.includes("usage"))).toBe(false);
    await expectWellFormed(r);
  });
});

describe("policy stops (cause hook)", () => {
  it("--turn-time-limit-ms cancels a long tool turn with the hook cause, drains the tool, keeps the cause after a resume", async () => {
    const r = run("shell-sleep.json", ["--turn-time-limit-ms", "500"]);
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const pid = await toolStarted(r, turnId);
    const terminal = await turn.completed;
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.reason).toBe("cancelled during tool execution");
    expect(terminal.cause).toEqual({ kind: "hook", reason: "turn time limit (500 ms)" });
    expect(terminal.durationMs).toBeGreaterThanOrEqual(450);
    expect(toolItems(r, turnId)[0]?.status).toBe("cancelled");
    expect(processGone(pid)).toBe(true);

    const { again, terminal: after } = await replayed(r, "shell-sleep.json", sessionId, turnId);
    expect(after.terminal).toBe("cancelled");
    expect(after.cause).toEqual({ kind: "hook", reason: "turn time limit (500 ms)" });
    await expectWellFormed(r, again);
  });

  it("a time-limit stop keeps the inbox: the queued turn runs next (and meets the same limit)", async () => {
    const r = run("shell-sleep.json", ["--turn-time-limit-ms", "400"]);
    const { sessionId } = await r.host.command("session/create", {});
    const first = r.host.startTurn({ sessionId, input });
    const queued = r.host.startTurn({ sessionId, input });
    expect((await queued.accepted).disposition).toBe("queued");
    expect((await first.completed).cause).toEqual({ kind: "hook", reason: "turn time limit (400 ms)" });
    const next = await queued.completed;
    expect(next.reason).toBe("cancelled during tool execution"); // it ran, unlike a discarded turn
    expect(next.cause).toEqual({ kind: "hook", reason: "turn time limit (400 ms)" });
    await expectWellFormed(r);
  });

  it("a model's turnTimeLimitMs stops its turn the same way", async () => {
    const r = run("time-limited.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const pid = await toolStarted(r, turnId);
    const terminal = await turn.completed;
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.cause).toEqual({ kind: "hook", reason: "turn time limit (400 ms)" });
    expect(processGone(pid)).toBe(true);
    await expectWellFormed(r);
  });

  it("a step's stopByHook cancels the turn at that step with its reason; usage counts the steps before it; a resume still says hook", async () => {
    const r = run("stop-by-hook.json");
    const { sessionId } = await r.host.command("session/create", {});
    const turn = r.host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.reason).toBe("cancelled at step boundary");
    expect(terminal.cause).toEqual({ kind: "hook", reason: "budget hook: over the daily spend" });
    expect(terminal.usage).toEqual({ inputTokens: 7, outputTokens: 3, reasoningTokens: 0 });
    const texts = r.host.items.itemsOf(turnId).flatMap((i) => (i.kind === "message" ? [i.text] : []));
    expect(texts).toEqual(["Checking the budget."]);

    const { again, terminal: after } = await replayed(r, "stop-by-hook.json", sessionId, turnId);
    expect(after.cause).toEqual({ kind: "hook", reason: "budget hook: over the daily spend" });
    expect(after.usage).toEqual({ inputTokens: 7, outputTokens: 3, reasoningTokens: 0 });
    await expectWellFormed(r, again);
  });
});
