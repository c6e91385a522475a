/**
 * Subagents (issue 23) on the reference host, over stdio and over WebSocket, with real tool
 * processes: a 3-level tree (a parent, two children, one grandchild, each running a shell tool)
 * stopped by one `turn/cancel` of the parent, leaves first, every tool process gone; a child
 * stopped on its own while the parent goes on; a child's question withdrawn when the parent is
 * stopped (its tool never runs); a `turn/cancel` of one child stopping that subtree only; the depth
 * and fan-out bounds; a shutdown ending the tree `disposed`; a restart mid-tree. Each wire passes
 * checkTranscript (invariant 7 included).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import type { MspClient } from "../../src/index.js";
import { checkTranscriptParts, formatTranscriptEntry, recordingWebSocket } from "../../src/testing/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { waitGone } from "../helpers/processGone.js";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { crashHost, killGroups, model, startHost, tempDataDir, until } from "../helpers/referenceHost.js";
import { startWsHost } from "../helpers/wsHost.js";
import { HostProcess } from "../host/hostProcess.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Transport = "stdio" | "websocket";

interface Hosted {
  client: MspClient;
  wire: string[];
  /** The host's pid (stdio only). */
  pid?: number;
}

async function host(transport: Transport, modelName: string, args: string[] = [], env?: NodeJS.ProcessEnv): Promise<Hosted> {
  if (transport === "stdio") {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const run = startHost(model(modelName), data.dir, args, env);
    cleanups.push(() => run.host.close());
    return { client: run.host, wire: run.wire };
  }
  const ws = await startWsHost(model(modelName), { args, ...(env === undefined ? {} : { env }) });
  cleanups.push(() => ws.stop());
  const wire: string[] = [];
  const WebSocketClass = recordingWebSocket(WebSocket as unknown as WebSocketConstructor, (e) => wire.push(formatTranscriptEntry(e)));
  const client = await connectWebSocket(`ws://127.0.0.1:${ws.port}/`, { token: ws.token, WebSocket: WebSocketClass, defaultTimeoutMs: 15_000 });
  cleanups.push(() => client.close());
  return { client, wire };
}

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** The host's notifications on the wire, in the order it sent them. */
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

/** The pids the tree's shell tools printed (`started <pid>`), from every session's output. */
function toolPids(wire: readonly string[]): number[] {
  const pids = new Set<number>();
  for (const n of notifications(wire)) {
    const text = JSON.stringify(n.params);
    for (const m of text.matchAll(/started (\d+)/g)) pids.add(Number(m[1]));
  }
  return [...pids];
}

function terminals(wire: readonly string[]): Array<Record<string, unknown>> {
  return notifications(wire)
    .filter((n) => n.method === "turn/completed")
    .map((n) => n.params);
}

function childStarts(wire: readonly string[]): Array<Record<string, unknown>> {
  return notifications(wire)
    .filter((n) => n.method === "turn/started" && n.params["parent"] !== undefined)
    .map((n) => n.params);
}

/** The final state of every tool call that delegated (its `item/completed`), in order. */
function delegatingCalls(wire: readonly string[]): Array<Record<string, unknown>> {
  return notifications(wire)
    .filter((n) => n.method === "item/completed")
    .map((n) => n.params["item"] as Record<string, unknown>)
    .filter((item) => item["tool"] === "task");
}

/** Index of the first notification matching `pred`. */
function at(wire: readonly string[], pred: (n: Sent) => boolean): number {
  return notifications(wire).findIndex(pred);
}

async function expectWellFormed(hosted: Hosted): Promise<void> {
  await hosted.client.close();
  expect(checkTranscriptParts([hosted.wire]).flatMap((part) => part.problems)).toEqual([]);
}

