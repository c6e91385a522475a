/**
 * A bridged turn whose agent fails it, against real processes, driven by the SDK's client:
 * - an app-server that never answers `turn/interrupt` (the fake, test/fixtures/codex/fake-app-server.sh
 *   `deaf-interrupt`): a Stop ends the turn `failed` once the stop grace (an agent option, short
 *   here) has passed and the command it ran is reaped, never `cancelled`;
 * - the real Codex app-server (@openai/codex 0.169.0) SIGKILLed mid-command: the turn ends
 *   `failed`, saying the app-server died, once the orphaned `sleep` is gone; the session's next
 *   turn runs on a new app-server that resumed the same Codex thread (the model is sent the first
 *   turn's text again).
 * Waits are bounded and generous; nothing asserts a duration (the measured ones are printed).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses, type ProcessInfo } from "../../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost, type BridgedHostOptions } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { startResponsesServer, type ModelRequest, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { processGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pollFor } from "../helpers/poll.js";
import { toolItems } from "../helpers/bridgedHostItems.js";

const WAIT_MS = 30_000;
/**
 * A command whose `sleep 31` outlives its agent: the process Codex spawns for a command (here the
 * shell) dies with Codex, as a lone `sleep` would, but the shell's child goes on running,
 * re-parented away from the agent.
 */
const CMD = "echo start; sleep 31; echo end";
const FAKE = `${repoRoot}/test/fixtures/codex/fake-app-server.sh`;
const cleanups: Array<() => Promise<unknown> | void> = [];
/** Processes a test found, SIGKILLed after it if they still run. */
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

/** Resolves with what `find` finds, polled; rejects after {@link WAIT_MS}. */
const poll = <T>(find: () => T | undefined, what: string): Promise<T> => pollFor(find, what, WAIT_MS);

/** The bridged host, its wire recorded, on a fresh CODEX_HOME (whose model is `script`) and data dir. */
async function bridged(
  script: (request: ModelRequest) => ScriptedReply,
  options: BridgedHostOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<{ host: SpawnedHost; wire: string[]; model: { requests: ModelRequest[] }; home: CodexTestHome }> {
  const model = await startResponsesServer(script);
  cleanups.push(() => model.close());
  const home = makeCodexHome({ baseUrl: model.baseUrl });
  cleanups.push(() => home.remove());
  Object.assign(home.env, options.env);
  const data = tempDataDir();
  cleanups.push(() => data.remove());
  const wire: string[] = [];
  const { env: _env, ...hostOptions } = options;
  const host = spawnBridgedHost(home, data.dir, {
    defaultTimeoutMs: WAIT_MS,
    wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
    ...hostOptions,
  });
  cleanups.push(() => host.close());
  return { host, wire, model, home };
}

function below(pid: number, match: (p: ProcessInfo) => boolean): ProcessInfo | undefined {
  return descendantsOf(pid, scanProcesses(true)).find(match);
}

/** The text of every user message in a model request's input. */
function userTexts(request: ModelRequest): string {
  return JSON.stringify(request.input.filter((i) => i["role"] === "user"));
}

describe("a bridged turn whose agent fails it (real processes)", { timeout: 120_000 }, () => {
  it("an app-server that never answers turn/interrupt: the Stop ends the turn failed after the stop grace, its command reaped first", async () => {
    const stopGraceMs = 300;
    const { host, wire } = await bridged(() => ({ kind: "message", text: "unused" }), {
      agent: { bin: FAKE, stopGraceMs, killGraceMs: 200 },
      env: { FAKE_CODEX_MODE: "deaf-interrupt" },
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const { turnId } = await turn.accepted;
    const sleep = await poll(() => (toolItems(host, turnId).length > 0 ? below(host.pid, (p) => p.command === "sleep 61") : undefined), "the fake's sleep 61");
    stray.push(sleep.pid);
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(sleep.pid);
    });

    const stopAt = Date.now();
    const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });
    const stopMs = Date.now() - stopAt;

    expect(ack).toBe("accepted");
    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toBe(
      `failed: codex app-server did not answer turn/interrupt within ${stopGraceMs} ms; its tool processes were stopped and it was shut down`,
    );
    expect(terminal.cause).toBeUndefined();
    expect(goneAtTerminal).toBe(true);
    expect(toolItems(host, turnId)[0]).toMatchObject({ tool: "shell", status: "failed" });
    // The deaf app-server was shut down with the turn; the next turn would start a new one.
    expect(below(host.pid, (p) => p.command.includes("fake-app-server"))).toBeUndefined();
    console.log(`deaf app-server: turn/cancel → failed terminal ${stopMs} ms (stop grace ${stopGraceMs} ms, kill grace 200 ms)`);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("the real app-server SIGKILLed mid-command: the turn fails saying so, its sleep reaped; the next turn runs on a new app-server on the same thread", async () => {
    const first = "Remember the word PELICAN, then run the command.";
    // The first turn's request runs the sleep; any later request (the second turn) answers.
    const { host, wire, model } = await bridged((r) => (r.n === 1 ? { kind: "exec", cmd: CMD } : { kind: "message", text: "The word was PELICAN." }));
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: first }] });
    const { turnId } = await turn.accepted;
    const sleep = await poll(() => (toolItems(host, turnId).length > 0 ? below(host.pid, (p) => p.command === "sleep 31") : undefined), "the sleep");
    stray.push(sleep.pid);
    const codex = below(host.pid, (p) => p.pid === p.pgid && p.command.includes("app-server"));
    expect(codex, "the codex app-server below the host").toBeDefined();
    let goneAtTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtTerminal = processGone(sleep.pid);
    });

    process.kill(codex!.pid, "SIGKILL");
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toBe("failed: the codex app-server died mid-turn (killed by SIGKILL); the next turn starts a new one on the same thread");
    expect(goneAtTerminal).toBe(true);
    expect(toolItems(host, turnId)[0]).toMatchObject({ tool: "shell", status: "failed" });

    const next = host.startTurn({ sessionId, input: [{ type: "text", text: "What was the word?" }] });
    const { turnId: nextId } = await next.accepted;
    expect((await next.completed).terminal).toBe("completed");
    expect(host.items.itemsOf(nextId).find((i) => i.kind === "message")).toMatchObject({ text: "The word was PELICAN." });
    const newCodex = below(host.pid, (p) => p.pid === p.pgid && p.command.includes("app-server"));
    expect(newCodex?.pid).not.toBe(codex!.pid);
    // Codex resumed the thread: the second turn's request carries the first turn's text.
    const asked = model.requests.at(-1)!;
    expect(userTexts(asked)).toContain("What was the word?");
    expect(userTexts(asked)).toContain("PELICAN");
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
