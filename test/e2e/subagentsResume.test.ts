/**
 * Resume of a subagent tree (issue 23) on the real reference host, spawned as a process, with real
 * shell tools: a connection that saw part of a running 3-level tree goes away, and a second one
 * resumes the parent with `childCursors` taken from what the first saw: it is replayed exactly the
 * notifications of every session of the tree that it missed, in host order (the `h` each log
 * record carries), then hears the tree live. And after a crash (SIGKILL) mid-tree and a restart on
 * the same data dir, a resume of the parent replays the children's `host restarted` closings,
 * leaves first. Both connections' wires pass `checkTranscriptParts` as one history.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import type { MspClient, MspError } from "../../src/index.js";
import { parseViewCursor } from "../../packages/protocol/src/cursor.js";
import { checkTranscriptParts, formatTranscriptEntry, recordingWebSocket } from "../../src/testing/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { crashHost, killGroups, model, startHost, tempDataDir, until } from "../helpers/referenceHost.js";
import { startWsHost } from "../helpers/wsHost.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** The host's notifications on a wire (after the server line that answers request `afterId`, when given), in order. */
function notifications(wire: readonly string[], afterId?: number): Sent[] {
  const out: Sent[] = [];
  let on = afterId === undefined;
  for (const line of wire) {
    const entry = JSON.parse(line) as { dir: string; raw: string };
    if (entry.dir !== "server") continue;
    const message = JSON.parse(entry.raw) as { method?: string; id?: unknown; params?: Record<string, unknown> };
    if (!on && message.id === afterId && message.method === undefined) on = true;
    else if (on && typeof message.method === "string" && message.id === undefined && message.params !== undefined)
      out.push({ method: message.method, params: message.params });
  }
  return out;
}

/** The JSON-RPC id of the client's `session/resume` on a wire. */
function resumeId(wire: readonly string[]): number {
  for (const line of wire) {
    const entry = JSON.parse(line) as { dir: string; raw: string };
    const message = JSON.parse(entry.raw) as { method?: string; id?: number };
    if (entry.dir === "client" && message.method === "session/resume") return message.id as number;
  }
  throw new Error("no session/resume on the wire");
}

