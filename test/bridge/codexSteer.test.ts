/**
 * Steering a bridged turn, driven by the SDK's client (`turn.steer`):
 * - against the real Codex binary (@openai/codex 0.169.0) with the scripted Responses server:
 *   a steer during a running command is Codex's `turn/steer` (with `expectedTurnId`); the model's
 *   next request carries the steer's text, and the steering item completes `completed` (consumed)
 *   once Codex took it into its conversation;
 * - against the fake app-server (test/fixtures/codex/fake-app-server.sh `deaf-interrupt`), which
 *   refuses `turn/steer`: the steer is refused `turn_not_running` with Codex's words in
 *   `data.agentRefusal`, and no steering item is logged.
 * Waits are bounded and generous; nothing asserts a duration.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import type { SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost, type BridgedHostOptions } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ModelRequest, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { processGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { pollFor } from "../helpers/poll.js";

const WAIT_MS = 30_000;
const STEER = "Also say the word HERON.";
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

async function bridged(
  script: (request: ModelRequest) => ScriptedReply,
  options: BridgedHostOptions & { env?: NodeJS.ProcessEnv } = {},
): Promise<{ host: SpawnedHost; wire: string[]; requests: ModelRequest[] }> {
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
  return { host, wire, requests: model.requests };
}

/** Starts a turn and resolves once its command (`command`, the process) runs below the host. */
async function runningTurn(host: SpawnedHost, command: string) {
  const { sessionId } = await host.command("session/create", {});
  const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
  const { turnId } = await turn.accepted;
  const pid = await poll(
    () =>
      host.items.itemsOf(turnId).some((i) => i.kind === "toolCall")
        ? descendantsOf(host.pid, scanProcesses(true)).find((p) => p.command === command)?.pid
        : undefined,
    `${command} below the host`,
  );
  stray.push(pid);
  return { turn, turnId };
}

describe("steering a bridged Codex turn", { timeout: 120_000 }, () => {
  it("a steer during a running command reaches Codex: the model's next request carries it, and its item completes consumed", async () => {
    const { host, wire, requests } = await bridged(execThenMessage("sleep 3", "Done, and HERON."));
    const { turn, turnId } = await runningTurn(host, "sleep 3");

    const { steerId } = await turn.steer([{ type: "text", text: STEER }], { timeoutMs: WAIT_MS });
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("completed");
    const item = host.items.itemsOf(turnId).find((i) => i.kind === "message" && i.steerId === steerId);
    expect(item).toMatchObject({ author: "user", text: STEER, status: "completed" });
    // The request after the command's output: Codex sent the model the steer as user input.
    const after = requests.filter((r) => r.hasToolOutput).at(-1);
    expect(after, "a request after the command").toBeDefined();
    expect(JSON.stringify(after!.input.filter((i) => i["role"] === "user"))).toContain(STEER);
    expect(JSON.stringify(requests[0]!.input)).not.toContain(STEER);
    await host.close();
    // Consumed when Codex took it in (its echo), before the answer it led to, not at the turn's end.
    const sent = wire.map((line) => JSON.parse((JSON.parse(line) as { raw: string }).raw) as { method?: string; params?: { item?: Record<string, unknown> } });
    const consumedAt = sent.findIndex((m) => m.method === "item/completed" && m.params?.item?.["steerId"] === steerId);
    const answerAt = sent.findIndex((m) => m.method === "item/started" && m.params?.item?.["kind"] === "message" && m.params.item["author"] === undefined);
    expect(consumedAt).toBeGreaterThan(-1);
    expect(consumedAt).toBeLessThan(answerAt);
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a steer Codex refuses is refused turn_not_running with Codex's words, and nothing is logged", async () => {
    const { host, wire } = await bridged(() => ({ kind: "message", text: "unused" }), {
      agent: { bin: `${repoRoot}/test/fixtures/codex/fake-app-server.sh`, stopGraceMs: 300, killGraceMs: 200 },
      env: { FAKE_CODEX_MODE: "deaf-interrupt" },
    });
    const { turn, turnId } = await runningTurn(host, "sleep 61");

    const refused = await turn.steer([{ type: "text", text: STEER }], { timeoutMs: WAIT_MS }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(refused).toBeInstanceOf(MspError);
    expect(refused).toMatchObject({ kind: "commandRejected", data: { reason: "turn_not_running", turnId, agentRefusal: "no active turn to steer" } });
    expect(host.items.itemsOf(turnId).filter((i) => i.kind === "message")).toEqual([]);
    await turn.cancel({ timeoutMs: WAIT_MS });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
