/**
 * An ACP-bridged host (`muse serve --agent acp -- codex-acp`, the pinned codex-acp 0.16.0 native
 * binary, the scripted Responses server as its model) SIGKILLed mid-turn, alone, and started
 * again on the same `--data`, driven by the SDK's client: the agent and its command outlive the
 * killed host (codex-acp does not exit when its stdin closes) until the restarted host kills
 * what the killed one had on record; the first turn completes,
 * the turn cut off mid-command shows `failed: host restarted` when the session is resumed, and the
 * session's next turn runs in the ACP session the killed host had (`session/load`): the model's
 * request carries the first turn's text, and none of the history codex-acp replays while loading
 * becomes an item of that turn. An ACP session id the agent cannot load starts a new ACP session,
 * said in the host log, and the turn completes. Waits are bounded and generous; nothing asserts a duration.
 */
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { TurnCompletedParams } from "../../src/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses, type ProcessInfo } from "../../packages/host/src/bridge/processTree.js";
import { AcpSessionStore, acpSessionPath } from "../../packages/host/src/bridge/acp/acpSessionStore.js";
import { spawnAcpBridgedHost } from "../fixtures/acp/acpBridgedHost.js";
import { codexAcpHome } from "../fixtures/acp/codexAcpHome.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { startResponsesServer, type ModelRequest } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { pollFor } from "../helpers/poll.js";

const WAIT_MS = 30_000;
const CMD = "sleep 43";
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

/** Resolves with what `find` finds, polled; rejects after {@link WAIT_MS}. */
const poll = <T>(find: () => T | undefined, what: string): Promise<T> => pollFor(find, what, WAIT_MS);

const below = (pid: number, match: (p: ProcessInfo) => boolean): ProcessInfo | undefined => descendantsOf(pid, scanProcesses(true)).find(match);
const userTexts = (request: ModelRequest): string => JSON.stringify(request.input.filter((i) => i["role"] === "user"));

describe("an ACP-bridged host SIGKILLed mid-turn and restarted (real codex-acp 0.16.0)", { timeout: 150_000 }, () => {
  it("the cut-off turn is failed: host restarted, and the next turn loads the ACP session (session/load): its request carries turn 1's text", async () => {
    // Request 1 answers turn 1; request 2 runs the sleep the kill cuts off; later ones answer.
    const model = await startResponsesServer((r) => (r.n === 2 ? { kind: "exec", cmd: CMD } : { kind: "message", text: "The word was HERON." }));
    cleanups.push(() => model.close());
    const home = makeCodexHome({ baseUrl: model.baseUrl });
    cleanups.push(() => home.remove());
    const env = codexAcpHome(home);
    const data = tempDataDir();
    cleanups.push(() => data.remove());

    const first = spawnAcpBridgedHost(home, data.dir, { defaultTimeoutMs: WAIT_MS, env });
    cleanups.push(() => first.close());
    const { sessionId } = await first.command("session/create", {});
    const one = first.startTurn({ sessionId, input: [{ type: "text", text: "Remember the word HERON." }] });
    expect((await one.completed).terminal).toBe("completed");
    const stored = acpSessionPath(data.dir, sessionId);
    expect(existsSync(stored), "the ACP session id is kept once a turn ran").toBe(true);
    const acpSession = (JSON.parse(readFileSync(stored, "utf8")) as { sessionId: string }).sessionId;

    const cut = first.startTurn({ sessionId, input: [{ type: "text", text: "Run the command." }] });
    const { turnId: cutId } = await cut.accepted;
    const sleep = await poll(
      () => (first.items.itemsOf(cutId).some((i) => i.kind === "toolCall") ? below(first.pid, (p) => p.command === CMD) : undefined),
      "the sleep below the first host",
    );
    stray.push(sleep.pid);
    const agent = below(first.pid, (p) => p.pid === p.pgid && p.command.includes("codex-acp"));
    expect(agent, "codex-acp below the host, leading its own group").toBeDefined();

    // The host alone SIGKILLed (a crash): it cleans nothing up, and codex-acp does not exit when its
    // stdin closes, so the agent and its sleep outlive it, on record under --data.
    process.kill(first.pid, "SIGKILL");
    await first.exited;
    expect(processGone(agent!.pid), "codex-acp outlives a SIGKILLed host").toBe(false);

    const wire: string[] = [];
    const second = spawnAcpBridgedHost(home, data.dir, {
      defaultTimeoutMs: WAIT_MS,
      env,
      wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
    });
    cleanups.push(() => second.close());
    // The restarted host kills what the killed one had on record before it serves: the agent and its sleep.
    await second.command("host/info", {});
    expect(await waitGone([agent!.pid, sleep.pid], WAIT_MS), "the killed host's agent and its sleep, reaped by the restarted host").toBe(true);
    const terminals = new Map<string, TurnCompletedParams>();
    second.events.on("turn/completed", (params) => void terminals.set(params.turnId, params));
    await second.command("session/resume", { sessionId });
    expect(await poll(() => terminals.get(cutId), "the cut-off turn's terminal in the replay")).toMatchObject({ terminal: "failed", reason: "host restarted" });

    const before = model.requests.length;
    const next = second.startTurn({ sessionId, input: [{ type: "text", text: "What was the word?" }] });
    const { turnId: nextId } = await next.accepted;
    expect((await next.completed).terminal).toBe("completed");
    // Only the answer is the turn's: nothing of the history codex-acp replayed during session/load.
    expect(second.items.itemsOf(nextId).map((i) => (i.kind === "message" ? i.text : i.kind))).toEqual(["The word was HERON."]);
    const asked = model.requests.slice(before);
    expect(asked.length).toBeGreaterThan(0);
    expect(userTexts(asked.at(-1)!)).toContain("What was the word?");
    expect(userTexts(asked.at(-1)!)).toContain("Remember the word HERON.");
    expect((JSON.parse(readFileSync(stored, "utf8")) as { sessionId: string }).sessionId, "the same ACP session, loaded").toBe(acpSession);
    const secondAgent = below(second.pid, (p) => p.pid === p.pgid && p.command.includes("codex-acp"));
    expect(secondAgent).toBeDefined();
    await second.close();
    // A host that shuts down stops its agent, which would not exit by itself.
    expect(await waitGone([secondAgent!.pid], WAIT_MS), "the agent of a host that shut down").toBe(true);
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("an ACP session id the agent cannot load: a new ACP session, the load's failure in the host log, the turn completed", async () => {
    const model = await startResponsesServer(() => ({ kind: "message", text: "Fresh start." }));
    cleanups.push(() => model.close());
    const home = makeCodexHome({ baseUrl: model.baseUrl });
    cleanups.push(() => home.remove());
    const data = tempDataDir();
    cleanups.push(() => data.remove());
    const host = spawnAcpBridgedHost(home, data.dir, { defaultTimeoutMs: WAIT_MS, env: codexAcpHome(home), stderr: "pipe" });
    cleanups.push(() => host.close());
    let log = "";
    host.process.stderr!.setEncoding("utf8").on("data", (text: string) => (log += text));
    const { sessionId } = await host.command("session/create", {});
    const unknown = "019ae3c2-5a0e-7d51-9c7e-3d1f0b4a2e11";
    new AcpSessionStore(acpSessionPath(data.dir, sessionId)).save(unknown);

    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "Hello." }] });
    expect((await turn.completed).terminal).toBe("completed");
    const kept = new AcpSessionStore(acpSessionPath(data.dir, sessionId)).load();
    expect(kept).toBeDefined();
    expect(kept).not.toBe(unknown);
    expect(log).toContain(`session/load of ${unknown} failed`);
  });
});
