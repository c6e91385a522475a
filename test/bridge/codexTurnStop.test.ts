/**
 * The honest stop against the real Codex binary (@openai/codex 0.169.0, the pinned devDependency)
 * with the scripted Responses server as its model: a turn runs `sleep 47`, and
 * - `stopCodexTurn` resolves only when that sleep's pid is gone (Codex's own `turn/interrupt`
 *   alone leaves it running: test/bridge/codexStopSideBySide.test.ts);
 * Waits are bounded and generous; nothing asserts a duration.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CodexAppServer } from "../../packages/host/src/bridge/codex/codexAppServer.js";
import { reapCodexTree, stopCodexTurn } from "../../packages/host/src/bridge/codex/codexTurnStop.js";
import { approvalResult, isApprovalRequest } from "../../packages/host/src/bridge/codex/codexApprovals.js";
import type { ServerRequestHandler } from "../../packages/host/src/bridge/codex/codexRpc.js";
import type { ServerNotification } from "../../packages/host/src/bridge/codex/generated/ServerNotification.js";
import type { ServerRequest } from "../../packages/host/src/bridge/codex/generated/ServerRequest.js";
import { descendantsOf, isGone, ProcessTreeWatch, scanProcesses, type ProcessInfo } from "../../packages/host/src/bridge/processTree.js";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ResponsesServer } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";

const WAIT_MS = 30_000;

interface Rig {
  server: CodexAppServer;
  model: ResponsesServer;
  home: CodexTestHome;
  seen: ServerNotification[];
}
const rigs: Rig[] = [];
/** Processes a test found, killed after it if they still run (by pid and start time: never a reused pid). */
const stray: ProcessInfo[] = [];

