/**
 * What an ACP client meets today, shown against a real ACP agent: `@zed-industries/codex-acp`
 * 0.16.0 (the pinned devDependency, Codex behind ACP), driven through the ACP SDK's own client
 * (`@agentclientprotocol/sdk` 2.4.0) with the scripted Responses server as its model. After
 * `session/cancel`, `session/prompt` answers `stopReason: "cancelled"` while the shell command
 * it started still runs, and the tool call is never closed: ACP leaves both to the client. The
 * ACP bridge exists to close that gap (docs/bridges.md); this test pins the gap it closes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { client, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { startResponsesServer } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";

const WAIT_MS = 30_000;
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 30_000);

/** The native binary the pinned codex-acp installs (its bin script only picks it for the platform). */
function codexAcpBinary(): string {
  const require = createRequire(join(repoRoot, "packages", "host", "package.json"));
  const main = dirname(require.resolve("@zed-industries/codex-acp/package.json"));
  const platform = createRequire(join(main, "package.json")).resolve(`@zed-industries/codex-acp-${process.platform}-${process.arch}/package.json`);
  return join(dirname(platform), "bin", "codex-acp");
}

interface Update {
  sessionUpdate: string;
  toolCallId?: string;
  status?: string;
}

describe("codex-acp 0.16.0 alone, through the ACP SDK's client", { timeout: 90_000 }, () => {
  it("answers session/cancel with stopReason cancelled while the turn's sleep runs on, its tool call left in_progress", async () => {
    const model = await startResponsesServer((r) => (r.hasToolOutput ? { kind: "message", text: "Done." } : { kind: "exec", cmd: "sleep 47" }));
    cleanups.push(() => model.close());
    const home = makeCodexHome({ baseUrl: model.baseUrl });
    cleanups.push(() => home.remove());
    const agent: ChildProcess = spawn(codexAcpBinary(), [], {
      cwd: home.workDir,
      env: { ...home.env, CODEX_HOME: home.codexHome },
      stdio: ["pipe", "pipe", "ignore"],
      detached: true,
    });
    const stray: number[] = [];
    cleanups.push(() => {
      for (const pid of stray) if (!processGone(pid)) process.kill(pid, "SIGKILL");
      if (agent.exitCode === null) process.kill(-agent.pid!, "SIGKILL");
    });

    const updates: Update[] = [];
    const app = client({ name: "muse-test" });
    app.onNotification("session/update", ({ params }) => {
      updates.push(params.update as Update);
    });
    const connection = app.connect(
      ndJsonStream(Writable.toWeb(agent.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(agent.stdout!) as ReadableStream<Uint8Array>),
    );
    await connection.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await connection.agent.request("session/new", { cwd: home.workDir, mcpServers: [] });
    const prompt = connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });

    let pid: number | undefined;
    const deadline = Date.now() + WAIT_MS;
    while (pid === undefined || !updates.some((u) => u.sessionUpdate === "tool_call")) {
      if (Date.now() > deadline) throw new Error("no sleep 47 below codex-acp, shown as a tool_call, within the bound");
      await new Promise((resolve) => setTimeout(resolve, 50));
      pid ??= descendantsOf(agent.pid!, scanProcesses(true)).find((p) => p.command === "sleep 47")?.pid;
    }
    stray.push(pid);
    const call = updates.find((u) => u.sessionUpdate === "tool_call")!;
    expect(call.status).toBe("in_progress");

    await connection.agent.notify("session/cancel", { sessionId });
    const answer = await prompt;

    expect(answer.stopReason).toBe("cancelled");
    // Given time to act on its own cancel, the agent has not ended the command, nor closed its call.
    expect(await waitGone([pid], 1500)).toBe(false);
    expect(updates.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status !== "in_progress")).toBe(false);
  });
});
