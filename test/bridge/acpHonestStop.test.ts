/**
 * The ACP bridge's honest stop against agents that do not keep it:
 * - side by side, the same `sleep 47` turn of the real codex-acp 0.16.0: straight through the ACP
 *   SDK's client, the sleep outlives the agent's `stopReason: "cancelled"`; through
 *   `muse serve --agent acp`, it is gone (by pid) when `turn/completed cancelled` arrives;
 * - an agent (built on the ACP SDK's own `agent()`, test/fixtures/acp/stubbornAgent.ts) that runs a
 *   real `sleep` and never answers `session/cancel`: the turn ends `failed`, saying the agent did
 *   not stop, once the bridge's bound passes, the sleep is reaped and the agent closed (the next
 *   turn starts a new one); and the same agent exiting at `session/cancel`: `failed`, never
 *   `cancelled`, since it reached no terminal.
 * - an agent command that cannot run: the turn fails, saying why, and the host lives on.
 * Every wait is bounded; nothing asserts a duration.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { client, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import type { SpawnedHost, SpawnHostOptions } from "../../src/node/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { codexAcpBinary, spawnAcpBridgedHost } from "../fixtures/acp/acpBridgedHost.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pollUntil } from "../helpers/poll.js";
import { pidBelow } from "../helpers/bridgedHostItems.js";

const WAIT_MS = 30_000;
const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

/** Resolves once `predicate` holds, polled; rejects after {@link WAIT_MS}. */
const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** The command that runs test/fixtures/acp/stubbornAgent.ts with tsx. */
function stubbornCommand(): string[] {
  const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
  return [process.execPath, "--import", tsx, join(repoRoot, "test/fixtures/acp/stubbornAgent.ts")];
}

/** The pid of the stubborn agent below the host, or 0. */
const stubbornAgentPid = (host: number): number => descendantsOf(host, scanProcesses(true)).find((p) => p.command.includes("stubbornAgent.ts"))?.pid ?? 0;

/** A fresh Codex home for `sleep 47`, a data dir under .tmp/, both removed after the test. */
async function setUp() {
  const model = await startResponsesServer(execThenMessage("sleep 47"));
  cleanups.push(() => model.close());
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  cleanups.push(() => home.remove());
  mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
  const data = mkdtempSync(join(repoRoot, ".tmp", "acp-data-"));
  cleanups.push(() => rmSync(data, { recursive: true, force: true }));
  return { home, data };
}

/** The host `make` spawns, its wire recorded, closed after the test. */
function recorded(make: (wrap: Required<Pick<SpawnHostOptions, "wrapChannel">>) => SpawnedHost) {
  const wire: string[] = [];
  const host = make({ wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))) });
  cleanups.push(() => host.close());
  return { host, wire };
}

/**
 * A turn of the stubborn agent (with `env`) on a bridged host, once its sleep and tool call are
 * there: the sleep and the agent are killed after the test if still live, and `goneAtTerminal`
 * says whether the sleep was gone when the turn's terminal arrived.
 */
async function stubbornTurn(env: NodeJS.ProcessEnv = {}) {
  const { home, data } = await setUp();
  const { host, wire } = recorded((o) =>
    spawnAcpBridgedHost(home, data, { defaultTimeoutMs: WAIT_MS, command: stubbornCommand(), env, killGraceMs: 500, ...o }),
  );
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input });
  const { turnId } = await turn.accepted;
  let sleepPid = 0;
  let agentPid = 0;
  await poll(
    () =>
      (sleepPid = pidBelow(host.pid, "sleep 49")) > 0 &&
      (agentPid = stubbornAgentPid(host.pid)) > 0 &&
      host.items.itemsOf(turnId).some((i) => i.kind === "toolCall"),
    "the agent, its sleep and its tool call",
  );
  cleanups.push(() => {
    for (const pid of [sleepPid, agentPid]) if (!processGone(pid)) process.kill(pid, "SIGKILL");
  });
  let gone: boolean | undefined;
  host.events.on("turn/completed", (params) => {
    if (params.turnId === turnId) gone = processGone(sleepPid);
  });
  return { host, wire, sessionId, turn, turnId, sleepPid, agentPid, goneAtTerminal: () => gone };
}

