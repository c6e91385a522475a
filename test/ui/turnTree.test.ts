import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { TurnTree, describeTreeProgress } from "../../src/ui/index.js";

type Note = { method: string; params: Record<string, unknown> };
const GOOD = "test/fixtures/subagents/good-tree.jsonl";
/** The host's notifications of the hand-written good tree, and the index of the client's turn/cancel among the lines. */
function goodTree(): { notes: Note[]; cancelAt: number } {
  const rows = readFileSync(GOOD, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(JSON.parse(l).raw as string) as Record<string, unknown>);
  const cancelAt = rows.filter((m) => "method" in m && !("id" in m)).length;
  const notes: Note[] = [];
  let seenCancel = -1;
  for (const m of rows) {
    if (m["method"] === "turn/cancel") seenCancel = notes.length;
    else if (typeof m["method"] === "string" && !("id" in m)) notes.push({ method: m["method"], params: m["params"] as Record<string, unknown> });
  }
  return { notes, cancelAt: seenCancel === -1 ? cancelAt : seenCancel };
}
const T1 = "01a23400-1a00-7000-8000-0000000001a1";
const T2 = "01a23400-1b00-7000-8000-0000000001b2";
const T3 = "01a23400-1c00-7000-8000-0000000001c3";
const T4 = "01a23400-1d00-7000-8000-0000000001d4";

describe("TurnTree on the good tree", () => {
  it("knows each turn's children, depth and terminal, and counts the descendants started and ended", () => {
    const { notes, cancelAt } = goodTree();
    const tree = new TurnTree();
    notes.slice(0, cancelAt).forEach((n) => tree.observe(n));
    expect(tree.childrenOf(T1).map((t) => t.turnId)).toEqual([T4, T2]);
    expect(tree.descendantsOf(T1).map((t) => [t.turnId, t.depth, t.state])).toEqual([
      [T4, 1, "ended"],
      [T2, 1, "running"],
      [T3, 2, "running"],
    ]);
    expect(tree.turn(T3)?.parent).toEqual({ sessionId: "01a23400-0b00-7000-8000-00000000b002", turnId: T2, itemId: "01a23400-2b00-7000-8000-0000000002b2" });
    expect(tree.progressOf(T1)).toEqual({ started: 3, ended: 1, running: 2 });
    expect(describeTreeProgress(tree.progressOf(T1), { stopping: true })).toBe("stopping 2 of 3 subagents…");
    expect(tree.progressOf(T2)).toEqual({ started: 1, ended: 0, running: 1 });
    const after: string[] = [];
    for (const n of notes.slice(cancelAt)) if (tree.observe(n)) after.push(describeTreeProgress(tree.progressOf(T1), { stopping: true }));
    // The grandchild ends, then the child, then the top-level turn (whose own end leaves the counts as they were).
    expect(after).toEqual(["stopping 1 of 3 subagents…", "all 3 subagents ended", "all 3 subagents ended"]);
    expect(tree.turn(T3)?.terminal).toEqual({ terminal: "cancelled", reason: "cancelled during model stream", cause: { kind: "parent" } });
    expect(tree.turn(T1)?.terminal?.cause).toEqual({ kind: "user" });
    expect(tree.turn(T1)?.state).toBe("ended");
  });

  it("ignores what is not about the tree, and takes the SDK's whole items as well as wire patches", () => {
    const tree = new TurnTree();
    expect(
      tree.observe({
        method: "item/delta",
        params: { sessionId: "s", viewCursor: "v:s:3", turnId: "t", itemId: "i", revision: 2, field: "text", append: "x", recordedAt: "" },
      }),
    ).toBe(false);
    const call = {
      itemId: "i1",
      kind: "toolCall",
      turnId: "t1",
      revision: 2,
      status: "inProgress",
      recordedAt: "",
      tool: "task",
      callId: "c",
      args: "{}",
      visibleOutput: "",
      truncated: false,
    };
    expect(tree.observe({ method: "item/updated", params: { sessionId: "s1", viewCursor: "v:s1:2", item: call } })).toBe(false);
    expect(
      tree.observe({
        method: "item/updated",
        params: { sessionId: "s1", viewCursor: "v:s1:3", item: { ...call, revision: 3, subagent: { sessionId: "s2", turnId: "t2" } } },
      }),
    ).toBe(true);
    expect(tree.turn("t2")).toEqual({
      turnId: "t2",
      sessionId: "s2",
      parent: { sessionId: "s1", turnId: "t1", itemId: "i1" },
      depth: 1,
      state: "linked",
      children: [],
    });
    // The same link again (its item/completed) changes nothing; the child's turn/started makes it running.
    expect(
      tree.observe({
        method: "item/completed",
        params: { sessionId: "s1", viewCursor: "v:s1:4", item: { ...call, revision: 4, subagent: { sessionId: "s2", turnId: "t2" } } },
      }),
    ).toBe(false);
    expect(
      tree.observe({
        method: "turn/started",
        params: { sessionId: "s2", viewCursor: "v:s2:1", turnId: "t2", parent: { sessionId: "s1", turnId: "t1", itemId: "i1" }, depth: 1 },
      }),
    ).toBe(true);
    expect(tree.turn("t2")?.state).toBe("running");
    expect(tree.progressOf("t1")).toEqual({ started: 1, ended: 0, running: 1 });
    expect(tree.turn("nope")).toBeUndefined();
    expect(tree.childrenOf("nope")).toEqual([]);
  });

  it("throws a typed protocol error on a malformed link, and leaves the tree as it was", () => {
    const tree = new TurnTree();
    const bad = {
      method: "turn/started",
      params: { sessionId: "s2", viewCursor: "v:s2:1", turnId: "t2", parent: { sessionId: "s1", turnId: "t1" }, depth: 1 },
    };
    let thrown: unknown;
    try {
      tree.observe(bad);
    } catch (error) {
      thrown = error;
    }
    expect(MspError.is(thrown) && thrown.kind === "protocol").toBe(true);
    expect((thrown as MspError<"protocol">).data.problem).toBe("turn/started: parent.itemId must be a non-empty string");
    expect(() => tree.observe({ method: "turn/completed", params: { sessionId: "s", viewCursor: "v:s:1", turnId: "t", terminal: "stopped" } })).toThrow(
      /terminal "stopped"/,
    );
    expect(tree.size).toBe(0);
    expect(() => new TurnTree({ maxTurns: 0 })).toThrow(RangeError);
    expect(() => new TurnTree({ maxTurns: 1.5 })).toThrow(RangeError);
  });
});

