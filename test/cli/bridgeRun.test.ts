/**
 * `muse run` and `muse resume` against a bridged host, as real processes: `muse --spawn` starts
 * `muse-host serve --stdio --agent codex --data DIR` (the real pinned Codex binary behind it, the
 * scripted Responses server as its model), as a user would type it.
 * - A run streams the command's call and the model's message and exits 0; a later `muse resume`
 *   on a new host process over the same `--data` replays the same session, turn for turn.
 * - Ctrl-C under a pseudo-terminal during `sleep 47` is Stop: muse prints the bridge's own
 *   `cancelled` and exits 130, and the sleep is gone by then (checked by pid).
 */
import { afterEach, describe, expect, it } from "vitest";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ModelRequest, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { processGone } from "../helpers/processGone.js";
import { jsonLines } from "./jsonLines.js";
import { MuseTerminal, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 30_000);

/** The variables of Codex's environment that keep it on loopback (see codexHome.ts), for a `sh -c` line. */
const CODEX_VARS = ["MOCK_API_KEY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "RUST_LOG"] as const;

/** A Codex home on a fresh scripted model, and a data dir; `spawn` is the `--spawn` line of the bridged host. */
async function bridgedSetup(script: (request: ModelRequest) => ScriptedReply): Promise<{ home: CodexTestHome; spawn: string }> {
  const model = await startResponsesServer(script);
  cleanups.push(() => model.close());
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  cleanups.push(() => home.remove());
  const data = tempDir("muse-bridge-run-");
  cleanups.push(() => data.remove());
  // Codex works in the host's directory and reads CODEX_HOME: the host is started in its work dir, with its variables.
  const vars = [...CODEX_VARS.map((name) => `${name}=${String(home.env[name] ?? "")}`), `CODEX_HOME=${home.codexHome}`];
  const line = `cd ${home.workDir} && exec env ${vars.join(" ")} ${process.execPath} ${bundles().host} serve --stdio --agent codex --data ${data.dir}`;
  return { home, spawn: `sh -c ${JSON.stringify(line)}` };
}

describe("muse run and muse resume through muse serve --agent codex (real processes, real Codex 0.169.0)", { timeout: 120_000 }, () => {
  it("muse run streams the command and the message and exits 0; muse resume on a new host process replays the same session", async () => {
    const { spawn } = await bridgedSetup(execThenMessage("echo bridged-run-ok", "The echo ran."));
    const run = await runMuse(bundles(), ["run", "say it", "--json", "--spawn", spawn], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const events = jsonLines<{ type: string; sessionId?: string; method?: string; params?: Record<string, unknown> }>(run.stdout);
    const sessionId = events[0]?.sessionId as string;
    expect(sessionId).toMatch(/\S/);
    const completed = events.filter((e) => e.method === "item/completed").map((e) => e.params?.["item"] as Record<string, unknown>);
    const call = completed.find((item) => item["kind"] === "toolCall");
    expect(call).toMatchObject({ tool: "shell", status: "completed" });
    expect(String(call?.["visibleOutput"])).toContain("bridged-run-ok");
    expect(completed.find((item) => item["kind"] === "message")).toMatchObject({ text: "The echo ran." });
    const terminal = events.find((e) => e.method === "turn/completed")?.params;
    expect(terminal).toMatchObject({ terminal: "completed" });

    const resumed = await runMuse(bundles(), ["resume", "--session", sessionId, "--json", "--spawn", spawn], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const replayed = jsonLines<{ method?: string; params?: Record<string, unknown> }>(resumed.stdout).filter((e) => e.method !== undefined);
    const ran = events.filter((e) => e.method !== undefined);
    expect(replayed.map((e) => e.method)).toEqual(ran.map((e) => e.method));
    expect(replayed.at(-1)?.params).toMatchObject({ turnId: terminal?.["turnId"], terminal: "completed" });
  });

  it("Ctrl-C during sleep 47 is Stop: muse prints the bridge's cancelled terminal and exits 130, and the sleep is gone by then", async () => {
    const { spawn } = await bridgedSetup(execThenMessage("sleep 47"));
    const terminal = new MuseTerminal(bundles(), ["run", "wait a while", "--spawn", spawn]);
    cleanups.push(() => terminal.kill());
    await terminal.waitFor(/sleep 47/, 60_000);
    let sleepPid = 0;
    for (const deadline = Date.now() + 30_000; sleepPid === 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      sleepPid = descendantsOf(process.pid, scanProcesses(true)).find((p) => p.command === "sleep 47")?.pid ?? 0;
    }
    expect(sleepPid).toBeGreaterThan(0);
    terminal.interrupt();
    await terminal.waitFor(/stopping…/);
    // The call's cancelled line comes before the terminal, and before muse closes the host: the bridge reaped the sleep by then.
    await terminal.waitFor(/└ cancelled/, 30_000);
    expect(processGone(sleepPid)).toBe(true);
    const { code } = await terminal.exited;
    expect(code, terminal.text).toBe(130);
    expect(terminal.text).toMatch(/turn cancelled: you stopped it \(cancelled during tool execution\) after/);
  });
});
