/**
 * Codex's subagents through `muse serve --agent codex`: a real host process bridged to the real
 * Codex binary (@openai/codex 0.169.0), whose scripted model (../fixtures/codex-subagents/) spawns
 * a child thread with `spawn_agent` and waits on it. The child thread is an MSP child session: the
 * parent's `spawn_agent` toolCall is linked to it (`subagent`), its turn names its parent, its
 * command is its own `shell` toolCall. One Stop of the parent during the child's `sleep 47` ends
 * the child turn `cancelled` (cause `parent`), then the delegating call, then the parent
 * (`cancelled`, cause `user`), with the sleep gone before either terminal; a tree that runs to its
 * end completes the delegating call with the child's last message; the child thread's approval
 * request is the child session's `tool/approve`; a Stop of the child alone ends it `cancelled`
 * (cause `user`), its call `failed`, and the parent goes on; a child the host refuses (a bound) is
 * interrupted with the parent. The recorded wire keeps every
 * MSP invariant (`checkTranscript`, invariant 7 included). Waits are bounded; nothing asserts a duration.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ByteChannel } from "../../src/index.js";
import { spawnHost, type SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { descendantsOf, scanProcesses } from "../../packages/host/src/bridge/processTree.js";
import { spawnBridgedHost } from "../fixtures/codex/bridgedHost.js";
import { makeCodexHome, type CodexHomeOptions, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startSubagentModel, type SubagentModel, type SubagentScript } from "../fixtures/codex-subagents/subagentModel.js";
import { processGone } from "../helpers/processGone.js";
import { tempDataDir } from "../helpers/referenceHost.js";
import { pollUntil } from "../helpers/poll.js";

const WAIT_MS = 30_000;
const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
}, 60_000);

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** The host's notifications on the recorded wire, in the order it sent them. */
function notifications(wire: readonly string[]): Sent[] {
  const out: Sent[] = [];
  for (const line of wire) {
    const entry = JSON.parse(line) as { dir: string; raw: string };
    if (entry.dir !== "server") continue;
    const message = JSON.parse(entry.raw) as { method?: string; id?: unknown; params?: Record<string, unknown> };
    if (typeof message.method === "string" && message.id === undefined && message.params !== undefined)
      out.push({ method: message.method, params: message.params });
  }
  return out;
}

type Item = Record<string, unknown> & { kind?: string; tool?: string; status?: string; turnId?: string };

/** The last state of each item of turn `turnId`, as its item/completed says it. */
function completedItems(wire: readonly string[], turnId: string): Item[] {
  return notifications(wire)
    .filter((n) => n.method === "item/completed" && (n.params["item"] as Item).turnId === turnId)
    .map((n) => n.params["item"] as Item);
}

/** The bridged host on Codex with the scripted subagent model (`hostArgs` added to its command line), its wire recorded. */
async function bridged(
  script: SubagentScript,
  homeOptions: Omit<CodexHomeOptions, "baseUrl"> = {},
  hostArgs: readonly string[] = [],
): Promise<{ host: SpawnedHost; wire: string[]; model: SubagentModel }> {
  const model = await startSubagentModel(script);
  cleanups.push(() => model.close());
  const home = makeCodexHome({ baseUrl: model.baseUrl, ...homeOptions });
  cleanups.push(() => home.remove());
  const data = tempDataDir();
  cleanups.push(() => data.remove());
  const wire: string[] = [];
  const wrapChannel = (c: ByteChannel) => recordingChannel(c, (e) => wire.push(formatTranscriptEntry(e)));
  const host =
    hostArgs.length === 0
      ? spawnBridgedHost(home, data.dir, { defaultTimeoutMs: WAIT_MS, wrapChannel })
      : spawnBridgedHostWith(home, data.dir, hostArgs, wrapChannel);
  cleanups.push(() => host.close());
  return { host, wire, model };
}