describe("describeTreeProgress", () => {
  it("says how many subagents run, stop or ended", () => {
    expect(describeTreeProgress({ started: 0, ended: 0, running: 0 })).toBe("no subagents");
    expect(describeTreeProgress({ started: 5, ended: 2, running: 3 }, { stopping: true })).toBe("stopping 3 of 5 subagents…");
    expect(describeTreeProgress({ started: 1, ended: 0, running: 1 }, { stopping: true })).toBe("stopping 1 of 1 subagent…");
    expect(describeTreeProgress({ started: 5, ended: 2, running: 3 })).toBe("3 of 5 subagents running");
    expect(describeTreeProgress({ started: 5, ended: 5, running: 0 }, { stopping: true })).toBe("all 5 subagents ended");
    expect(describeTreeProgress({ started: 1, ended: 1, running: 0 })).toBe("1 subagent ended");
  });
});

/** A random tree: parents[i] is the parent of turn i+1 (an earlier turn), turn 0 the top-level one. */
const trees = fc.integer({ min: 0, max: 14 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => fc.integer({ min: 0, max: i }))));

/** The notifications of `parents`' tree in an order `picks` chooses among those invariant 7 allows next. */
function interleave(parents: number[], picks: number[], root = "r"): Note[] {
  const count = parents.length + 1;
  const id = (i: number) => `${root}-t${i}`;
  const session = (i: number) => `${root}-s${i}`;
  const parentOf = (i: number) => parents[i - 1] as number;
  const cursor = new Map<string, number>();
  const note = (method: string, i: number, params: Record<string, unknown>): Note => {
    const s = session(i);
    cursor.set(s, (cursor.get(s) ?? 0) + 1);
    return { method, params: { sessionId: s, viewCursor: `v:${s}:${cursor.get(s)}`, ...params } };
  };
  const call = (child: number) => ({
    itemId: `${id(child)}-call`,
    kind: "toolCall",
    turnId: id(parentOf(child)),
    revision: 2,
    recordedAt: "",
    subagent: { sessionId: session(child), turnId: id(child) },
  });
  // Each turn: linked (children only), started, ended. A child is linked once its parent started; a turn ends once its children ended.
  const stage = new Array<number>(count).fill(0); // 0 nothing, 1 linked, 2 started, 3 ended
  stage[0] = 1;
  const out: Note[] = [];
  let k = 0;
  for (;;) {
    const ready: number[] = [];
    for (let i = 0; i < count; i++) {
      if (stage[i] === 0 && (stage[parentOf(i)] as number) >= 2 && stage[parentOf(i)] !== 3) ready.push(i);
      else if (stage[i] === 1) ready.push(i);
      else if (stage[i] === 2 && parents.every((p, c) => p !== i || stage[c + 1] === 3)) ready.push(i);
    }
    if (ready.length === 0) return out;
    const i = ready[(picks[k++ % Math.max(picks.length, 1)] ?? 0) % ready.length] as number;
    if (stage[i] === 0) out.push(note("item/updated", parentOf(i), { item: call(i) }));
    else if (stage[i] === 1) {
      const parent =
        i === 0 ? {} : { parent: { sessionId: session(parentOf(i)), turnId: id(parentOf(i)), itemId: `${id(i)}-call` }, depth: depthOf(parents, i) };
      out.push(note("turn/started", i, { turnId: id(i), ...parent }));
    } else
      out.push(
        note("turn/completed", i, { turnId: id(i), terminal: "cancelled", reason: "cancelled", durationMs: 1, cause: { kind: i === 0 ? "user" : "parent" } }),
      );
    stage[i] = (stage[i] as number) + 1;
  }
}
function depthOf(parents: number[], i: number): number {
  let d = 0;
  for (let at = i; at !== 0; at = parents[at - 1] as number) d++;
  return d;
}