describe("the ACP bridge's honest stop", { timeout: 120_000 }, () => {
  it("side by side: straight to codex-acp the sleep outlives stopReason cancelled; through the bridge it is gone when turn/completed cancelled arrives", async () => {
    // Straight to codex-acp, through the ACP SDK's own client.
    const alone = await setUp();
    const agent = spawn(codexAcpBinary(), [], {
      cwd: alone.home.workDir,
      env: { ...alone.home.env, CODEX_HOME: alone.home.codexHome },
      stdio: ["pipe", "pipe", "ignore"],
      detached: true,
    });
    let strayPid = 0;
    cleanups.push(() => {
      if (strayPid > 0 && !processGone(strayPid)) process.kill(strayPid, "SIGKILL");
      if (agent.exitCode === null) process.kill(-agent.pid!, "SIGKILL");
    });
    let toolCallSeen = false;
    const app = client({ name: "muse-test" });
    app.onNotification("session/update", ({ params }) => {
      if (params.update.sessionUpdate === "tool_call") toolCallSeen = true;
    });
    const connection = app.connect(
      ndJsonStream(Writable.toWeb(agent.stdin) as WritableStream<Uint8Array>, Readable.toWeb(agent.stdout) as ReadableStream<Uint8Array>),
    );
    await connection.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId: acpSession } = await connection.agent.request("session/new", { cwd: alone.home.workDir, mcpServers: [] });
    const prompt = connection.agent.request("session/prompt", { sessionId: acpSession, prompt: [{ type: "text", text: "go" }] });
    await poll(() => (strayPid = pidBelow(agent.pid!, "sleep 47")) > 0 && toolCallSeen, "the sleep below codex-acp, shown as a tool_call");
    await connection.agent.notify("session/cancel", { sessionId: acpSession });
    expect((await prompt).stopReason).toBe("cancelled");
    const aloneSleepAliveAtTerminal = !processGone(strayPid);

    // The same turn through the bridge.
    const bridgedSetUp = await setUp();
    const { host, wire } = recorded((o) => spawnAcpBridgedHost(bridgedSetUp.home, bridgedSetUp.data, { defaultTimeoutMs: WAIT_MS, ...o }));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    let sleepPid = 0;
    await poll(
      () => (sleepPid = pidBelow(host.pid, "sleep 47")) > 0 && host.items.itemsOf(turnId).some((i) => i.kind === "toolCall"),
      "the sleep below the bridged host, shown as a toolCall",
    );
    let bridgedGoneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) bridgedGoneAtTerminal = processGone(sleepPid);
    });
    const { turnCompleted } = await turn.cancel({ timeoutMs: WAIT_MS });

    expect(aloneSleepAliveAtTerminal).toBe(true);
    // Given time, codex-acp alone still has not ended it.
    expect(await waitGone([strayPid], 1500)).toBe(false);
    expect(turnCompleted).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(bridgedGoneAtTerminal).toBe(true);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that never answers session/cancel: the turn ends failed, saying so, and its sleep is reaped", async () => {
    const { host, wire, sessionId, turn, turnId, agentPid, goneAtTerminal } = await stubbornTurn();

    const { ack, turnCompleted } = await turn.cancel({ timeoutMs: WAIT_MS });

    expect(ack).toBe("accepted");
    expect(turnCompleted.terminal).toBe("failed");
    expect(turnCompleted.reason).toContain("did not end its prompt turn");
    expect(goneAtTerminal()).toBe(true);
    expect(host.items.itemsOf(turnId).find((i) => i.kind === "toolCall")).toMatchObject({ status: "failed" });
    // The agent whose prompt may still run is closed: the next turn gets a new one, not a session shared with it.
    await poll(() => processGone(agentPid), "the agent that ignored the cancel closed");
    const next = host.startTurn({ sessionId, input });
    await poll(() => pidBelow(host.pid, "sleep 49") > 0, "the next turn's sleep, in a new agent");
    expect(stubbornAgentPid(host.pid)).not.toBe(agentPid);
    await next.cancel({ timeoutMs: WAIT_MS });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that exits when asked to cancel: the turn ends failed, never cancelled, and its sleep is reaped", async () => {
    const { host, wire, turn, turnId, goneAtTerminal } = await stubbornTurn({ STUBBORN_ON_CANCEL: "exit" });

    const { turnCompleted } = await turn.cancel({ timeoutMs: WAIT_MS });

    expect(turnCompleted.terminal).toBe("failed");
    expect(turnCompleted.reason).toContain("ended before it answered session/cancel");
    expect(turnCompleted.cause).toBeUndefined();
    expect(goneAtTerminal()).toBe(true);
    expect(host.items.itemsOf(turnId).find((i) => i.kind === "toolCall")).toMatchObject({ status: "failed" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent that closes its stdout and lives on: the turn fails, and the bridge stops the agent and reaps its sleep", async () => {
    const { host, wire, turn, sleepPid, agentPid } = await stubbornTurn({ STUBBORN_CLOSES_STDOUT: "1" });

    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toContain("ACP");
    expect(processGone(sleepPid)).toBe(true);
    await poll(() => processGone(agentPid), "the agent that closed its stdout, stopped by the bridge");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an agent command that cannot run: the turn fails, saying so, and the host goes on answering", async () => {
    const { home, data } = await setUp();
    const { host, wire } = recorded((o) =>
      spawnAcpBridgedHost(home, data, { defaultTimeoutMs: WAIT_MS, command: [join(home.workDir, "no-such-agent")], ...o }),
    );
    const { sessionId } = await host.command("session/create", {});
    const terminal = await host.startTurn({ sessionId, input }).completed;

    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toContain("no-such-agent");
    expect(await host.command("host/info", {})).toMatchObject({ models: [{ id: "acp" }] });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
