/**
 * The turn-driver seam (packages/host/src/agent/turnDriver.ts): a session runs its turns through a
 * driver other than the scripted model's, as a bridge will. The session keeps turn/started, the
 * terminal and the cancel; a driver's items reach the wire through the turn's context; and a
 * cancelled turn's terminal is sent only once the driver's run has settled, so a driver that
 * waits for its process to exit keeps the terminal behind the process's end.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionAgent } from "../../packages/host/src/agent/sessionAgent.js";
import { TurnStopFailedError, type TurnContext, type TurnDriver } from "../../packages/host/src/agent/turnDriver.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A session agent on a fresh log, driven by `driver`; `sent` collects what it publishes, in order. */
function agentWith(driver: TurnDriver): { agent: SessionAgent; sent: Array<{ method: string; params: Record<string, unknown> }> } {
  const dir = mkdtempSync(join(tmpdir(), "muse-driver-"));
  dirs.push(dir);
  const log = SessionLog.open(sessionLogPath(dir, "s1"), { mode: "create" });
  log.append({ type: "session", at: Date.now(), sessionId: "s1", model: "bridged" });
  const sent: Array<{ method: string; params: Record<string, unknown> }> = [];
  const agent = new SessionAgent({
    sessionId: "s1",
    log,
    models: new Map(),
    modelName: "bridged",
    publish: (method, params) => sent.push({ method, params }),
    driver,
  });
  return { agent, sent };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a session driven by a turn driver", () => {
  it("the driver's items and usage reach the wire between the session's turn/started and its terminal", async () => {
    const driver: TurnDriver = {
      async run(turn: TurnContext) {
        turn.declareUsage();
        turn.at("modelStream");
        const item = { itemId: "m1", kind: "message", turnId: turn.turnId, revision: 1, status: "inProgress", recordedAt: new Date().toISOString(), text: "" };
        turn.emit("item/started", { item });
        turn.emit("item/delta", { itemId: "m1", turnId: turn.turnId, revision: 2, append: { text: "hello" } });
        turn.emit("item/completed", { item: { ...item, revision: 3, status: "completed", text: "hello" } });
        turn.addUsage({ inputTokens: 5, outputTokens: 2, reasoningTokens: 0 });
      },
    };
    const { agent, sent } = agentWith(driver);
    agent.startTurn("t1", [{ type: "text", text: "hi" }]);
    await agent.whenIdle();
    expect(sent.map((s) => s.method)).toEqual(["turn/started", "item/started", "item/delta", "item/completed", "turn/completed"]);
    expect(sent.at(-1)?.params).toMatchObject({ turnId: "t1", terminal: "completed", usage: { inputTokens: 5, outputTokens: 2, reasoningTokens: 0 } });
    await agent.dispose();
  });

  it("a cancelled turn's terminal waits for the driver: it comes after the driver's process is gone, with the point it reported", async () => {
    let pid = 0;
    let aliveAtTerminal: boolean | undefined;
    const driver: TurnDriver = {
      async run(turn: TurnContext) {
        turn.at("toolExecution");
        const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
        pid = child.pid ?? 0;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        await new Promise<void>((resolve) => turn.signal.addEventListener("abort", () => resolve(), { once: true }));
        // A real stop: the process group is signalled, and the run settles only once it has exited.
        process.kill(-pid, "SIGTERM");
        await exited;
        turn.signal.throwIfAborted();
      },
    };
    const { agent, sent } = agentWith(driver);
    const original = sent.push.bind(sent);
    sent.push = (...entries) => {
      for (const entry of entries) if (entry.method === "turn/completed") aliveAtTerminal = alive(pid);
      return original(...entries);
    };
    agent.startTurn("t1", [{ type: "text", text: "hi" }]);
    await expect.poll(() => pid, { timeout: 10_000 }).toBeGreaterThan(0);
    agent.cancelTurn("t1", { kind: "user" }, false);
    await agent.whenIdle();
    expect(aliveAtTerminal).toBe(false);
    expect(sent.at(-1)?.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "user" } });
    await agent.dispose();
  });

  it("a stop the driver cannot confirm ends the turn failed with its reason, never cancelled", async () => {
    const driver: TurnDriver = {
      async run(turn: TurnContext) {
        turn.at("toolExecution");
        await new Promise<void>((resolve) => turn.signal.addEventListener("abort", () => resolve(), { once: true }));
        throw new TurnStopFailedError("tool process 4242 (sleep 47) could not be confirmed gone");
      },
    };
    const { agent, sent } = agentWith(driver);
    agent.startTurn("t1", [{ type: "text", text: "hi" }]);
    await expect.poll(() => sent.length, { timeout: 10_000 }).toBeGreaterThan(0);
    agent.cancelTurn("t1", { kind: "user" }, false);
    await agent.whenIdle();
    expect(sent.at(-1)?.params).toMatchObject({ terminal: "failed", reason: "failed: tool process 4242 (sleep 47) could not be confirmed gone" });
    await agent.dispose();
  });
});