describe.each<Transport>(["stdio", "websocket"])("subagents over %s", (transport) => {
  it("one turn/cancel of the parent stops a 3-level tree: leaves first, causes right, every tool process gone", async () => {
    const hosted = await host(transport, "subagents-tree.json");
    const { client, wire } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const parent = client.startTurn({ sessionId, input });
    const { turnId } = await parent.accepted;
    // All four shells (parent, two children, grandchild) run at once.
    await until(client, () => toolPids(wire).length === 4, "four running tools", 15_000);
    const pids = toolPids(wire);
    const starts = childStarts(wire);
    expect(starts.map((s) => s["depth"]).sort()).toEqual([1, 1, 2]);
    const { turnCompleted: terminal } = await parent.cancel({ timeoutMs: 15_000 });
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.cause).toEqual({ kind: "user" });
    await until(client, () => terminals(wire).length === 4, "four terminals");
    // Every child turn ended cancelled with cause parent.
    const ends = terminals(wire);
    const childEnds = ends.filter((t) => t["turnId"] !== turnId);
    expect(childEnds).toHaveLength(3);
    for (const t of childEnds) expect(t).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    // Leaves first: the grandchild, then its delegating call, then worker-b; the parent's terminal last.
    const grandchild = starts.find((s) => s["depth"] === 2) as Record<string, unknown>;
    const grandchildEnd = at(wire, (n) => n.method === "turn/completed" && n.params["turnId"] === grandchild["turnId"]);
    const link = grandchild["parent"] as { sessionId: string; turnId: string; itemId: string };
    const callEnd = at(wire, (n) => n.method === "item/completed" && (n.params["item"] as { itemId: string }).itemId === link.itemId);
    const workerEnd = at(wire, (n) => n.method === "turn/completed" && n.params["turnId"] === link.turnId);
    const parentEnd = at(wire, (n) => n.method === "turn/completed" && n.params["turnId"] === turnId);
    expect(grandchildEnd).toBeGreaterThanOrEqual(0);
    expect(grandchildEnd).toBeLessThan(callEnd);
    expect(callEnd).toBeLessThan(workerEnd);
    expect(workerEnd).toBeLessThan(parentEnd);
    // The delegating calls: cancelled, each keeping what its child wrote.
    const calls = delegatingCalls(wire);
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(call).toMatchObject({ status: "cancelled" });
    expect(calls.map((c) => c["visibleOutput"]).sort()).toEqual(["Part A: running the slow check.", "Part B: delegating the search.", "Searching the tree."]);
    // No tool process of the tree is left running.
    expect(await waitGone(pids, 5_000)).toBe(true);
    await expectWellFormed(hosted);
  });

  it("a child stopped on its own fails its call (its text kept) and the parent goes on", async () => {
    const hosted = await host(transport, "subagents-own-stop.json");
    const { client, wire } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const done = await client.startTurn({ sessionId, input }).completed;
    expect(done.terminal).toBe("completed");
    const calls = delegatingCalls(wire);
    expect(calls[0]).toMatchObject({ status: "completed", visibleOutput: "all green." });
    expect(calls[1]).toMatchObject({ status: "failed", failureReason: "subagent cancelled", visibleOutput: "Half of an answer" });
    const childEnds = terminals(wire).filter((t) => t["turnId"] !== done.turnId);
    expect(childEnds.map((t) => t["terminal"])).toEqual(["completed", "cancelled"]);
    expect(childEnds[1]?.["cause"]).toEqual({ kind: "hook", reason: "budget spent" });
    await expectWellFormed(hosted);
  });

  it('a child whose model errs ends failed: its call fails "subagent failed: <reason>" with its text kept, and the parent goes on', async () => {
    const hosted = await host(transport, "subagents-child-fails.json");
    const { client, wire } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const done = await client.startTurn({ sessionId, input }).completed;
    expect(done.terminal).toBe("completed");
    const [call] = delegatingCalls(wire);
    expect(call).toMatchObject({ status: "failed", failureReason: "subagent failed: provider error 529: overloaded", visibleOutput: "Found two files" });
    const childEnds = terminals(wire).filter((t) => t["turnId"] !== done.turnId);
    expect(childEnds).toHaveLength(1);
    expect(childEnds[0]).toMatchObject({ terminal: "failed", reason: "failed: provider error 529: overloaded" });
    expect(childEnds[0]?.["cause"]).toBeUndefined();
    // Nothing of the failing step streamed.
    expect(JSON.stringify(wire)).not.toContain("never streamed");
    await expectWellFormed(hosted);
  });

  it("a child's open question is withdrawn when the parent is stopped, and its tool never runs", async () => {
    const marker = join(tempDataDir().dir, "marker");
    const hosted = await host(transport, "subagents-approval.json", [], { ...process.env, MUSE_MARKER: marker });
    const { client, wire } = hosted;
    const asked: string[] = [];
    let heard: () => void = () => {};
    const question = new Promise<void>((resolve) => (heard = resolve));
    client.onApproval((request) => {
      asked.push(request.sessionId);
      heard();
      return new Promise(() => {}); // never answered: the cancel withdraws it
    });
    const { sessionId } = await client.command("session/create", {});
    const parent = client.startTurn({ sessionId, input });
    await parent.accepted;
    await Promise.race([question, new Promise((_, reject) => setTimeout(() => reject(new Error("no question within 10 s")), 10_000))]);
    const child = childStarts(wire)[0] as Record<string, unknown>;
    expect(asked[0]).toBe(child["sessionId"]);
    const { turnCompleted: terminal } = await parent.cancel({ timeoutMs: 15_000 });
    expect(terminal.terminal).toBe("cancelled");
    const childEnd = terminals(wire).find((t) => t["turnId"] === child["turnId"]);
    expect(childEnd).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    const shell = notifications(wire)
      .filter((n) => n.method === "item/completed" && n.params["sessionId"] === child["sessionId"])
      .map((n) => n.params["item"] as Record<string, unknown>)
      .find((item) => item["tool"] === "shell");
    expect(shell).toMatchObject({ status: "cancelled", approval: "cancelled", visibleOutput: "" });
    expect(existsSync(marker)).toBe(false);
    await expectWellFormed(hosted);
  });

  it("a turn/cancel of one child stops that subtree only: its call fails, the parent goes on to its other child", async () => {
    const hosted = await host(transport, "subagents-tree.json");
    const { client, wire } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const parent = client.startTurn({ sessionId, input });
    const { turnId } = await parent.accepted;
    await until(client, () => toolPids(wire).length === 4, "four running tools", 15_000);
    const workerB = childStarts(wire).find(
      (s) => s["depth"] === 1 && notifications(wire).some((n) => n.params["sessionId"] === s["sessionId"] && JSON.stringify(n.params).includes("Part B")),
    );
    expect(workerB).toBeDefined();
    await client.command("turn/cancel", { sessionId: workerB?.["sessionId"], turnId: workerB?.["turnId"] });
    const workerBCall = () => delegatingCalls(wire).find((c) => (c["subagent"] as { turnId: string }).turnId === workerB?.["turnId"]);
    await until(client, () => workerBCall() !== undefined, "worker-b's call completed");
    const ends = terminals(wire);
    expect(ends.find((t) => t["turnId"] === workerB?.["turnId"])).toMatchObject({ terminal: "cancelled", cause: { kind: "user" } });
    expect(ends.find((t) => t["turnId"] !== workerB?.["turnId"])).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    expect(ends).toHaveLength(2);
    expect(workerBCall()).toMatchObject({ status: "failed", failureReason: "subagent cancelled" });
    // The parent and worker-a still run; then the parent's own Stop ends the rest.
    expect(ends.some((t) => t["turnId"] === turnId)).toBe(false);
    const { turnCompleted: terminal } = await parent.cancel({ timeoutMs: 15_000 });
    expect(terminal.cause).toEqual({ kind: "user" });
    expect(await waitGone(toolPids(wire), 5_000)).toBe(true);
    await expectWellFormed(hosted);
  });

  it("bounds: a task call past the depth limit fails without a session, and one past the fan-out limit fails", async () => {
    const hosted = await host(transport, "subagents-deep.json", ["--max-subagent-depth", "2", "--max-subagents-per-turn", "1"]);
    const { client, wire } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const done = await client.startTurn({ sessionId, input }).completed;
    expect(done.terminal).toBe("completed");
    expect(childStarts(wire).map((s) => s["depth"])).toEqual([1, 2, 1]);
    const calls = delegatingCalls(wire);
    const refused = calls.filter((c) => c["status"] === "failed").map((c) => c["failureReason"]);
    expect(refused.sort()).toEqual(["subagent depth limit (2)", "subagent fan-out limit (1)"]);
    await expectWellFormed(hosted);
  });
});

