/**
 * The scoped-approval scenarios (MSP 2.1). The first: a session grant covers exactly the same call and not a
 * different one. The check answers `approveForSession` to the first question; in the next turn of
 * the same session, the same call must run without a question, its item naming that grant, and a
 * call with other arguments must be asked (the check denies it: it must not run). A host whose
 * question offers no `approveForSession` (a 2.0 host lists no `decisions`) makes it "not run".
 * The second: a grant made in one session does not cover the same call in another.
 */
import { ApprovalDecisions, ApprovalStates, HostRequests, type ToolApproveParams } from "@muse-code/sdk";
import { offeredDecisions } from "@muse-code/sdk/ui";
import { ranLines } from "./approvalSteps.js";
import { GRANT_COVERS, GRANTING } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { paramsOf, type ScenarioContext } from "./scenarioContext.js";

/** The host's tool/approve lines of `turnId`, in wire order. */
function asksOf(ctx: ScenarioContext, turnId: string): Array<{ line: number; params: Record<string, unknown> }> {
  return ctx.wire.lines
    .filter((l) => l.dir === "server" && l.message?.["method"] === HostRequests.toolApprove && paramsOf(l.message)["turnId"] === turnId)
    .map((l) => ({ line: l.line, params: paramsOf(l.message ?? {}) }));
}

/** The toolCall items `turnId` completed, in wire order. */
function toolCalls(ctx: ScenarioContext, turnId: string): Array<{ line: number; item: Record<string, unknown> }> {
  return ctx.completedItems(turnId).filter((i) => i.item["kind"] === "toolCall");
}

/** "session grant is exact": an `approveForSession` grant covers the same call again in the session, and not a call with other arguments. */
export const grantCoversExactly: Scenario = {
  name: "session grant is exact",
  needs: ["approvals"],
  async run(ctx) {
    // The check's "user": "always" for the first call it is asked about, when offered; no to anything else.
    let granted: string | undefined;
    ctx.client.onApproval((request: ToolApproveParams) => {
      const offered = offeredDecisions(request);
      if (granted === undefined && offered.includes(ApprovalDecisions.approveForSession)) {
        granted = request.args;
        return { decision: ApprovalDecisions.approveForSession };
      }
      return { decision: ApprovalDecisions.deny, reason: "muse check: not covered by the session grant" };
    });
    const sessionId = await ctx.session();
    const first = await ctx.start(sessionId, GRANTING);
    const firstEnd = await ctx.terminal(first.turnId);
    const [ask] = asksOf(ctx, first.turnId);
    if (ask === undefined) {
      ctx.fail(`turn ${first.turnId} ended without a tool/approve: its tool call's directive says approval: true, so the host must ask before it runs`, [
        firstEnd.line,
      ]);
      return;
    }
    if (!offeredDecisions(ask.params as unknown as ToolApproveParams).includes(ApprovalDecisions.approveForSession)) {
      ctx.notRun(
        `not applicable (approveForSession absent): the host's tool/approve offers no approveForSession (decisions: ${JSON.stringify(ask.params["decisions"] ?? "none, an MSP 2.0 question")})`,
      );
      await ctx.settle();
      return;
    }
    const [grantedCall] = toolCalls(ctx, first.turnId);
    const grant = grantedCall?.item["grant"] as Record<string, unknown> | undefined;
    ctx.expect(
      grantedCall?.item["status"] === "completed" && grantedCall.item["approval"] === ApprovalStates.approved && typeof grant?.["grantId"] === "string",
      `the call answered approveForSession must run and complete approved, naming its grant (item.grant.grantId); got ${grantedCall === undefined ? "no item/completed" : `status ${JSON.stringify(grantedCall.item["status"])}, grant ${JSON.stringify(grant)}`}`,
      [ask.line, grantedCall?.line],
    );

    const second = await ctx.start(sessionId, GRANT_COVERS);
    const end = await ctx.terminal(second.turnId);
    const [same, other] = toolCalls(ctx, second.turnId);
    const asks = asksOf(ctx, second.turnId);
    const sameAsk = asks.find((a) => a.params["itemId"] === same?.item["itemId"]);
    ctx.expect(
      same !== undefined && same.item["args"] === granted && sameAsk === undefined,
      `the same call (${granted ?? "?"}) must run without a question: the session grant covers it${sameAsk === undefined ? "" : "; the host asked again"}`,
      [sameAsk?.line, same?.line],
    );
    const sameGrant = same?.item["grant"] as Record<string, unknown> | undefined;
    ctx.expect(
      same?.item["status"] === "completed" && same.item["approval"] === ApprovalStates.approved && sameGrant?.["grantId"] === grant?.["grantId"],
      `the covered call must complete approved, naming the grant ${JSON.stringify(grant?.["grantId"])}; got ${same === undefined ? "no item/completed" : `status ${JSON.stringify(same.item["status"])}, approval ${JSON.stringify(same.item["approval"])}, grant ${JSON.stringify(sameGrant)}`}`,
      [same?.line],
    );
    const otherAsk = asks.find((a) => a.params["itemId"] === other?.item["itemId"]);
    ctx.expect(
      other !== undefined && other.item["args"] !== granted && otherAsk !== undefined,
      "a call with different arguments must be asked about: an exact grant does not cover it",
      [other?.line],
    );
    const ran = other === undefined ? [] : ranLines(ctx.wire.lines, other.item["itemId"]);
    ctx.expect(ran.length === 0, "the call with different arguments ran, though the check denied it", [otherAsk?.line, ran[0]?.line]);
    ctx.expect(end.params["terminal"] === "completed", `the turn must complete, it ended ${JSON.stringify(end.params["terminal"])}`, [end.line]);
    await ctx.settle();
  },
};

