/**
 * approve-for-session: the host offers more than yes or no (MSP 2.1 `decisions`), and the app
 * answers `approveForSession` for the test run. The host records an exact session grant: the same
 * call in the next turn runs without a question, its item naming the grant; a different call (the
 * publish) is still asked, and this app denies it.
 */
import assert from "node:assert/strict";
import type { ToolApproveParams, ToolCallItem } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

const TESTS = `{"command":"echo '12 tests passed'"}`;

export const recipe: Recipe = {
  name: "approve-for-session",
  summary: "answer approveForSession: the same call later runs unasked, naming the grant; a different call is asked",
  // Recorded from the reference host: `npm run recipes -- --live --only approve-for-session --record DIR`.
  transcript: "approve-for-session.jsonl",
  liveModel: "approve-for-session.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region handler
    // Always allow the test run in this session, when the host offers it; ask about nothing else.
    const asked: ToolApproveParams[] = [];
    msp.onApproval((request) => {
      asked.push(request);
      const offered = request.decisions ?? ["approve", "deny"];
      if (request.args === TESTS && offered.includes("approveForSession")) return { decision: "approveForSession" };
      return { decision: "deny", reason: "only the tests may run unattended" };
    });
    // #endregion handler

    const calls = (turnId: string) => msp.items.itemsOf(turnId).filter((item): item is ToolCallItem => item.kind === "toolCall");
    const first = await msp.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] }).completed;
    const rule = asked[0]?.grant;
    env.log(`asked with decisions ${asked[0]?.decisions?.join(", ")}; the grant would be ${rule?.match} ${rule?.tool} ${rule?.args}`);
    const [granted] = calls(first.turnId);
    env.log(`turn 1: the tests ${granted?.status}, approved by the grant it created: ${granted?.grant?.grantId !== undefined}`);

    // #region covered
    const second = await msp.startTurn({ sessionId, input: [{ type: "text", text: "Test and publish" }] }).completed;
    // A call a grant approved names it: show it as "not asked".
    const lines = calls(second.turnId).map((call) =>
      call.grant === undefined
        ? `${call.args}: ${call.status} (asked, ${call.approval})`
        : `${call.args}: ${call.status} (not asked: grant ${call.grant.grantId})`,
    );
    // #endregion covered
    for (const line of lines) env.log(line);
    const [covered, publish] = calls(second.turnId);
    env.log(
      `turn 2: the tests ${covered?.status} unasked (grant ${covered?.grant?.grantId === granted?.grant?.grantId ? "the same" : "another"}); publish ${publish?.approval}`,
    );

    assert.equal(first.terminal, "completed");
    assert.equal(second.terminal, "completed");
    assert.deepEqual(
      asked.map((q) => q.args),
      [TESTS, `{"command":"echo 'published @acme/widgets 1.4.0'"}`],
    );
    assert.deepEqual(asked[0]?.decisions, ["approve", "approveForSession", "deny", "denyAndStop"]);
    assert.deepEqual(asked[0]?.grant, { tool: "shell", args: TESTS, match: "exact" });
    assert.equal(granted?.approval, "approved");
    assert.deepEqual(granted?.grant, { grantId: granted?.grant?.grantId, tool: "shell", args: TESTS, match: "exact" });
    assert.equal(covered?.status, "completed");
    assert.equal(covered?.approval, "approved");
    assert.deepEqual(covered?.grant, granted?.grant);
    assert.match(covered?.visibleOutput ?? "", /12 tests passed/);
    assert.equal(publish?.approval, "denied");
    assert.equal(publish?.status, "failed");
    assert.equal(publish?.visibleOutput, "");
    assert.equal(publish?.grant, undefined);
    await msp.close();
  },
};