/** `muse serve --agent codex --stdio` from the sources with `args` added (a bound), as ../fixtures/codex/bridgedHost.ts spawns it. */
function spawnBridgedHostWith(home: CodexTestHome, dataDir: string, args: readonly string[], wrapChannel: (c: ByteChannel) => ByteChannel): SpawnedHost {
  const tsx = pathToFileURL(createRequire(join(repoRoot, "package.json")).resolve("tsx")).href;
  return spawnHost({
    command: process.execPath,
    args: ["--import", tsx, join(repoRoot, "packages/host/src/serve/main.ts"), "serve", "--stdio", "--agent", "codex", "--data", dataDir, ...args],
    cwd: home.workDir,
    env: { ...home.env, CODEX_HOME: home.codexHome },
    stderr: "ignore",
    killGraceMs: 5_000,
    defaultTimeoutMs: WAIT_MS,
    wrapChannel,
  });
}

/** Resolves once `predicate` holds, polled; rejects after {@link WAIT_MS}. */
const poll = (predicate: () => boolean, what: string): Promise<void> => pollUntil(predicate, what, WAIT_MS);

/** The child turn's `turn/started` (the one that names a parent). */
function childStarted(wire: readonly string[]): Record<string, unknown> | undefined {
  return notifications(wire).find((n) => n.method === "turn/started" && n.params["parent"] !== undefined)?.params;
}

/** Resolves with the pid of the child's `sleep 47` once it runs below the bridged host and shows as the child session's shell call. */
async function childSleeping(host: SpawnedHost, wire: readonly string[]): Promise<number> {
  let sleepPid = 0;
  await poll(() => {
    sleepPid = descendantsOf(host.pid, scanProcesses(true)).find((p) => p.command === "sleep 47")?.pid ?? 0;
    const child = childStarted(wire);
    const childShell = notifications(wire).some(
      (n) => n.method === "item/started" && (n.params["item"] as Item).tool === "shell" && (n.params["item"] as Item).turnId === child?.["turnId"],
    );
    return sleepPid > 0 && childShell;
  }, "the child's sleep running below the bridged host, shown as the child session's shell call");
  return sleepPid;
}