/**
 * A grant belongs to its session (MSP 2.1, invariant 6): the check answers `approveForSession` to
 * a call in one session, then makes the same call in a second session; the host must ask there
 * (the check denies it: it must not run), and no item of the second session may name the first
 * session's grant. A host whose question offers no `approveForSession` has it "not run".
 */
export const grantStaysInSession: Scenario = {
  name: "grant stays in its session",
  needs: ["approvals"],
  async run(ctx) {
    let granted = false;
    ctx.client.onApproval((request: ToolApproveParams) => {
      if (!granted && offeredDecisions(request).includes(ApprovalDecisions.approveForSession)) {
        granted = true;
        return { decision: ApprovalDecisions.approveForSession };
      }
      return { decision: ApprovalDecisions.deny, reason: "muse check: another session's grant does not cover this call" };
    });
    const first = await ctx.session();
    const firstTurn = await ctx.start(first, GRANTING);
    const firstEnd = await ctx.terminal(firstTurn.turnId);
    const [ask] = asksOf(ctx, firstTurn.turnId);
    if (ask === undefined) {
      ctx.fail(`turn ${firstTurn.turnId} ended without a tool/approve: its tool call's directive says approval: true, so the host must ask before it runs`, [
        firstEnd.line,
      ]);
      return;
    }
    if (!granted) {
      ctx.notRun(
        `not applicable (approveForSession absent): the host's tool/approve offers no approveForSession (decisions: ${JSON.stringify(ask.params["decisions"] ?? "none, an MSP 2.0 question")})`,
      );
      await ctx.settle();
      return;
    }
    const grant = toolCalls(ctx, firstTurn.turnId)[0]?.item["grant"] as Record<string, unknown> | undefined;
    const second = await ctx.session();
    const secondTurn = await ctx.start(second, GRANTING);
    const end = await ctx.terminal(secondTurn.turnId);
    const [call] = toolCalls(ctx, secondTurn.turnId);
    const secondAsk = asksOf(ctx, secondTurn.turnId).find((a) => a.params["itemId"] === call?.item["itemId"]);
    ctx.expect(
      call !== undefined && secondAsk !== undefined,
      `the same call in another session must be asked about: the grant ${JSON.stringify(grant?.["grantId"] ?? "?")} belongs to session ${first}`,
      [call?.line, end.line],
    );
    const named = call?.item["grant"] as Record<string, unknown> | undefined;
    ctx.expect(
      named === undefined,
      `the call in session ${second} names grant ${JSON.stringify(named?.["grantId"])}: a grant covers calls of its own session only`,
      [call?.line],
    );
    const ran = call === undefined ? [] : ranLines(ctx.wire.lines, call.item["itemId"]);
    ctx.expect(ran.length === 0, "the call in the second session ran, though the check denied it", [secondAsk?.line, ran[0]?.line]);
    await ctx.settle();
  },
};
