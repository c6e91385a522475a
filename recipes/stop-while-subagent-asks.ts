/**
 * stop-while-subagent-asks: a subagent asks before running a tool (`tool/approve` for an item of
 * the child session, asked on the connection that hears the parent), and the user stops the
 * parent instead of answering. The Stop carries down: the host withdraws the question
 * (`approval: "cancelled"`), closes the call as never dispatched, ends the subagent `cancelled`
 * with cause `parent`, then the parent. The tool never runs.
 */
import assert from "node:assert/strict";
import type { ToolApproveParams } from "@muse-code/sdk";
import { TurnTree, describeTerminal } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "stop-while-subagent-asks",
  summary: "A subagent asks; the parent is stopped: the question is withdrawn (approval cancelled), the tool never runs",
  // Recorded from the reference host: `npm run recipes -- --live --only stop-while-subagent-asks --record DIR`.
  transcript: "stop-while-subagent-asks.jsonl",
  liveModel: "stop-while-subagent-asks.json",
  timeoutMs: 30_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const tree = new TurnTree();
    msp.events.on("notification", (n) => void tree.observe(n));

    // #region ask
    // The dialog: the question names the child session and turn that asks.
    let showDialog = (_: ToolApproveParams) => {};
    const dialog = new Promise<ToolApproveParams>((resolve) => (showDialog = resolve));
    msp.onApproval((request) => {
      showDialog(request);
      return new Promise(() => {}); // the user never answers: they click Stop instead
    });
    // #endregion ask
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Release 2.0.0" }] });
    const { turnId } = await turn.accepted;
    const question = await dialog;
    const [child] = tree.descendantsOf(turnId);
    assert.ok(child !== undefined);
    env.log(`asked: ${question.tool} ${JSON.stringify(question.args)}, in the subagent's session (depth ${child.depth})`);
    assert.equal(question.sessionId, child.sessionId, "the question is the subagent's");
    assert.equal(question.turnId, child.turnId);

    // #region stop
    // Stop the parent: the host withdraws the subagent's question, then ends the tree leaves first.
    const { turnCompleted } = await turn.cancel({ timeoutMs: 20_000 });
    const asked = msp.items.get(question.turnId, question.itemId);
    // asked.approval: "cancelled"; asked.status: "cancelled", "tool call aborted before dispatch"
    // #endregion stop

    assert.ok(asked?.kind === "toolCall");
    const childEnd = tree.turn(child.turnId)?.terminal;
    env.log(`the asked call: ${asked.status}, approval ${asked.approval}, "${asked.failureReason}", output ${JSON.stringify(asked.visibleOutput)}`);
    env.log(
      `subagent: ${childEnd?.terminal} (${childEnd === undefined ? "?" : describeTerminal(childEnd)}); parent: ${turnCompleted.terminal} (${describeTerminal(turnCompleted)})`,
    );
    assert.equal(asked.approval, "cancelled");
    assert.equal(asked.status, "cancelled");
    assert.equal(asked.failureReason, "tool call aborted before dispatch");
    assert.equal(asked.visibleOutput, "", "the tool never ran");
    assert.equal(childEnd?.terminal, "cancelled");
    assert.equal(childEnd.reason, "cancelled while awaiting approval");
    assert.deepEqual(childEnd.cause, { kind: "parent" });
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.deepEqual(turnCompleted.cause, { kind: "user" });
    const call = msp.items.itemsOf(turnId).find((i) => i.kind === "toolCall" && i.subagent !== undefined);
    assert.ok(call?.kind === "toolCall");
    assert.equal(call.status, "cancelled");
    assert.equal(call.failureReason, "subagent cancelled by its parent");
    assert.equal(call.visibleOutput, "About to publish @acme/widgets 2.0.0.");
    assert.equal(msp.approvals.size, 0, "no question is left open");
    await msp.close();
  },
};
