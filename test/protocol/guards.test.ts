import { describe, expect, it } from "vitest";
import { isCompatibleProtocol, isTurnCompleted } from "../../src/index.js";
import { problemWithNotification } from "../../packages/protocol/src/guards.js";

const base = { sessionId: "s", viewCursor: "v:s:1" };

describe("protocol guards", () => {
  it("accepts a well-formed turn/completed and names what is wrong with a bad one", () => {
    expect(isTurnCompleted({ ...base, turnId: "t", terminal: "cancelled", reason: "r", durationMs: 1, cause: { kind: "user" } })).toBe(true);
    expect(problemWithNotification("turn/completed", { ...base, turnId: "t", terminal: "stopped" })).toMatch(
      /terminal "stopped" is not one of completed, cancelled, failed/,
    );
    expect(problemWithNotification("turn/completed", { ...base, turnId: "t", terminal: "failed", cause: { kind: "alien" } })).toMatch(/cause/);
    expect(problemWithNotification("turn/completed", { viewCursor: "v" })).toBe("sessionId must be a string");
    expect(problemWithNotification("turn/completed", [1])).toBe("params must be an object");
  });

  it("checks turn/completed's usage (MSP 2.1): when present, three non-negative integer counts", () => {
    const done = { ...base, turnId: "t", terminal: "cancelled", reason: "r", durationMs: 1, cause: { kind: "user" } };
    expect(isTurnCompleted({ ...done, usage: { inputTokens: 0, outputTokens: 12, reasoningTokens: 3 } })).toBe(true);
    const message = "usage must be {inputTokens, outputTokens, reasoningTokens}, each a non-negative integer";
    for (const usage of [
      { inputTokens: -1, outputTokens: 0, reasoningTokens: 0 },
      { inputTokens: 1.5, outputTokens: 0, reasoningTokens: 0 },
      { inputTokens: 1, outputTokens: "2", reasoningTokens: 0 },
      { inputTokens: 1, outputTokens: 2 },
      [1, 2, 3],
      null,
      7,
    ]) {
      expect(problemWithNotification("turn/completed", { ...done, usage }), JSON.stringify(usage)).toBe(message);
    }
  });

  it("checks item notifications' items", () => {
    const item = { itemId: "i", kind: "toolCall", turnId: "t", revision: 1, status: "inProgress" };
    expect(problemWithNotification("item/updated", { ...base, item })).toBeUndefined();
    expect(problemWithNotification("item/updated", { ...base, item: { ...item, kind: "video" } })).toMatch(/item.kind "video"/);
    expect(problemWithNotification("item/updated", { ...base, item: { ...item, revision: "2" } })).toBe("item.revision must be a number");
  });

  it("leaves methods MSP does not define unchecked", () => {
    expect(problemWithNotification("vendor/thing", 42)).toBeUndefined();
  });

  it("reads protocol compatibility", () => {
    expect(isCompatibleProtocol("2.7")).toBe(true);
    expect(isCompatibleProtocol("1.0")).toBe(false);
    expect(isCompatibleProtocol("3.0")).toBe(false);
    expect(isCompatibleProtocol("1.7", "1.0")).toBe(true);
  });
});
