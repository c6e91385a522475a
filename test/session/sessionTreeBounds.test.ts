/**
 * The session's subagent tree, without a host: its bound on subagent sessions (the oldest is no
 * longer followed, one warning), notifications of sessions outside the tree ignored, a cursor per
 * subagent session, and what is kept across a reload checked shape by shape (a hand-edited storage
 * loses only its bad entries, and a kept tree leaves storage with the turns it hangs below).
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../src/session/index.js";
import type { KeptSession } from "../../src/session/sessionStorage.js";
import { SessionKeeper } from "../../src/session/sessionKeeper.js";
import { SessionTree, type KeptTreeTurn } from "../../src/session/sessionTree.js";

const OWN = "s-own";
/** A tool call of `turnId` in `sessionId` linked to the child `child` (its session `childSession`). */
const link = (sessionId: string, turnId: string, itemId: string, childSession: string, child: string, cursor: number) => ({
  method: "item/updated",
  params: {
    sessionId,
    viewCursor: `v:${sessionId}:${cursor}`,
    item: { itemId, turnId, kind: "toolCall", revision: 2, subagent: { sessionId: childSession, turnId: child } },
  },
});
const started = (sessionId: string, turnId: string, parent: { sessionId: string; turnId: string; itemId: string }, depth: number, cursor: number) => ({
  method: "turn/started",
  params: { sessionId, viewCursor: `v:${sessionId}:${cursor}`, turnId, parent, depth },
});