describe("subagents across a shutdown and a restart (stdio)", () => {
  it("a host shutdown (SIGTERM) ends the running tree disposed, leaves first, every tool process gone", async () => {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const host = HostProcess.start(["--script", model("subagents-tree.json"), "--data", data.dir]);
    cleanups.push(() => host.stop());
    const sessionId = String((await host.request("session/create", {})).result?.["sessionId"]);
    const turnId = String((await host.request("turn/start", { sessionId, input })).result?.["turnId"]);
    await host.waitFor(() => toolPids(host.transcript).length === 4, 15_000);
    const pids = toolPids(host.transcript);
    host.child.kill("SIGTERM");
    expect(await host.exited).toEqual({ code: 0, signal: null });
    const wire = host.transcript;
    const ends = terminals(wire);
    expect(ends).toHaveLength(4);
    for (const t of ends) expect(t).toMatchObject({ terminal: "cancelled", cause: { kind: "disposed" } });
    expect(ends.at(-1)?.["turnId"]).toBe(turnId);
    const grandchild = childStarts(wire).find((s) => s["depth"] === 2) as Record<string, unknown>;
    const link = grandchild["parent"] as { turnId: string };
    const order = ends.map((t) => t["turnId"]);
    expect(order.indexOf(grandchild["turnId"])).toBeLessThan(order.indexOf(link.turnId));
    expect(delegatingCalls(wire).map((c) => c["status"])).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(await waitGone(pids, 5_000)).toBe(true);
    expect(checkTranscriptParts([wire]).flatMap((part) => part.problems)).toEqual([]);
  });

  it("a restart mid-tree closes every turn of the tree failed: host restarted, leaves first, and no tool of it survives", async () => {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const run = startHost(model("subagents-tree.json"), data.dir);
    cleanups.push(() => run.host.close());
    const { sessionId } = await run.host.command("session/create", {});
    const parent = run.host.startTurn({ sessionId, input });
    await parent.accepted;
    await until(run.host, () => toolPids(run.wire).length === 4, "four running tools", 15_000);
    const pids = toolPids(run.wire);
    const starts = childStarts(run.wire);
    const orphans = crashHost(run.host.pid);
    cleanups.push(() => killGroups(orphans));
    await run.host.close();

    // The next host on the same data: recovery closes the tree from the leaves up.
    const again = createHost({
      dataDir: data.dir,
      models: new Map([["default", loadScriptedModel(model("subagents-tree.json"), "default")]]),
      defaultModel: "default",
    });
    cleanups.push(() => again.shutdown());
    const depthOf = new Map<string, number>([[sessionId, 0], ...starts.map((s): [string, number] => [String(s["sessionId"]), Number(s["depth"])])]);
    const recovered = again.recovered.map((r) => r.sessionId);
    expect(new Set(recovered)).toEqual(new Set(depthOf.keys()));
    const depths = recovered.map((id) => depthOf.get(id));
    expect(depths).toEqual([...depths].sort((a, b) => (b ?? 0) - (a ?? 0))); // deepest first
    expect(depths[0]).toBe(2);
    expect(depths.at(-1)).toBe(0);
    for (const r of again.recovered) expect(r.closedTurns).toHaveLength(1);
    // The parent's two delegating calls are closed too (failed), with the tree's other open items.
    const parentRecovery = again.recovered.find((r) => r.sessionId === sessionId);
    for (const s of starts.filter((x) => x["depth"] === 1)) expect(parentRecovery?.closedItems).toContain((s["parent"] as { itemId: string }).itemId);
    // Each delegating call is closed with what its subagent had said, never empty.
    const closedCalls = starts.map((s) => {
      const link = s["parent"] as { sessionId: string; itemId: string };
      const records = [...readSessionLog(sessionLogPath(data.dir, link.sessionId))];
      const closing = records
        .filter((r) => r.type === "notification" && r.method === "item/completed")
        .map((r) => (r as unknown as { params: { item: Record<string, unknown> } }).params.item);
      return closing.find((item) => item["itemId"] === link.itemId);
    });
    expect(closedCalls.map((c) => c?.["failureReason"])).toEqual(["host restarted", "host restarted", "host restarted"]);
    expect(closedCalls.map((c) => c?.["visibleOutput"]).sort()).toEqual([
      "Part A: running the slow check.",
      "Part B: delegating the search.",
      "Searching the tree.",
    ]);
    // The restarted host killed the tool groups the crashed one left running.
    expect(await waitGone(pids, 5_000)).toBe(true);
  });
});