/** Resolves once `predicate` holds, checked every 100 ms; rejects after `timeoutMs` (a bound, not a measurement). */
async function poll(predicate: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `<sessionId>:<n>` of a notification. */
function keyOf(n: Sent): string {
  const sessionId = String(n.params["sessionId"]);
  return `${sessionId}:${parseViewCursor(String(n.params["viewCursor"]), sessionId)}`;
}

/** The last cursor seen of each session on a wire. */
function lastCursors(wire: readonly string[]): Map<string, string> {
  const cursors = new Map<string, string>();
  for (const n of notifications(wire)) cursors.set(String(n.params["sessionId"]), String(n.params["viewCursor"]));
  return cursors;
}

/** How many shell tools of the tree printed `started <pid>`. */
function toolsStarted(records: ReadonlyArray<Record<string, unknown>>): number {
  const items = new Set<string>();
  for (const r of records) {
    const params = r["params"] as { itemId?: string; append?: string; item?: { itemId?: string; visibleOutput?: string } } | undefined;
    const itemId = params?.itemId ?? params?.item?.itemId;
    const output = params?.append ?? params?.item?.visibleOutput;
    if (r["type"] === "notification" && typeof output === "string" && output.includes("started ")) items.add(String(itemId));
  }
  return items.size;
}

/** The notification records of the logs, in host order (`h`), as `<sessionId>:<n>` with the method. */
function inHostOrder(records: ReadonlyArray<Record<string, unknown>>): Array<{ key: string; method: string; h: number }> {
  return records
    .filter((r) => r["type"] === "notification")
    .map((r) => ({ key: `${String((r["params"] as Record<string, unknown>)["sessionId"])}:${Number(r["n"])}`, method: String(r["method"]), h: Number(r["h"]) }))
    .sort((a, b) => a.h - b.h);
}

describe("resume of a subagent tree", () => {
  it("a second connection resumes the parent with childCursors: exactly what it missed of every session of the tree, in host order, then the tree live", async () => {
    const ws = await startWsHost(model("subagents-tree.json"));
    cleanups.push(() => ws.stop());
    const connect = async (wire: string[]): Promise<MspClient> => {
      const WebSocketClass = recordingWebSocket(WebSocket as unknown as WebSocketConstructor, (e) => wire.push(formatTranscriptEntry(e)));
      const client = await connectWebSocket(`ws://127.0.0.1:${ws.port}/`, { token: ws.token, WebSocket: WebSocketClass, defaultTimeoutMs: 30_000 });
      cleanups.push(() => client.close());
      return client;
    };
    // A starts the tree and goes away once it has seen the first child turn start: the rest of the tree starts unseen.
    const wireA: string[] = [];
    const a = await connect(wireA);
    const { sessionId } = await a.command("session/create", {});
    const parent = a.startTurn({ sessionId, input });
    await parent.accepted;
    await until(a, () => notifications(wireA).some((n) => n.method === "turn/started" && n.params["parent"] !== undefined), "a child turn started", 30_000);
    await a.close();
    // What A saw (frames its socket still records after the close are not A's: its client is gone).
    const partA = [...wireA];
    const seen = lastCursors(partA);
    // Unseen by anyone: the logs are the truth (every session's, with its host order h).
    await poll(() => toolsStarted(ws.logRecords()) === 4, "the whole tree running", 60_000);
    const before = inHostOrder(ws.logRecords());

    // B resumes the parent with the cursors A saw, each child A saw by its own cursor.
    const wireB: string[] = [];
    const b = await connect(wireB);
    const childCursors = Object.fromEntries([...seen].filter(([id]) => id !== sessionId));
    expect(Object.keys(childCursors).length).toBeGreaterThan(0);
    const answer = await b.command("session/resume", { sessionId, afterCursor: seen.get(sessionId) as string, childCursors });
    const missed = before.filter(({ key }) => {
      const [id, n] = key.split(":") as [string, string];
      const cursor = seen.get(id);
      return Number(n) > (cursor === undefined ? 0 : (parseViewCursor(cursor, id) ?? 0));
    });
    expect(missed.some(({ key }) => !key.startsWith(`${sessionId}:`))).toBe(true); // some child session's notifications were missed
    expect(answer.replayed).toBe(missed.length);
    await poll(() => notifications(wireB, resumeId(wireB)).length >= missed.length, "the replay", 30_000);
    const replay = notifications(wireB, resumeId(wireB)).slice(0, missed.length);
    expect(replay.map(keyOf)).toEqual(missed.map((m) => m.key)); // exactly those, in host order
    expect(replay.map((n) => n.method)).toEqual(missed.map((m) => m.method));
    // The answer's items: those in progress at each session's cursor, every session of the tree included.
    const treeSessions = new Set(before.map((m) => m.key.split(":")[0]));
    expect(treeSessions.size).toBe(4);
    const open = new Set<string>();
    for (const r of ws.logRecords()) {
      const params = r["params"] as { sessionId?: string; item?: { itemId: string } } | undefined;
      const id = String(params?.sessionId);
      const cursor = seen.get(id);
      if (r["type"] !== "notification" || cursor === undefined || Number(r["n"]) > (parseViewCursor(cursor, id) ?? 0)) continue;
      if (r["method"] === "item/started") open.add(String(params?.item?.itemId));
      if (r["method"] === "item/completed") open.delete(String(params?.item?.itemId));
    }
    const items = (answer as { items?: Array<{ itemId: string }> }).items ?? [];
    expect(new Set(items.map((i) => i.itemId))).toEqual(open);

    // Live: B stops the parent; the whole tree ends on B's wire, leaves first.
    await b.cancelTurn({ sessionId, turnId: String(parent.turnId) });
    await until(b, () => notifications(wireB).filter((n) => n.method === "turn/completed").length === 4, "four terminals on B", 60_000);
    const ends = notifications(wireB).filter((n) => n.method === "turn/completed");
    expect(ends.at(-1)?.params["turnId"]).toBe(parent.turnId);
    for (const end of ends.slice(0, -1)) expect(end.params).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
    await b.close();
    expect(checkTranscriptParts([partA, wireB]).flatMap((part) => part.problems)).toEqual([]);
  }, 180_000);

  it("after a crash mid-tree and a restart on the same data dir, a resume of the parent replays the children's host-restarted closings, leaves first", async () => {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const first = startHost(model("subagents-tree.json"), data.dir);
    cleanups.push(() => first.host.close());
    const { sessionId } = await first.host.command("session/create", {});
    const parent = first.host.startTurn({ sessionId, input });
    await parent.accepted;
    const started = () => notifications(first.wire).filter((n) => JSON.stringify(n.params).includes("started ")).length;
    await until(
      first.host,
      () => started() >= 4 && notifications(first.wire).filter((n) => n.method === "turn/started").length === 4,
      "the tree running",
      60_000,
    );
    const seen = lastCursors(first.wire);
    const links = notifications(first.wire)
      .filter((n) => n.method === "turn/started" && n.params["parent"] !== undefined)
      .map((n) => ({
        sessionId: String(n.params["sessionId"]),
        turnId: String(n.params["turnId"]),
        parent: n.params["parent"] as { sessionId: string; turnId: string; itemId: string },
        depth: Number(n.params["depth"]),
      }));
    expect(links).toHaveLength(3);
    const orphans = crashHost(first.host.pid);
    cleanups.push(() => killGroups(orphans));
    await first.host.close();

    const second = startHost(model("subagents-tree.json"), data.dir);
    cleanups.push(() => second.host.close());
    const childCursors = Object.fromEntries([...seen].filter(([id]) => id !== sessionId));
    const answer = await second.host.command("session/resume", { sessionId, afterCursor: seen.get(sessionId) as string, childCursors });
    await poll(() => notifications(second.wire, resumeId(second.wire)).length >= answer.replayed, "the replay", 30_000);
    const replay = notifications(second.wire, resumeId(second.wire)).slice(0, answer.replayed);
    const ends = replay.filter((n) => n.method === "turn/completed");
    expect(ends).toHaveLength(4);
    for (const end of ends) expect(end.params).toMatchObject({ terminal: "failed", reason: "host restarted" });
    // Leaves first: each child's terminal before its parent's delegating call completes, and that before the parent's terminal.
    const index = (pred: (n: Sent) => boolean) => replay.findIndex(pred);
    for (const link of links) {
      const childEnd = index((n) => n.method === "turn/completed" && n.params["turnId"] === link.turnId);
      const call = index((n) => n.method === "item/completed" && (n.params["item"] as { itemId: string }).itemId === link.parent.itemId);
      const parentEnd = index((n) => n.method === "turn/completed" && n.params["turnId"] === link.parent.turnId);
      expect(childEnd).toBeGreaterThanOrEqual(0);
      expect(childEnd).toBeLessThan(call);
      expect(call).toBeLessThan(parentEnd);
    }
    const grandchild = links.find((l) => l.depth === 2);
    expect(ends[0]?.params["turnId"]).toBe(grandchild?.turnId); // the deepest session closes first
    expect(ends.at(-1)?.params["turnId"]).toBe(parent.turnId);
    await second.host.close();
    expect(checkTranscriptParts([first.wire, second.wire]).flatMap((part) => part.problems)).toEqual([]);
  }, 180_000);
});

describe("resume of a tree: bad childCursors are refused, typed", () => {
  it("not an object, a session not below, a malformed cursor, a cursor ahead: -32602 each, nothing replayed", async () => {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const run = startHost(model("subagents-tree.json"), data.dir);
    cleanups.push(() => run.host.close());
    const { sessionId } = await run.host.command("session/create", {});
    const parent = run.host.startTurn({ sessionId, input });
    await parent.accepted;
    await until(run.host, () => notifications(run.wire).filter((n) => n.method === "turn/started").length === 4, "the tree running", 60_000);
    const child = String(notifications(run.wire).find((n) => n.method === "turn/started" && n.params["parent"] !== undefined)?.params["sessionId"]);
    const other = await run.host.command("session/create", {});
    const cases: Array<[unknown, RegExp]> = [
      [[child], /must be an object/],
      ["x", /must be an object/],
      [{ [other.sessionId]: `v:${other.sessionId}:0` }, /not below session/],
      [{ [sessionId]: `v:${sessionId}:0` }, /not below session/],
      [{ [child]: 7 }, /must be a cursor string/],
      [{ [child]: `v:${sessionId}:1` }, /is not a cursor of session/],
      [{ [child]: `v:${child}:99999` }, /beyond the last cursor/],
    ];
    for (const [childCursors, message] of cases) {
      const refused = await run.host.command("session/resume", { sessionId, childCursors } as never).then(
        () => undefined,
        (error: unknown) => error as MspError<"rpcError">,
      );
      expect(refused).toMatchObject({ kind: "rpcError", data: { code: -32602 } });
      expect(refused?.data.message).toMatch(message);
    }
    const ahead = (await run.host
      .command("session/resume", { sessionId, childCursors: { [child]: `v:${child}:99999` } })
      .catch((error: unknown) => error)) as MspError<"rpcError">;
    expect(ahead.data.data).toMatchObject({ sessionId: child, lastCursor: expect.stringMatching(new RegExp(`^v:${child}:[0-9]+$`)) });
    // Nothing was replayed by any refusal: a replay (from cursor 0 here) would send notifications again.
    const keys = notifications(run.wire).map(keyOf);
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys).size).toBe(keys.length);
  }, 120_000);
});

