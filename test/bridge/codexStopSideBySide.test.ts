/**
 * The regression test of issue 32: Codex's own stop and the bridge's, side by side, both against
 * the real Codex binary (@openai/codex 0.169.0, the pinned devDependency) with the scripted
 * Responses server as the model, each turn running `sleep 47`, each checked by the sleep's pid:
 * - straight to `codex app-server`: `turn/interrupt` gets `turn/completed interrupted`, and the
 *   sleep is still running after it (openai/codex#42717), its item never completed;
 * - through the bridge (`muse serve --agent codex --stdio`, driven by the SDK's client): the Stop
 *   ends the turn `cancelled` (cause `user`) only once that sleep is gone, its shell toolCall
 *   closed `cancelled`, and the wire keeps every MSP invariant.
 * Waits are bounded and generous; nothing asserts a duration (the measured ones are printed).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { LedgerItem, ToolCallItem } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { CodexAppServer } from "../../packages/host/src/bridge/codex/codexAppServer.js";
import { reapCodexTree } from "../../packages/host/src/bridge/codex/codexTurnStop.js";
import type { ServerNotification } from "../../packages/host/src/bridge/codex/generated/ServerNotification.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";

const WAIT_MS = 30_000;
const cleanups: Array<() => Promise<unknown> | void> = [];
const stray: number[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const pid of stray.splice(0)) {
    if (processGone(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}, 60_000);

/** The `sleep 47` below `root`, once it runs (polled every 50 ms, at most {@link WAIT_MS}). */
async function sleepBelow(root: number, ready: () => boolean = () => true): Promise<number> {
  for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const pid = descendantsOf(root, scanProcesses(true)).find((p) => p.command === "sleep 47")?.pid;
    if (pid !== undefined && ready()) {
      stray.push(pid);
      return pid;
    }
  }
  throw new Error(`no sleep 47 below ${root} within ${WAIT_MS} ms`);
}

describe("Stop during sleep 47: Codex alone against the bridge (real codex app-server 0.169.0)", { timeout: 120_000 }, () => {
  it("Codex alone reports interrupted while the sleep runs on; through the bridge the turn ends only once the sleep is gone", async () => {
    const model = await startResponsesServer(execThenMessage("sleep 47"));
    cleanups.push(() => model.close());
    const home = makeCodexHome({ baseUrl: model.baseUrl });
    cleanups.push(() => home.remove());

    // Codex alone.
    const server = await CodexAppServer.start({ codexHome: home.codexHome, cwd: home.workDir, env: home.env });
    cleanups.push(() => server.close());
    const seen: ServerNotification[] = [];
    server.onNotification((n) => seen.push(n));
    const { thread } = await server.request("thread/start", { cwd: home.workDir });
    const { turn } = await server.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "go", text_elements: [] }] });
    // Stopped once the command shows as running (its item/started), as a client would see it.
    const alonePid = await sleepBelow(server.pid, () => seen.some((n) => n.method === "item/started" && n.params.item.type === "commandExecution"));
    const completed = server.waitForNotification((n) => n.method === "turn/completed" && n.params.turn.id === turn.id, WAIT_MS, "turn/completed");
    const interruptAt = Date.now();
    await server.request("turn/interrupt", { threadId: thread.id, turnId: turn.id });
    const aloneTerminal = await completed;
    const aloneTerminalMs = Date.now() - interruptAt;

    expect(aloneTerminal.method === "turn/completed" && aloneTerminal.params.turn.status).toBe("interrupted");
    expect(processGone(alonePid)).toBe(false);
    // Given time to act on its own interrupt, Codex still has not ended the command, nor completed its item.
    expect(await waitGone([alonePid], 1500)).toBe(false);
    expect(seen.some((n) => n.method === "item/completed" && n.params.item.type === "commandExecution")).toBe(false);
    await reapCodexTree(server);
    expect(processGone(alonePid)).toBe(true);

    // Through the bridge.
    const data = tempDataDir();
    cleanups.push(() => data.remove());
    const wire: string[] = [];
    const host: SpawnedHost = spawnBridgedHost(home, data.dir, {
      defaultTimeoutMs: WAIT_MS,
      wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
    });
    cleanups.push(() => host.close());
    const toolItems = (turnId: string) => host.items.itemsOf(turnId).filter((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
    const { sessionId } = await host.command("session/create", {});
    const bridged = host.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const { turnId } = await bridged.accepted;
    const bridgedPid = await sleepBelow(host.pid, () => toolItems(turnId).length > 0);
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(bridgedPid);
    });
    const stopAt = Date.now();
    const { ack, turnCompleted: terminal } = await bridged.cancel({ timeoutMs: WAIT_MS });
    const stopMs = Date.now() - stopAt;

    expect(ack).toBe("accepted");
    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" }, reason: "cancelled during tool execution" });
    expect(goneAtTerminal).toBe(true);
    const [tool] = toolItems(turnId);
    expect(tool).toMatchObject({ tool: "shell", status: "cancelled", failureReason: "turn cancelled" });
    expect(JSON.parse(tool!.args)).toMatchObject({ command: expect.stringContaining("sleep 47") });
    console.log(
      `Codex alone: turn/interrupt → interrupted ${aloneTerminalMs} ms, sleep ${alonePid} still running; bridged: turn/cancel → cancelled ${stopMs} ms, sleep ${bridgedPid} gone first`,
    );
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
