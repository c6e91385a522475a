/**
 * approve-tool: the host asks before it runs a tool call (`tool/approve`), and the app says yes.
 * One handler answers every question; the call runs only after the answer, and the item's
 * `approval` field tells the UI where the question stands: `pending`, then `approved`.
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "approve-tool",
  summary: "client.onApproval answers tool/approve with approve: the tool runs after the answer",
  // Recorded from the reference host: `npm run recipes -- --live --only approve-tool --record DIR`.
  transcript: "approve-tool.jsonl",
  liveModel: "approve-tool.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region handler
    // One replace-only handler answers every question the host asks on this connection.
    const asked: string[] = [];
    msp.onApproval((request) => {
      asked.push(`${request.tool} ${request.args}`);
      return { decision: "approve" };
    });
    // #endregion handler

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Publish the package" }] });
    const { turnId } = await turn.accepted;
    const ended = await msp.turns.terminalOf(turnId, { timeoutMs: 10_000 });

    const call = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    env.log(`asked: ${asked.join("; ")}`);
    env.log(`answered approve: the call ${call?.status} (approval ${call?.kind === "toolCall" ? call.approval : "?"}), turn ${ended.terminal}`);
    assert.deepEqual(asked, [`shell {"command":"echo 'publishing @acme/widgets 1.4.0'; sleep 0.2; echo 'published'"}`]);
    assert.equal(ended.terminal, "completed");
    assert.ok(call?.kind === "toolCall");
    assert.equal(call.status, "completed");
    assert.equal(call.approval, "approved");
    assert.match(call.visibleOutput, /published\n$/);
    assert.equal(msp.approvals.size, 0, "no question left open");
    await msp.close();
  },
};