afterEach(async () => {
  for (const { server, model, home } of rigs.splice(0)) {
    await server.close();
    await model.close();
    home.remove();
  }
  for (const p of stray.splice(0)) {
    if (isGone(p)) continue;
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}, 60_000);

async function rig(cmd: string, asking?: { onServerRequest: ServerRequestHandler }): Promise<Rig> {
  const model = await startResponsesServer(
    asking === undefined ? execThenMessage(cmd) : (q) => (q.hasToolOutput ? { kind: "message", text: "done" } : { kind: "exec", cmd, escalate: true }),
  );
  const home = makeCodexHome(
    asking === undefined ? { baseUrl: model.baseUrl } : { baseUrl: model.baseUrl, approvalPolicy: "on-request", sandboxMode: "workspace-write" },
  );
  const server = await CodexAppServer.start({ codexHome: home.codexHome, cwd: home.workDir, env: home.env, ...asking });
  const seen: ServerNotification[] = [];
  server.onNotification((n) => seen.push(n));
  const r = { server, model, home, seen };
  rigs.push(r);
  return r;
}

/** Starts a turn that runs `cmd` and resolves once the command's process is below the app-server. */
async function turnRunning(r: Rig, cmd: string): Promise<{ threadId: string; turnId: string; pid: number; watch: ProcessTreeWatch }> {
  const { thread } = await r.server.request("thread/start", { cwd: r.home.workDir });
  const watch = new ProcessTreeWatch(r.server.pid, 100);
  watch.start();
  const started = r.server.waitForNotification(
    (n) => n.method === "item/started" && n.params.item.type === "commandExecution",
    WAIT_MS,
    "the command's item/started",
  );
  const { turn } = await r.server.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "run it", text_elements: [] }] });
  await started;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = descendantsOf(r.server.pid, scanProcesses(true)).find((p) => p.command === cmd);
    if (found !== undefined) {
      stray.push(found);
      watch.sample();
      return { threadId: thread.id, turnId: turn.id, pid: found.pid, watch };
    }
    if (Date.now() > deadline) throw new Error(`no "${cmd}" process below the app-server within ${WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// A real app-server on a loaded 2-core machine: each test waits within its own bounds, under a roomy test timeout.
describe("stopping a Codex turn (real codex app-server 0.169.0)", { timeout: 90_000 }, () => {
  it("resolves only when the turn's sleep is gone", async () => {
    const r = await rig("sleep 47");
    const { threadId, turnId, pid, watch } = await turnRunning(r, "sleep 47");
    const sleep = scanProcesses().get(pid)!;
    expect(sleep.pgid).not.toBe(r.server.pid); // the command runs in its own group, below the agent

    const stop = await stopCodexTurn(r.server, { threadId, turnId, watch });

    expect(processGone(pid)).toBe(true);
    expect(stop.agentStatus).toBe("interrupted");
    expect(r.seen.some((n) => n.method === "turn/completed" && n.params.turn.id === turnId)).toBe(true);
    // The app-server itself lives on for the next turn.
    expect(processGone(r.server.pid)).toBe(false);
    console.log(
      `codex stop: interrupt→terminal ${stop.interruptToTerminalMs} ms, interrupt→gone ${stop.interruptToGoneMs} ms, terminals terminated ${stop.terminatedTerminals.length}, reap: ${stop.reap.targets.length} target(s) left after Codex's part, TERM ${stop.reap.terminated.length}, KILL ${stop.reap.killedGroups.length}`,
    );
  });

  it("reaps through the process tree alone (without Codex's terminal listing)", async () => {
    const r = await rig("sleep 47");
    const { threadId, turnId, pid, watch } = await turnRunning(r, "sleep 47");

    const stop = await stopCodexTurn(r.server, { threadId, turnId, watch, terminateBackgroundTerminals: false });

    expect(processGone(pid)).toBe(true);
    expect(stop.reap.targets.map((p) => p.pid)).toContain(pid);
    expect(stop.reap.terminated).toContain(stop.reap.targets.find((p) => p.pid === pid)!.pgid);
    console.log(`tree-only stop: interrupt→gone ${stop.interruptToGoneMs} ms, reap ${stop.reap.elapsedMs} ms`);
  });

  it("a stop while Codex asks: the question is answered cancelled first, the call never runs, the turn ends interrupted", async () => {
    let asked!: (request: ServerRequest) => void;
    const question = new Promise<ServerRequest>((resolve) => (asked = resolve));
    let answer!: (result: unknown) => void;
    const r = await rig("sleep 43", {
      onServerRequest: (request) => {
        asked(request);
        return new Promise((resolve) => (answer = resolve));
      },
    });
    const { thread } = await r.server.request("thread/start", { cwd: r.home.workDir });
    const { turn } = await r.server.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "run it", text_elements: [] }] });
    const request = await question;
    if (!isApprovalRequest(request)) throw new Error(`unexpected ${request.method}`);
    const terminal = r.server.waitForNotification((n) => n.method === "turn/completed" && n.params.turn.id === turn.id, WAIT_MS, "turn/completed");

    answer(approvalResult(request, "cancelled"));
    const stop = await stopCodexTurn(r.server, { threadId: thread.id, turnId: turn.id });

    expect(await terminal).toMatchObject({ params: { turn: { status: "interrupted" } } });
    const item = r.seen.find((n) => n.method === "item/completed" && n.params.item.type === "commandExecution");
    expect(item?.method === "item/completed" && item.params.item).toMatchObject({ status: "declined" });
    console.log("stop while asking:", JSON.stringify({ agentStatus: stop.agentStatus, refused: stop.interruptRefused }));
    expect(stop.reap.targets).toEqual([]);
    expect(descendantsOf(r.server.pid, scanProcesses(true)).filter((p) => p.command.includes("sleep 43"))).toEqual([]);
  });

  it("an app-server killed mid-command orphans the command's child; the watch's record still reaps it", async () => {
    const cmd = "echo start; sleep 31; echo end";
    const r = await rig(cmd);
    const { pid: shell, watch } = await turnRunning(r, `/bin/bash -c ${cmd}`);
    const sleep = await (async () => {
      for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        const found = descendantsOf(shell, scanProcesses(true)).find((p) => p.command === "sleep 31");
        if (found !== undefined) return found;
      }
      throw new Error("no sleep 31 below the command's shell");
    })();
    stray.push(sleep);
    watch.sample();

    process.kill(r.server.pid, "SIGKILL");
    await r.server.exited;
    // The sleep outlives the agent, no longer below it: the orphan.
    expect(await waitGone([sleep.pid], 1000)).toBe(false);
    expect(descendantsOf(r.server.pid, scanProcesses()).map((p) => p.pid)).not.toContain(sleep.pid);

    const reap = await reapCodexTree(r.server, { watch });
    expect(reap.targets.map((p) => p.pid)).toContain(sleep.pid);
    expect(processGone(sleep.pid)).toBe(true);
  });
});