describe("TurnTree, property-based", () => {
  it("any interleaving that keeps invariant 7 ends with ended == started, and each turn ends with its subtree ended", () => {
    fc.assert(
      fc.property(trees, fc.array(fc.nat(), { maxLength: 64 }), (parents, picks) => {
        const tree = new TurnTree();
        const notes = interleave(parents, picks);
        expect(notes).toHaveLength(3 * parents.length + 2);
        for (const n of notes) {
          tree.observe(n);
          const { started, ended, running } = tree.progressOf("r-t0");
          expect(ended + running).toBe(started);
          if (n.method === "turn/completed") {
            const own = tree.progressOf(n.params["turnId"] as string);
            expect(own.ended).toBe(own.started);
          }
        }
        expect(tree.progressOf("r-t0")).toEqual({ started: parents.length, ended: parents.length, running: 0 });
        expect(tree.descendantsOf("r-t0").map((t) => [t.turnId, t.depth])).toEqual(
          expect.arrayContaining(parents.map((_, c) => [`r-t${c + 1}`, depthOf(parents, c + 1)])),
        );
        expect(describeTreeProgress(tree.progressOf("r-t0"))).toBe(
          parents.length === 0 ? "no subagents" : parents.length === 1 ? "1 subagent ended" : `all ${parents.length} subagents ended`,
        );
      }),
      { numRuns: 300 },
    );
  });

  it("never holds more than maxTurns, whatever the trees", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(trees, fc.array(fc.nat(), { maxLength: 16 })), { maxLength: 8 }), fc.integer({ min: 1, max: 12 }), (forest, maxTurns) => {
        const tree = new TurnTree({ maxTurns });
        let turns = 0;
        forest.forEach(([parents, picks], r) => {
          turns += parents.length + 1;
          for (const n of interleave(parents, picks, `r${r}`)) {
            tree.observe(n);
            expect(tree.size).toBeLessThanOrEqual(maxTurns);
          }
        });
        expect(tree.size + tree.forgotten).toBeGreaterThanOrEqual(Math.min(turns, maxTurns));
      }),
      { numRuns: 200 },
    );
  });
});

describe("TurnTree's bound", () => {
  const start = (tree: TurnTree, r: string, children: number) => {
    for (const n of interleave(
      Array.from({ length: children }, () => 0),
      [0],
      r,
    ).filter((n) => n.method !== "turn/completed"))
      tree.observe(n);
  };
  const end = (tree: TurnTree, r: string, children: number) => {
    for (const n of interleave(
      Array.from({ length: children }, () => 0),
      [0],
      r,
    ).filter((n) => n.method === "turn/completed"))
      tree.observe(n);
  };
  it("forgets the oldest ended tree first, then the oldest running one, never the tree being grown", () => {
    const tree = new TurnTree({ maxTurns: 6 });
    start(tree, "a", 1); // a running: 2 turns
    start(tree, "b", 1); // b: 2 turns
    end(tree, "b", 1); // b ended
    start(tree, "c", 1); // c running: 6 turns held
    expect(tree.size).toBe(6);
    start(tree, "d", 0); // one more: b, the oldest ended tree, goes (a is older, but running)
    expect([tree.turn("a-t0")?.state, tree.turn("b-t0"), tree.turn("c-t0")?.state, tree.turn("d-t0")?.state]).toEqual([
      "running",
      undefined,
      "running",
      "running",
    ]);
    expect(tree.forgotten).toBe(2);
    start(tree, "e", 1); // no ended tree left: a, the oldest running one, goes
    expect(tree.turn("a-t0")).toBeUndefined();
    expect(tree.turn("e-t1")?.state).toBe("running");
    expect(tree.size).toBe(5); // a's two turns made room for e's second
    expect(tree.forgotten).toBe(4);
    // One tree bigger than the cap keeps its first turns; the rest are not tracked, and counted.
    const small = new TurnTree({ maxTurns: 3 });
    start(small, "f", 4);
    expect(small.size).toBe(3);
    expect(small.progressOf("f-t0").started).toBe(2);
    expect(small.forgotten).toBeGreaterThan(0);
  });
});
