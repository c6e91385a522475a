/**
 * A child turn linked but never started (its start failed, a crash between link and start, a
 * resume that could not load it) never keeps a tree "running": by invariant 7 the parent's own
 * terminal is the end of the tree, so `treeEnded` resolves on it and `progressOf` counts such a
 * child as ended, without ever giving it a terminal the host did not send. Pure folds of
 * notifications: the reference host cannot be made to fail a child's start between link and
 * start, so the streams are written here as the wire orders them.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { followTurnTree, TurnTree } from "../../src/ui/index.js";
import type { MspEventEmitter } from "../../src/turns/mspEvents.js";

const P = "s-parent";
let cursor = 0;
const v = (sessionId: string) => `v:${sessionId}:${++cursor}`;
const turnStarted = (turnId: string) => ({ method: "turn/started", params: { sessionId: P, viewCursor: v(P), turnId } });
const call = (itemId: string, status: "inProgress" | "completed" | "failed", child?: { sessionId: string; turnId: string }) => ({
  method: status === "inProgress" ? "item/updated" : "item/completed",
  params: {
    sessionId: P,
    viewCursor: v(P),
    item: { itemId, turnId: "t", kind: "toolCall", revision: status === "inProgress" ? 2 : 3, status, ...(child === undefined ? {} : { subagent: child }) },
  },
});
const childStarted = (sessionId: string, turnId: string, itemId: string) => ({
  method: "turn/started",
  params: { sessionId, viewCursor: v(sessionId), turnId, parent: { sessionId: P, turnId: "t", itemId }, depth: 1 },
});
const completed = (sessionId: string, turnId: string) => ({
  method: "turn/completed",
  params: { sessionId, viewCursor: v(sessionId), turnId, terminal: "completed", reason: "completed", durationMs: 1 },
});

describe("a child linked but never started", () => {
  it("counts as ended once its delegating call is over, or once the parent ended; it is never given a terminal", () => {
    const tree = new TurnTree();
    tree.observe(turnStarted("t"));
    tree.observe(call("i1", "inProgress", { sessionId: "s1", turnId: "c1" })); // c1: linked, its start fails
    tree.observe(call("i2", "inProgress", { sessionId: "s2", turnId: "c2" }));
    tree.observe(childStarted("s2", "c2", "i2"));
    expect(tree.progressOf("t")).toEqual({ started: 2, ended: 0, running: 2 });
    // The host closes c1's call failed ("the child turn could not start"): c1 runs no more.
    expect(tree.observe(call("i1", "failed"))).toBe(true);
    expect(tree.progressOf("t")).toEqual({ started: 2, ended: 1, running: 1 });
    expect(tree.turn("c1")).toMatchObject({ state: "linked" });
    expect(tree.turn("c1")?.terminal).toBeUndefined();

    // Another tree: the call is never closed (a crash between link and start), the parent ends.
    const other = new TurnTree();
    other.observe(turnStarted("t"));
    other.observe(call("i1", "inProgress", { sessionId: "s1", turnId: "c1" }));
    expect(other.progressOf("t")).toEqual({ started: 1, ended: 0, running: 1 });
    other.observe(completed(P, "t"));
    expect(other.progressOf("t")).toEqual({ started: 1, ended: 1, running: 0 });
    expect(other.turn("c1")?.terminal).toBeUndefined();
  });

  it("treeEnded resolves on the parent's own terminal, listing the child as it stood", async () => {
    const events = new EventEmitter();
    const follower = followTurnTree({ events: events as unknown as Pick<MspEventEmitter, "on" | "off">, isClosed: false });
    const emit = (n: { method: string; params: unknown }) => events.emit("notification", n);
    emit(turnStarted("t"));
    emit(call("i1", "inProgress", { sessionId: "s1", turnId: "c1" }));
    const pending = follower.treeEnded("t", { timeoutMs: 30_000 });
    emit(completed(P, "t"));
    const ended = await pending;
    expect(ended.turn).toMatchObject({ turnId: "t", state: "ended", terminal: { terminal: "completed" } });
    expect(ended.descendants.map((d) => [d.turnId, d.state, d.terminal])).toEqual([["c1", "linked", undefined]]);
    expect(await follower.treeEnded("t", { timeoutMs: 0 })).toEqual(ended);
    follower.dispose();
  });
});
