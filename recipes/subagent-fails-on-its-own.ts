/**
 * subagent-fails-on-its-own: a subagent ends badly without anyone stopping its parent. Its test
 * run fails, and then its own policy (a tool-failure budget) stops it: the subagent's turn ends
 * `cancelled` with cause `hook`. Its delegating call is `failed` ("subagent cancelled"), keeping
 * what the subagent wrote, and the parent turn is not stopped: it reads the failure, goes on to
 * its next step and completes. Only a Stop of the parent carries down a tree; a subagent's own
 * ending never carries up.
 */
import assert from "node:assert/strict";
import type { LedgerItem, TurnCompletedParams } from "@muse-code/sdk";
import { TurnTree, describeTerminal } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "subagent-fails-on-its-own",
  summary: "A subagent's tool fails and its own policy stops it: its delegating call fails, the parent goes on and completes",
  // Recorded from the reference host: `npm run recipes -- --live --only subagent-fails-on-its-own --record DIR`.
  transcript: "subagent-fails-on-its-own.jsonl",
  liveModel: "subagent-fails-on-its-own.json",
  timeoutMs: 30_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const tree = new TurnTree();
    const ended: TurnCompletedParams[] = [];
    msp.events.on("notification", (n) => {
      tree.observe(n);
      if (n.method === "turn/completed") ended.push(n.params as unknown as TurnCompletedParams);
    });

    // #region wait
    // Nobody stops anything: wait for the parent's own terminal, as for any turn.
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests and report" }] });
    const done = await turn.waitForTerminal({ timeoutMs: 30_000 });
    const [child] = tree.descendantsOf(done.turnId); // the subagent: its terminal, its depth
    const call = msp.items.itemsOf(done.turnId).find((i) => i.kind === "toolCall" && i.subagent !== undefined);
    // child.terminal: cancelled, cause hook; call.status: "failed", call.failureReason: "subagent cancelled"
    // #endregion wait

    assert.ok(child !== undefined && child.terminal !== undefined, "the subagent ended");
    env.log(`subagent: ${child.terminal.terminal}, cause ${child.terminal.cause?.kind} (${describeTerminal(child.terminal)})`);
    assert.equal(child.depth, 1);
    assert.equal(child.terminal.terminal, "cancelled");
    assert.deepEqual(child.terminal.cause, { kind: "hook", reason: "tool failure budget (1 failed call)" });
    const childItems: LedgerItem[] = msp.items.itemsOf(child.turnId);
    const tool = childItems.find((i) => i.kind === "toolCall");
    assert.ok(tool?.kind === "toolCall");
    env.log(`its tool: ${tool.status}, "${tool.failureReason}", output ${JSON.stringify(tool.visibleOutput)}`);
    assert.equal(tool.status, "failed");
    assert.equal(tool.failureReason, "exit code 1");

    assert.ok(call?.kind === "toolCall");
    env.log(`delegating call: ${call.status}, "${call.failureReason}", kept ${JSON.stringify(call.visibleOutput)}`);
    assert.equal(call.status, "failed");
    assert.equal(call.failureReason, "subagent cancelled");
    assert.equal(call.visibleOutput, "2 tests failed in src/parser.test.ts.", "the subagent's last message is kept");

    // The parent was not stopped: it went on to its next step and completed, after the subagent's terminal.
    env.log(`parent: ${done.terminal} (${describeTerminal(done)})`);
    assert.equal(done.terminal, "completed");
    assert.equal(done.cause, undefined);
    assert.deepEqual(
      ended.map((t) => t.turnId),
      [child.turnId, done.turnId],
    );
    const last = msp.items
      .itemsOf(done.turnId)
      .filter((i) => i.kind === "message")
      .at(-1);
    assert.equal(last?.kind === "message" ? last.text : undefined, "The tester stopped without a result; reporting the failing suite instead.");
    await msp.close();
  },
};
