/**
 * Issue 23: a `task` call whose child turn cannot start (starting it throws, as when the child's
 * log cannot be written) still completes: `failed`, with a reason that says so, and the dispatch
 * goes on; nothing is left in progress.
 */
import { describe, expect, it } from "vitest";
import type { Item } from "../../packages/protocol/src/index.js";
import type { ChildTurn } from "../../packages/host/src/agent/delegation.js";
import { SessionGrants } from "../../packages/host/src/agent/sessionGrants.js";
import { ToolCallRunner, type ToolCallOutput } from "../../packages/host/src/agent/toolCalls.js";

describe("a task call whose child cannot start", () => {
  it("completes failed 'subagent failed: the child turn could not start: …', after its subagent link", async () => {
    const sent: Array<{ method: string; item: Item }> = [];
    const out: ToolCallOutput = {
      emitItem: (method, item) => sent.push({ method, item }),
      changeItem: (_previous, next) => sent.push({ method: "item/updated", item: next }),
      append: () => true,
      settle: () => {},
      logFailure: () => undefined,
      stopTurn: () => {},
    };
    let cancelled = 0;
    const child: ChildTurn = {
      sessionId: "child-session",
      turnId: "child-turn",
      start: () => {
        throw new Error("ENOSPC: no space left on device, write");
      },
      cancel: () => void cancelled++,
      ended: () => new Promise(() => {}), // never: a call that waited for it would hang
    };
    const runner = new ToolCallRunner({
      sessionId: "parent-session",
      out,
      ask: async () => ({ decision: "approve" }),
      shell: {},
      grants: new SessionGrants(),
      delegate: () => child,
    });
    const controller = new AbortController();
    await runner.dispatch(
      { turnId: "parent-turn", depth: 0, modelName: "default" },
      [{ tool: "task", args: { prompt: "p", agent: "worker" } }],
      controller.signal,
    );
    expect(sent.map((s) => s.method)).toEqual(["item/started", "item/updated", "item/completed"]);
    expect(sent[1]?.item).toMatchObject({ subagent: { sessionId: "child-session", turnId: "child-turn" } });
    expect(sent[2]?.item).toMatchObject({
      status: "failed",
      failureReason: "subagent failed: the child turn could not start: ENOSPC: no space left on device, write",
    });
    // The abort listener went with the failure: a later cancel of the parent does not reach the child.
    controller.abort({ kind: "user" });
    expect(cancelled).toBe(0);
  });
});