describe("resume of a tree: a session below that childCursors does not name", () => {
  it("is not replayed when the client heard its link (an old ended subagent), and is replayed whole when its link comes after the cursor", async () => {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const run = startHost(model("subagents-child-fails.json"), data.dir);
    cleanups.push(() => run.host.close());
    const { sessionId } = await run.host.command("session/create", {});
    const parent = run.host.startTurn({ sessionId, input });
    await parent.accepted;
    const ended = () => notifications(run.wire).some((n) => n.method === "turn/completed" && n.params["turnId"] === parent.turnId);
    await until(run.host, ended, "the parent turn ended", 60_000);
    const heard = notifications(run.wire);
    const child = String(heard.find((n) => n.method === "turn/started" && n.params["parent"] !== undefined)?.params["sessionId"]);
    const ofParent = heard.filter((n) => n.params["sessionId"] === sessionId);
    const ofChild = heard.filter((n) => n.params["sessionId"] === child);
    expect(ofChild.length).toBeGreaterThan(0);
    const cursorOf = (n: Sent | undefined) => parseViewCursor(String(n?.params["viewCursor"]), sessionId) ?? 0;
    const link = ofParent.find((n) => (n.params["item"] as { subagent?: unknown } | undefined)?.subagent !== undefined);
    expect(link).toBeDefined();
    const last = ofParent.at(-1);

    // Resumed after everything, naming no child: the client heard the child's link, so nothing of it comes again.
    const after = await run.host.command("session/resume", { sessionId, afterCursor: String(last?.params["viewCursor"]) });
    expect(after.replayed).toBe(0);

    // Resumed from just before the link, naming no child: the child is replayed whole, after the link.
    const before = ofParent[ofParent.indexOf(link as Sent) - 1];
    const again = await run.host.command("session/resume", { sessionId, afterCursor: String(before?.params["viewCursor"]) });
    expect(again.replayed).toBe(cursorOf(last) - cursorOf(before) + ofChild.length);
    const entries = run.wire.map((line) => JSON.parse(line) as { dir: string; raw: string });
    const resumes = entries.filter((e) => e.dir === "client" && e.raw.includes('"session/resume"'));
    const lastResume = (JSON.parse(resumes.at(-1)?.raw ?? "{}") as { id: number }).id;
    await poll(() => notifications(run.wire, lastResume).length >= again.replayed, "the replay", 30_000);
    const replay = notifications(run.wire, lastResume).slice(0, again.replayed);
    const replayedOfChild = replay.filter((n) => n.params["sessionId"] === child).map(keyOf);
    expect(replayedOfChild).toEqual(ofChild.map(keyOf));
    expect(replay.findIndex((n) => keyOf(n) === keyOf(link as Sent))).toBeLessThan(replay.findIndex((n) => n.params["sessionId"] === child));
  }, 120_000);
});