describe("the session's subagent tree", () => {
  it("follows subagent sessions from their links, a cursor each, at most `subagentSessions`; the oldest goes first, with one warning", () => {
    const warnings: string[] = [];
    const tree = new SessionTree(2, 10, (w) => warnings.push(w));
    expect(tree.observe(OWN, { method: "turn/started", params: { sessionId: OWN, viewCursor: "v:s-own:1", turnId: "t" } })).toEqual({
      child: false,
      changed: false,
    });
    expect(tree.observe(OWN, link(OWN, "t", "i1", "s1", "c1", 2))).toEqual({ child: false, changed: "t" });
    expect(tree.observe(OWN, started("s1", "c1", { sessionId: OWN, turnId: "t", itemId: "i1" }, 1, 1))).toEqual({ child: true, changed: "t" });
    // A grandchild below c1, linked in s1: still below the session's turn t.
    expect(tree.observe(OWN, link("s1", "c1", "i2", "s2", "g1", 2))).toEqual({ child: true, changed: "t" });
    expect(tree.depthOf("s2")).toBe(2);
    expect(tree.childCursors()).toEqual({ s1: "v:s1:2" });
    expect(tree.below("t").turns.map((turn) => [turn.turnId, turn.depth, turn.state])).toEqual([
      ["c1", 1, "running"],
      ["g1", 2, "linked"],
    ]);
    // Anything of a session outside the tree is not the tree's.
    expect(tree.observe(OWN, started("s-other", "x", { sessionId: "s-unknown", turnId: "y", itemId: "z" }, 1, 1))).toEqual({ child: false, changed: false });
    expect(tree.isChild("s-other")).toBe(false);
    expect(warnings).toEqual([]);
    // A third subagent session: past the bound of 2, the oldest (s1) is no longer followed.
    tree.observe(OWN, link(OWN, "t", "i3", "s3", "c3", 3));
    expect([tree.isChild("s1"), tree.isChild("s2"), tree.isChild("s3")]).toEqual([false, true, true]);
    expect(tree.childCursors()).toEqual({});
    tree.observe(OWN, link(OWN, "t", "i4", "s4", "c4", 4));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/more than 2 subagent sessions/);
  });

  it("past the bound an ended subagent session is forgotten first, silently; a running one only when all run, and its end and place still count", () => {
    const warnings: string[] = [];
    const tree = new SessionTree(2, 10, (w) => warnings.push(w));
    const under = (itemId: string) => ({ sessionId: OWN, turnId: "t", itemId });
    const completed = (sessionId: string, turnId: string, cursor: number) => ({
      method: "turn/completed",
      params: { sessionId, viewCursor: `v:${sessionId}:${cursor}`, turnId, terminal: "completed", reason: "completed", durationMs: 1 },
    });
    tree.observe(OWN, { method: "turn/started", params: { sessionId: OWN, viewCursor: "v:s-own:1", turnId: "t" } });
    // s1 runs (asks later); s2 ran and ended.
    tree.observe(OWN, link(OWN, "t", "i1", "s1", "c1", 2));
    tree.observe(OWN, started("s1", "c1", under("i1"), 1, 1));
    tree.observe(OWN, link(OWN, "t", "i2", "s2", "c2", 3));
    tree.observe(OWN, started("s2", "c2", under("i2"), 1, 1));
    tree.observe(OWN, completed("s2", "c2", 2));
    // A third session: s2 (ended) goes, though s1 is older; no warning, as nothing running was forgotten.
    tree.observe(OWN, link(OWN, "t", "i3", "s3", "c3", 4));
    expect([tree.isChild("s1"), tree.isChild("s2"), tree.isChild("s3")]).toEqual([true, false, true]);
    expect(warnings).toEqual([]);
    // A fourth while s1 and s3 both run: the oldest running (s1) goes, with the warning.
    tree.observe(OWN, link(OWN, "t", "i4", "s4", "c4", 5));
    expect([tree.isChild("s1"), tree.isChild("s3"), tree.isChild("s4")]).toEqual([false, true, true]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/more than 2 subagent sessions running/);
    // s1 is no longer followed, but its turn still has a place (its questions show on t) and its end still counts.
    expect(tree.placeOf("s1", "c1")).toEqual({ root: "t", depth: 1 });
    expect(tree.placeOf("s-other", "c1")).toBeUndefined();
    expect(tree.observe(OWN, completed("s1", "c1", 9))).toEqual({ child: true, changed: "t" });
    expect(tree.below("t").turns.find((turn) => turn.turnId === "c1")).toMatchObject({ state: "ended", terminal: { terminal: "completed" } });
    expect(tree.childCursors()).not.toHaveProperty("s1");
    // A turn of a session outside the tree, even with a known turn id, is not folded in.
    expect(tree.observe(OWN, completed("s-other", "c3", 1))).toEqual({ child: false, changed: false });
    expect(tree.below("t").turns.find((turn) => turn.turnId === "c3")?.state).toBe("linked");
    // reset: the host no longer knows the session; its subagents, cursors and turns go with it.
    tree.reset();
    expect([tree.isChild("s3"), tree.isChild("s4")]).toEqual([false, false]);
    expect(tree.childCursors()).toEqual({});
    expect(tree.below("t").turns).toEqual([]);
  });

  it("an item of a child turn from a resume's answer never stores an empty cursor", () => {
    const tree = new SessionTree(4, 10, () => {});
    tree.observe(OWN, link(OWN, "t", "i1", "s1", "c1", 2));
    tree.observe(OWN, started("s1", "c1", { sessionId: OWN, turnId: "t", itemId: "i1" }, 1, 1));
    tree.dropCursors();
    const change = tree.observeItem({ itemId: "x", turnId: "c1", kind: "toolCall", revision: 3, status: "inProgress" } as never);
    expect(change).toMatchObject({ child: true });
    expect(tree.childCursors()).toEqual({});
  });

  it("a kept tree comes back with its states, terminals and cursors; a hand-edited entry is dropped, never trusted", () => {
    const warnings: string[] = [];
    const first = new SessionTree(8, 10, (w) => warnings.push(w));
    first.observe(OWN, link(OWN, "t", "i1", "s1", "c1", 2));
    first.observe(OWN, started("s1", "c1", { sessionId: OWN, turnId: "t", itemId: "i1" }, 1, 1));
    first.observe(OWN, {
      method: "turn/completed",
      params: { sessionId: "s1", viewCursor: "v:s1:5", turnId: "c1", terminal: "cancelled", reason: "cancelled", cause: { kind: "parent" }, durationMs: 3 },
    });
    first.observe(OWN, link(OWN, "t", "i2", "s2", "c2", 3));
    const kept = first.kept(["t"]);
    expect(kept.childCursors).toEqual({ s1: "v:s1:5" });

    const storage = memoryStorage();
    const bad = {
      turnId: "c9",
      sessionId: "s9",
      parent: { sessionId: OWN, turnId: "t", itemId: "i9" },
      depth: 1,
      state: "ended",
      terminal: { terminal: "cancelled", reason: "x", cause: { kind: "gremlins" } },
    };
    // Ended, but with no terminal: it would come back running forever.
    const endless = { turnId: "c8", sessionId: "s8", parent: { sessionId: OWN, turnId: "t", itemId: "i8" }, depth: 1, state: "ended" };
    storage.setItem(
      "k",
      JSON.stringify({ sessionId: OWN, turns: [], tree: [...kept.turns, { turnId: 7 }, endless, bad], childCursors: { ...kept.childCursors, s2: 42 } }),
    );
    const read = new SessionKeeper(storage, "k", 1 << 20, () => {}).read();
    expect(read.tree).toHaveLength(3); // the entries with no shape (and the ended one with no terminal) are dropped on read
    expect(read.tree?.map((t) => t.turnId)).not.toContain("c8");
    expect(read.childCursors).toEqual({ s1: "v:s1:5" });

    const again = new SessionTree(8, 10, (w) => warnings.push(w));
    again.restore(OWN, { childCursors: read.childCursors ?? {}, turns: read.tree as KeptTreeTurn[] });
    expect(again.below("t").turns.map((turn) => [turn.turnId, turn.state, turn.terminal?.cause?.kind])).toEqual([
      ["c1", "ended", "parent"],
      ["c2", "linked", undefined],
    ]); // c9's made-up cause was refused: the whole entry is dropped, not half placed
    expect(again.isChild("s9")).toBe(false);
    expect(again.childCursors()).toEqual({ s1: "v:s1:5" });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/a kept subagent turn was dropped/);
  });

  it("storage keeps the tree only below the turns it keeps", () => {
    const storage = memoryStorage();
    const keeper = new SessionKeeper(storage, "k", 900, () => {});
    const turn = (turnId: string, phase: "ended" | "running") => ({
      turnId,
      phase,
      items: [],
      droppedItems: 0,
      stopRequested: false,
      input: [{ type: "text" as const, text: "x".repeat(200) }],
    });
    const child = (turnId: string, parentTurn: string): KeptTreeTurn => ({
      turnId,
      sessionId: `s-${turnId}`,
      parent: { sessionId: OWN, turnId: parentTurn, itemId: `i-${turnId}` },
      depth: 1,
      state: "running",
    });
    const grandchild: KeptTreeTurn = { turnId: "g", sessionId: "s-g", parent: { sessionId: "s-a", turnId: "a", itemId: "i-g" }, depth: 2, state: "running" };
    const value: KeptSession = {
      sessionId: OWN,
      cursor: "v:s-own:9",
      turns: [turn("old", "ended"), turn("new", "running")],
      tree: [child("a", "old"), grandchild, child("b", "new")],
    };
    keeper.write(value);
    const kept = JSON.parse(storage.getItem("k") as string) as KeptSession;
    expect(kept.turns.map((t) => t.turnId)).toEqual(["new"]);
    expect(kept.tree?.map((t) => t.turnId)).toEqual(["b"]);
  });
});
