import { describe, expect, it } from "vitest";
import { problemWithSubagentLinks } from "../../packages/protocol/src/guards.js";

const base = { sessionId: "s2", viewCursor: "v:s2:1" };
const parent = { sessionId: "s1", turnId: "t1", itemId: "i1" };
const call = { itemId: "i1", kind: "toolCall", turnId: "t1", revision: 2, recordedAt: "2026-12-01T00:00:00.000Z" };

describe("problemWithSubagentLinks (issue 23)", () => {
  it("accepts well-formed links, and notifications without any", () => {
    expect(problemWithSubagentLinks("turn/started", { ...base, turnId: "t2", parent, depth: 1 })).toBeUndefined();
    expect(problemWithSubagentLinks("turn/started", { ...base, turnId: "t2" })).toBeUndefined();
    for (const method of ["item/started", "item/updated", "item/completed"]) {
      expect(problemWithSubagentLinks(method, { ...base, item: { ...call, subagent: { sessionId: "s2", turnId: "t2" } } })).toBeUndefined();
    }
    expect(problemWithSubagentLinks("item/updated", { ...base, item: call })).toBeUndefined();
    expect(problemWithSubagentLinks("turn/completed", { ...base, turnId: "t2", parent: 7 })).toBeUndefined(); // not a field of turn/completed
  });

  it("names what is wrong with a child turn's parent link and depth", () => {
    const started = { ...base, turnId: "t2" };
    expect(problemWithSubagentLinks("turn/started", { ...started, parent: "t1", depth: 1 })).toBe("parent must be {sessionId, turnId, itemId}");
    expect(problemWithSubagentLinks("turn/started", { ...started, parent: { sessionId: "s1", turnId: "t1" }, depth: 1 })).toBe(
      "parent.itemId must be a non-empty string",
    );
    expect(problemWithSubagentLinks("turn/started", { ...started, parent: { ...parent, turnId: "" }, depth: 1 })).toBe(
      "parent.turnId must be a non-empty string",
    );
    for (const depth of [undefined, 0, -1, 1.5, "1"]) {
      expect(problemWithSubagentLinks("turn/started", { ...started, parent, depth }), String(depth)).toBe(
        "a child turn's depth must be a positive integer (1 below a top-level turn)",
      );
    }
    expect(problemWithSubagentLinks("turn/started", { ...started, depth: 1 })).toBe("depth is only for a child turn, with parent");
  });

  it("names what is wrong with an item's subagent link", () => {
    expect(problemWithSubagentLinks("item/updated", { ...base, item: { ...call, subagent: ["s2", "t2"] } })).toBe("item.subagent must be {sessionId, turnId}");
    expect(problemWithSubagentLinks("item/updated", { ...base, item: { ...call, subagent: { sessionId: "s2" } } })).toBe(
      "item.subagent.turnId must be a non-empty string",
    );
    expect(problemWithSubagentLinks("item/completed", { ...base, item: { ...call, kind: "message", subagent: { sessionId: "s2", turnId: "t2" } } })).toBe(
      'item.subagent is only for a toolCall, not a "message"',
    );
  });
});