describe("who hears a tree (WebSocket, two connections)", () => {
  it("a connection that resumes the parent mid-tree hears the child sessions from then on and is asked the child's question", async () => {
    const marker = join(tempDataDir().dir, "marker");
    const ws = await startWsHost(model("subagents-approval.json"), { env: { ...process.env, MUSE_MARKER: marker } });
    cleanups.push(() => ws.stop());
    const connect = async () => {
      const client = await connectWebSocket(`ws://127.0.0.1:${ws.port}/`, {
        token: ws.token,
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        defaultTimeoutMs: 15_000,
      });
      cleanups.push(() => client.close());
      return client;
    };
    const a = await connect();
    let askedA: () => void = () => {};
    const questionA = new Promise<void>((resolve) => (askedA = resolve));
    a.onApproval(() => {
      askedA();
      return new Promise(() => {}); // A never answers
    });
    const { sessionId } = await a.command("session/create", {});
    const parent = a.startTurn({ sessionId, input });
    await parent.accepted;
    await questionA;

    // B hears of the parent session only; resuming it, it hears the child session too, and is asked its open question.
    const b = await connect();
    const heardByB = new Set<string>();
    b.events.on("notification", (n) => {
      const id = n.params?.["sessionId"];
      if (typeof id === "string") heardByB.add(id);
    });
    const askedB: string[] = [];
    b.onApproval((request) => {
      askedB.push(request.sessionId);
      return { decision: "approve" };
    });
    await b.command("session/resume", { sessionId });
    const done = await Promise.race([
      parent.completed,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the parent did not end within 10 s: B was not asked")), 10_000)),
    ]);
    expect(done.terminal).toBe("completed");
    expect(askedB).toHaveLength(1);
    expect(askedB[0]).not.toBe(sessionId); // the child session's question
    expect(heardByB.has(askedB[0] as string)).toBe(true); // B heard the child's notifications live
    expect(existsSync(marker)).toBe(true); // B's approve ran the child's tool
  });
});
