/**
 * A bridged host SIGKILLed mid-turn and started again on the same `--data`, against the real
 * Codex binary (@openai/codex 0.169.0) with the scripted Responses server as the model, driven
 * by the SDK's client. The bridge and its app-server are SIGKILLed together, so nothing of theirs
 * cleans up: the cut-off turn shows `failed: host restarted` when the session is resumed, the
 * `sleep` the killed Codex ran (its group on record under --data) is gone once the new host
 * serves, and the
 * session's next turn resumes the same Codex thread (`thread/resume`): the model's request
 * carries the first turn's text. Waits are bounded and generous; nothing asserts a duration.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TurnCompletedParams } from "../../src/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses, type ProcessInfo } from "../../packages/host/src/bridge/processTree.js";
import { codexThreadPath } from "../../packages/host/src/bridge/codex/codexThreadStore.js";
import { spawnBridgedHost } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { startResponsesServer, type ModelRequest } from "../fixtures/codex/responsesServer.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { existsSync } from "node:fs";
import { pollFor } from "../helpers/poll.js";

const WAIT_MS = 30_000;
/**
 * A command whose `sleep 31` outlives its agent: the process Codex spawns for a command (here the
 * shell) dies with Codex, as a lone `sleep` would, but the shell's child goes on running,
 * re-parented away from the agent.
 */
const CMD = "echo start; sleep 31; echo end";
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

describe("a bridged host SIGKILLed mid-turn and restarted (real codex app-server 0.169.0)", { timeout: 120_000 }, () => {
  it("the cut-off turn is failed: host restarted, its sleep is gone, and the next turn resumes the Codex thread", async () => {
    // The first turn's request runs the sleep; the next turn's request answers.
    const model = await startResponsesServer((r) => (r.n === 1 ? { kind: "exec", cmd: CMD } : { kind: "message", text: "The word was PELICAN." }));
    cleanups.push(() => model.close());
    const home = makeCodexHome({ baseUrl: model.baseUrl });
    cleanups.push(() => home.remove());
    const data = tempDataDir();
    cleanups.push(() => data.remove());

    const first = spawnBridgedHost(home, data.dir, { defaultTimeoutMs: WAIT_MS });
    cleanups.push(() => first.close());
    const { sessionId } = await first.command("session/create", {});
    const turn = first.startTurn({ sessionId, input: [{ type: "text", text: "Remember the word PELICAN, then run the command." }] });
    const { turnId } = await turn.accepted;
    const sleep = await poll(
      () => (first.items.itemsOf(turnId).some((i) => i.kind === "toolCall") ? below(first.pid, (p) => p.command === "sleep 31") : undefined),
      "the sleep below the first host",
    );
    stray.push(sleep.pid);
    const codex = below(first.pid, (p) => p.pid === p.pgid && p.command.includes("app-server"));
    expect(existsSync(codexThreadPath(data.dir, sessionId)), "the thread id is kept once the turn started").toBe(true);

    // The bridge and its Codex SIGKILLed at once (an OOM kill, a container stop): neither cleans anything up.
    expect(codex, "the codex app-server below the host").toBeDefined();
    process.kill(first.pid, "SIGKILL");
    process.kill(codex!.pid, "SIGKILL");
    await first.exited;
    expect(await waitGone([codex!.pid], WAIT_MS)).toBe(true);
    expect(await waitGone([sleep.pid], 1000), "the sleep outlives its bridge and its agent").toBe(false);

    const wire: string[] = [];
    const second = spawnBridgedHost(home, data.dir, {
      defaultTimeoutMs: WAIT_MS,
      wrapChannel: (c) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e))),
    });
    cleanups.push(() => second.close());
    const terminals = new Map<string, TurnCompletedParams>();
    second.events.on("turn/completed", (params) => void terminals.set(params.turnId, params));
    await second.command("session/resume", { sessionId });
    const cut = await poll(() => terminals.get(turnId), "the cut-off turn's terminal in the replay");

    expect(cut).toMatchObject({ terminal: "failed", reason: "host restarted" });
    // The restarted host killed the command group the killed one had on record, before it served.
    expect(processGone(sleep.pid)).toBe(true);

    const next = second.startTurn({ sessionId, input: [{ type: "text", text: "What was the word?" }] });
    const { turnId: nextId } = await next.accepted;
    expect((await next.completed).terminal).toBe("completed");
    expect(second.items.itemsOf(nextId).find((i) => i.kind === "message")).toMatchObject({ text: "The word was PELICAN." });
    const asked = model.requests.at(-1)!;
    expect(userTexts(asked)).toContain("What was the word?");
    expect(userTexts(asked)).toContain("PELICAN");
    await second.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
