/**
 * The bridge's Stop against Codex alone, N turns each, in one run: Stop → terminal, and Stop →
 * the turn's last tool process gone. The agent is the pinned Codex binary (0.169.0) with the
 * scripted Responses server as its model (the bridge tests' fixtures); each turn runs `sleep 47`.
 * Each side is stopped once the command shows as running (Codex's `item/started`, the MSP toolCall).
 * - Codex alone: `turn/interrupt` on a `codex app-server` child, timed to its `turn/completed`;
 *   the sleep is then watched for 2 s (it outlives the terminal: openai/codex#42717) and reaped.
 * - Through the bridge: `turn/cancel` on `muse serve --agent codex --stdio`, timed to the MSP
 *   terminal; the sleep's exit is polled every 5 ms from the Stop.
 */
import { CodexAppServer } from "../packages/host/src/bridge/codex/codexAppServer.js";
import { descendantsOf, scanProcesses } from "../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost } from "../test/fixtures/codex/bridgedHost.js";
import { makeCodexHome } from "../test/fixtures/codex/codexHome.js";
import { startResponsesServer, type ModelRequest, type ScriptedReply } from "../test/fixtures/codex/responsesServer.js";
import { processGone } from "../test/helpers/processGone.js";
import { tempDataDir } from "../test/helpers/referenceHost.js";
import { percentile, sleep } from "./timing.js";

/** One side's figures. @unit milliseconds */
export interface BridgeStopSide {
  stopToTerminalMs: { p50: number; p95: number };
  /** `undefined` when some sleep outlived the watch (then `outlived` counts them). */
  stopToGoneMs: { p50: number; p95: number } | undefined;
  /** Turns whose sleep still ran 2 s after the terminal. */
  outlived: number;
  n: number;
}

/** Both sides of the bench. */
export interface BridgeStopRows {
  codexAlone: BridgeStopSide;
  bridged: BridgeStopSide;
}

const WAIT_MS = 30_000;

/** Every turn runs `sleep 47`: a request that ends with the user's prompt (not a tool's output) gets the command. */
function sleepEachTurn(request: ModelRequest): ScriptedReply {
  return request.input.at(-1)?.["type"] === "function_call_output" ? { kind: "message", text: "Stopped." } : { kind: "exec", cmd: "sleep 47" };
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + WAIT_MS; !predicate(); await sleep(10))
    if (Date.now() > deadline) throw new Error(`bridge bench: timed out waiting for ${what}`);
}

function sleepBelow(pid: number): number | undefined {
  return descendantsOf(pid, scanProcesses(true)).find((p) => p.command === "sleep 47")?.pid;
}

function side(terminal: number[], gone: Array<number | undefined>): BridgeStopSide {
  const known = gone.filter((ms): ms is number => ms !== undefined);
  const outlived = gone.length - known.length;
  return {
    stopToTerminalMs: { p50: percentile(terminal, 50), p95: percentile(terminal, 95) },
    stopToGoneMs: outlived === 0 ? { p50: percentile(known, 50), p95: percentile(known, 95) } : undefined,
    outlived,
    n: terminal.length,
  };
}

/** Runs `n` stops on each side. */
export async function bridgeStop(n: number, log: (line: string) => void): Promise<BridgeStopRows> {
  const model = await startResponsesServer(sleepEachTurn);
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  const data = tempDataDir();
  try {
    const alone = { terminal: [] as number[], gone: [] as Array<number | undefined> };
    const server = await CodexAppServer.start({
      codexHome: home.codexHome,
      cwd: home.workDir,
      env: home.env,
      onServerRequest: () => Promise.reject(new Error("no approvals here")),
    });
    try {
      const { thread } = await server.request("thread/start", { cwd: home.workDir });
      for (let i = 0; i < n; i++) {
        // Stopped once Codex shows the command running (its item/started), as a user would see it.
        const started = server.waitForNotification(
          (x) => x.method === "item/started" && x.params.item.type === "commandExecution",
          WAIT_MS,
          "the command's item/started",
        );
        const { turn } = await server.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "go", text_elements: [] }] });
        await started;
        let pid: number | undefined;
        await until(() => (pid = sleepBelow(server.pid)) !== undefined, "Codex's sleep");
        const done = server.waitForNotification((x) => x.method === "turn/completed" && x.params.turn.id === turn.id, WAIT_MS, "turn/completed");
        const stopAt = performance.now();
        await server.request("turn/interrupt", { threadId: thread.id, turnId: turn.id });
        await done;
        alone.terminal.push(performance.now() - stopAt);
        const watchEnd = performance.now() + 2_000;
        while (!processGone(pid!) && performance.now() < watchEnd) await sleep(5);
        alone.gone.push(processGone(pid!) ? performance.now() - stopAt : undefined);
        if (!processGone(pid!)) process.kill(pid!, "SIGKILL");
      }
    } finally {
      await server.close();
    }
    log(`bridge: Codex alone, ${n} interrupts done`);

    const bridged = { terminal: [] as number[], gone: [] as Array<number | undefined> };
    const host = spawnBridgedHost(home, data.dir, { defaultTimeoutMs: WAIT_MS });
    try {
      const { sessionId } = await host.command("session/create", {});
      for (let i = 0; i < n; i++) {
        const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
        const { turnId } = await turn.accepted;
        let pid: number | undefined;
        const shown = () => host.items.itemsOf(turnId).some((item) => item.kind === "toolCall");
        await until(() => shown() && (pid = sleepBelow(host.pid)) !== undefined, "the bridged sleep, shown as a toolCall");
        const stopAt = performance.now();
        let goneMs: number | undefined;
        const watch = (async () => {
          while (!processGone(pid!) && performance.now() - stopAt < WAIT_MS) await sleep(5);
          if (processGone(pid!)) goneMs = performance.now() - stopAt;
        })();
        const { turnCompleted } = await turn.cancel({ timeoutMs: WAIT_MS });
        bridged.terminal.push(performance.now() - stopAt);
        if (turnCompleted.terminal !== "cancelled") throw new Error(`bridge bench: the bridged turn ended ${turnCompleted.terminal}`);
        await watch;
        bridged.gone.push(goneMs);
      }
    } finally {
      await host.close();
    }
    log(`bridge: bridged, ${n} stops done`);
    return { codexAlone: side(alone.terminal, alone.gone), bridged: side(bridged.terminal, bridged.gone) };
  } finally {
    await model.close();
    home.remove();
    data.remove();
  }
}