describe("Codex subagents through muse serve --agent codex (real codex app-server 0.169.0)", { timeout: 120_000 }, () => {
  it("one Stop of the parent during the child's sleep 47: child cancelled (parent), then its call, then the parent (user), the sleep gone first", async () => {
    const { host, wire } = await bridged({
      task: "Sleep for a while.",
      childCommand: "sleep 47",
      childMessage: "Child: slept.",
      parentMessage: "Parent: done.",
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const sleepPid = await childSleeping(host, wire);
    const child = childStarted(wire)!;
    const childTurnId = child["turnId"] as string;
    let goneAtChildTerminal: boolean | undefined;
    let goneAtParentTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === childTurnId) goneAtChildTerminal = processGone(sleepPid);
      if (params.turnId === turnId) goneAtParentTerminal = processGone(sleepPid);
    });

    const stopAt = Date.now();
    const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });
    const stopMs = Date.now() - stopAt;

    expect(ack).toBe("accepted");
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.cause).toEqual({ kind: "user" });
    expect(goneAtChildTerminal).toBe(true);
    expect(goneAtParentTerminal).toBe(true);
    // The child session: linked below the parent's spawn_agent call, its sleep closed cancelled.
    const sent = notifications(wire);
    const [spawn] = completedItems(wire, turnId).filter((i) => i.tool === "spawn_agent");
    expect(spawn).toMatchObject({
      status: "cancelled",
      failureReason: "subagent cancelled by its parent",
      subagent: { sessionId: child["sessionId"], turnId: childTurnId },
    });
    expect(JSON.parse(spawn!["args"] as string)).toEqual({ prompt: "Sleep for a while." });
    expect(child).toMatchObject({ depth: 1, parent: { sessionId, turnId, itemId: spawn!["itemId"] } });
    expect(child["sessionId"]).not.toBe(sessionId);
    const [shell] = completedItems(wire, childTurnId).filter((i) => i.tool === "shell");
    expect(shell).toMatchObject({ status: "cancelled", failureReason: "turn cancelled" });
    expect(JSON.parse(shell!["args"] as string)).toMatchObject({ command: expect.stringContaining("sleep 47") });
    const childEnd = sent.findIndex((n) => n.method === "turn/completed" && n.params["turnId"] === childTurnId);
    const spawnEnd = sent.findIndex((n) => n.method === "item/completed" && (n.params["item"] as Item).itemId === spawn!["itemId"]);
    const parentEnd = sent.findIndex((n) => n.method === "turn/completed" && n.params["turnId"] === turnId);
    expect(sent[childEnd]!.params).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    // Leaves first: the child's terminal, then the delegating call's end, then the parent's terminal.
    expect(childEnd).toBeGreaterThan(-1);
    expect(spawnEnd).toBeGreaterThan(childEnd);
    expect(parentEnd).toBeGreaterThan(spawnEnd);
    console.log(`bridged tree stop: turn/cancel → parent's cancelled terminal ${stopMs} ms, reason ${JSON.stringify(terminal.reason)}`);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a tree that runs to its end: the child's command and message in its session, the spawn call completed with the child's last message", async () => {
    const { host, wire } = await bridged({
      task: "Say hello.",
      childCommand: "echo child-ran",
      childMessage: "Child: hello.",
      parentMessage: "Parent: the child said hello.",
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("completed");
    const child = childStarted(wire)!;
    const childTurnId = child["turnId"] as string;
    const [spawn] = completedItems(wire, turnId).filter((i) => i.tool === "spawn_agent");
    expect(spawn).toMatchObject({ status: "completed", visibleOutput: "Child: hello.", subagent: { sessionId: child["sessionId"], turnId: childTurnId } });
    const childItems = completedItems(wire, childTurnId);
    expect(childItems.find((i) => i.tool === "shell")).toMatchObject({ status: "completed", visibleOutput: expect.stringContaining("child-ran") });
    expect(childItems.find((i) => i.kind === "message")).toMatchObject({ text: "Child: hello." });
    expect(completedItems(wire, turnId).find((i) => i.kind === "message")).toMatchObject({ text: "Parent: the child said hello." });
    const sent = notifications(wire);
    const childEnd = sent.findIndex((n) => n.method === "turn/completed" && n.params["turnId"] === childTurnId);
    expect(sent[childEnd]!.params).toMatchObject({ terminal: "completed" });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a child thread's approval request is asked as tool/approve about the child session's shell call; approved, it runs and the tree completes", async () => {
    const { host, wire } = await bridged(
      { task: "Publish it.", childCommand: "echo child-published", childEscalates: true, childMessage: "Child: published.", parentMessage: "Parent: done." },
      { approvalPolicy: "on-request", sandboxMode: "workspace-write" },
    );
    const asked: Array<{ sessionId: string; tool: string }> = [];
    host.onApproval((request) => {
      asked.push({ sessionId: request.sessionId, tool: request.tool });
      return { decision: "approve" };
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const terminal = await turn.completed;

    expect(terminal.terminal).toBe("completed");
    const child = childStarted(wire)!;
    expect(asked).toEqual([{ sessionId: child["sessionId"], tool: "shell" }]);
    const shell = completedItems(wire, child["turnId"] as string).find((i) => i.tool === "shell");
    expect(shell).toMatchObject({ status: "completed", approval: "approved", visibleOutput: expect.stringContaining("child-published") });
    const [spawn] = completedItems(wire, turnId).filter((i) => i.tool === "spawn_agent");
    expect(spawn).toMatchObject({ status: "completed", visibleOutput: "Child: published." });
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a Stop of the child turn alone: the child cancelled (user) with its sleep gone, its call failed, and the parent goes on to complete", async () => {
    const { host, wire, model } = await bridged({
      task: "Sleep for a while.",
      childCommand: "sleep 47",
      childMessage: "Child: slept.",
      parentMessage: "Parent: went on.",
      // Codex's wait_agent does not come back for an interrupted agent: it waits out its timeout.
      waitMs: 10_000,
    });
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    const sleepPid = await childSleeping(host, wire);
    const child = childStarted(wire)!;
    const childTurnId = child["turnId"] as string;
    let goneAtChildTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === childTurnId) goneAtChildTerminal = processGone(sleepPid);
    });

    await host.command("turn/cancel", { sessionId: child["sessionId"] as string, turnId: childTurnId });
    const terminal = await turn.completed;

    expect(goneAtChildTerminal).toBe(true);
    const sent = notifications(wire);
    expect(sent.find((n) => n.method === "turn/completed" && n.params["turnId"] === childTurnId)?.params).toMatchObject({
      terminal: "cancelled",
      cause: { kind: "user" },
    });
    expect(completedItems(wire, childTurnId).find((i) => i.tool === "shell")).toMatchObject({ status: "cancelled", failureReason: "turn cancelled" });
    const [spawn] = completedItems(wire, turnId).filter((i) => i.tool === "spawn_agent");
    expect(spawn).toMatchObject({ status: "failed", failureReason: "subagent cancelled" });
    expect(terminal.terminal).toBe("completed");
    expect(completedItems(wire, turnId).find((i) => i.kind === "message")).toMatchObject({ text: "Parent: went on." });
    console.log(
      `the parent's wait_agent came back with: ${
        model.requests
          .filter((r) => r.parent)
          .at(-1)
          ?.outputs.at(-1) ?? "nothing"
      }`,
    );
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });

  it("a child the host refuses (past --max-subagents-per-turn) runs unseen, and a Stop of the parent interrupts it too: its sleep gone, its turn goes no further", async () => {
    const { host, wire, model } = await bridged(
      { task: "Sleep for a while.", spawns: 2, childCommand: "sleep 47", childMessage: "Child: slept.", parentMessage: "Parent: done." },
      {},
      ["--max-subagents-per-turn", "1"],
    );
    const { sessionId } = await host.command("session/create", {});
    const turn = host.startTurn({ sessionId, input });
    const { turnId } = await turn.accepted;
    let sleeps: number[] = [];
    await poll(() => {
      sleeps = descendantsOf(host.pid, scanProcesses(true))
        .filter((p) => p.command === "sleep 47")
        .map((p) => p.pid);
      return sleeps.length === 2 && completedItems(wire, turnId).some((i) => i.tool === "spawn_agent");
    }, "both children's sleeps running, the second spawn_agent call refused");
    await childSleeping(host, wire);
    let goneAtParentTerminal: boolean | undefined;
    host.events.on("turn/completed", (params) => {
      if (params.turnId === turnId) goneAtParentTerminal = sleeps.every((pid) => processGone(pid));
    });

    const { turnCompleted: terminal } = await turn.cancel({ timeoutMs: WAIT_MS });
    const requestsAtStop = model.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 2000));

    expect(terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(goneAtParentTerminal).toBe(true);
    const spawns = completedItems(wire, turnId).filter((i) => i.tool === "spawn_agent");
    expect(spawns.map((i) => [i.status, i["failureReason"]]).sort()).toEqual([
      ["cancelled", "subagent cancelled by its parent"],
      ["failed", "subagent fan-out limit (1)"],
    ]);
    // Neither child's Codex turn went on after the Stop (a refused child left running would
    // report its killed command to the model and answer).
    expect(model.requests.slice(requestsAtStop).filter((r) => !r.parent)).toEqual([]);
    expect(model.requests.filter((r) => !r.parent && r.outputs.length > 0)).toEqual([]);
    await host.close();
    expect(checkTranscript(wire).problems).toEqual([]);
  });
});
