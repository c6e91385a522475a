/** The approval scenarios: approve, deny, deny and stop, a Stop while the host asks, and an approve that crosses a cancel. */
import { ApprovalDecisions, ApprovalStates, TOOL_DENIED_REASON, type ToolApproveParams } from "@muse-code/sdk";
import { checkTranscript } from "@muse-code/sdk/testing";
import { offeredDecisions } from "@muse-code/sdk/ui";
import { answerTo, askingTurn, ranLines, THINK_MS, unanswered } from "./approvalSteps.js";
import type { WireTap } from "./checkWire.js";
import type { Scenario } from "./scenario.js";
import { lastClientRequest, pause } from "./scenarioContext.js";

export const approveScenario: Scenario = {
  name: "approve",
  needs: ["approvals"],
  async run(ctx) {
    const asking = await askingTurn(ctx, () => pause(THINK_MS).then(() => ({ decision: ApprovalDecisions.approve })));
    if (asking === undefined) return;
    const { turnId, ask, itemId } = asking;
    const terminal = await ctx.terminal(turnId);
    const answer = answerTo(ctx.wire.lines, ask);
    ctx.expect(terminal.params["terminal"] === "completed", `the approved turn must complete, it ended ${JSON.stringify(terminal.params["terminal"])}`, [
      terminal.line,
    ]);
    const early = ranLines(ctx.wire.lines, itemId).filter((l) => answer === undefined || l.line < answer.line);
    ctx.expect(early.length === 0, 'the tool call ran (output or approval: "approved") before the client\'s approve', [ask.line, early[0]?.line, answer?.line]);
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "completed" &&
        tool.item["approval"] === ApprovalStates.approved &&
        String(tool.item["visibleOutput"]).includes("msp-check tool output"),
      `the approved tool call must run and complete with approval: "approved", got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after !== undefined, "the step after the approved tool call must run", [terminal.line]);
    await ctx.settle();
  },
};

export const denyScenario: Scenario = {
  name: "deny",
  needs: ["approvals"],
  async run(ctx) {
    const asking = await askingTurn(ctx, () => pause(THINK_MS).then(() => ({ decision: ApprovalDecisions.deny, reason: "muse check says no" })));
    if (asking === undefined) return;
    const { turnId, ask, itemId } = asking;
    const terminal = await ctx.terminal(turnId);
    ctx.expect(
      terminal.params["terminal"] === "completed",
      `a denied tool call fails the call, not the turn: the turn must go on and complete, it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "failed" && tool.item["failureReason"] === TOOL_DENIED_REASON && tool.item["approval"] === ApprovalStates.denied,
      `the denied tool call must complete failed, "denied by the user", approval: "denied"; got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, failureReason ${JSON.stringify(tool.item["failureReason"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, 'the denied tool call ran (output or approval: "approved")', [ask.line, ran[0]?.line]);
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after !== undefined, "the step after the denied tool call must run (the turn goes on)", [tool?.line, terminal.line]);
    await ctx.settle();
  },
};

/**
 * `denyAndStop` (MSP 2.1): the user's Stop given in the dialog. The call is denied, as `deny`
 * denies it, and the turn is cancelled as a default `turn/cancel` cancels it: it ends `cancelled`
 * with `cause.kind: "user"`, and the step after the call never runs. A host whose question does
 * not offer `denyAndStop` (an MSP 2.0 question lists no `decisions`) has it "not run".
 */
export const denyAndStopScenario: Scenario = {
  name: "deny and stop",
  needs: ["approvals"],
  async run(ctx) {
    let offered: readonly string[] | undefined;
    const asking = await askingTurn(ctx, (request: ToolApproveParams) => {
      offered = offeredDecisions(request);
      if (!offered.includes(ApprovalDecisions.denyAndStop)) return { decision: ApprovalDecisions.deny, reason: "muse check: denyAndStop not offered" };
      return pause(THINK_MS).then(() => ({ decision: ApprovalDecisions.denyAndStop }));
    });
    if (asking === undefined) return;
    const { turnId, ask, itemId } = asking;
    const terminal = await ctx.terminal(turnId);
    if (offered?.includes(ApprovalDecisions.denyAndStop) !== true) {
      ctx.notRun(
        `not applicable (denyAndStop absent): the host's tool/approve offers no denyAndStop (decisions: ${JSON.stringify(ask.params["decisions"] ?? "none, an MSP 2.0 question")})`,
      );
      await ctx.settle();
      return;
    }
    const answer = answerTo(ctx.wire.lines, ask);
    const cause = terminal.params["cause"] as Record<string, unknown> | undefined;
    ctx.expect(
      terminal.params["terminal"] === "cancelled" && (cause === undefined || cause["kind"] === "user"),
      `denyAndStop is the user's Stop: the turn must end "cancelled" with cause.kind "user", it ended ${JSON.stringify(terminal.params["terminal"])} with cause ${JSON.stringify(cause) ?? "missing"}`,
      [answer?.line, terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool !== undefined && tool.item["status"] !== "completed" && tool.item["approval"] !== ApprovalStates.approved,
      `the call answered denyAndStop must not run: it must close denied (or cancelled), got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, 'the tool call answered denyAndStop ran (output or approval: "approved")', [ask.line, ran[0]?.line]);
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after === undefined, "the step after the call answered denyAndStop must not run: the turn is stopped", [answer?.line, after?.line]);
    await ctx.settle();
  },
};

export const stopWhileAsking: Scenario = {
  name: "stop while asking",
  needs: ["approvals"],
  async run(ctx) {
    const asking = await askingTurn(ctx, unanswered);
    if (asking === undefined) return;
    const { sessionId, turnId, ask, itemId } = asking;
    // Stop: the SDK answers the open question cancelled, then sends turn/cancel.
    ctx.step(`waiting for the turn/completed of turn ${turnId}, stopped while asking`);
    const { ack } = await ctx.client.cancelTurn({ sessionId, turnId }, { timeoutMs: Infinity });
    const terminal = await ctx.terminal(turnId);
    const answer = answerTo(ctx.wire.lines, ask);
    const cancel = lastClientRequest(ctx.wire.lines, "turn/cancel");
    const decision = (answer?.message?.["result"] as Record<string, unknown> | undefined)?.["decision"];
    ctx.expect(
      answer !== undefined && decision === ApprovalDecisions.cancelled && cancel !== undefined && answer.line < cancel.line,
      "the Stop must answer the question cancelled before its turn/cancel (the SDK does)",
      [answer?.line, cancel?.line],
    );
    ctx.expect(ack === "accepted", `turn/cancel of a turn waiting for an answer must be accepted, got ${JSON.stringify(ack)}`, [cancel?.line]);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the turn stopped while asking must end "cancelled", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "cancelled" && tool.item["approval"] === ApprovalStates.cancelled,
      `the tool call asked about must close cancelled, never dispatched (status "cancelled", approval: "cancelled"), got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line, terminal.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, "the tool call ran although the question was withdrawn", [ran[0]?.line]);
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after === undefined, "the step after the withdrawn tool call must not run", [after?.line]);
    await ctx.settle();
  },
};

/** The raw approves the late-approve scenario sends past the SDK: not the client's answers the invariants read. */
const lateApproves = new WeakMap<WireTap, Set<string>>();

export const lateApprove: Scenario = {
  name: "late approve after a cancel",
  needs: ["approvals"],
  async run(ctx) {
    const asking = await askingTurn(ctx, unanswered);
    if (asking === undefined) return;
    const { sessionId, turnId, ask, itemId } = asking;
    const approve = JSON.stringify({ jsonrpc: "2.0", id: ask.message?.["id"], result: { decision: ApprovalDecisions.approve } });
    lateApproves.set(ctx.wire, new Set([approve]));
    // The SDK answers cancelled and sends turn/cancel; an approve crosses it, past the SDK.
    ctx.step("waiting for the answer to turn/cancel");
    const cancelling = ctx.client.command("turn/cancel", { sessionId, turnId }, { timeoutMs: Infinity });
    cancelling.catch(() => {}); // awaited below
    for (let i = 0; i < 1_000 && lastClientRequest(ctx.wire.lines, "turn/cancel") === undefined; i++) await new Promise((resolve) => setImmediate(resolve));
    const crossing = ctx.wire.sendRaw(approve) + 1;
    const refused = await cancelling.then(
      () => undefined,
      (error: unknown) => error as { message: string },
    );
    ctx.expect(refused === undefined, `turn/cancel of a turn waiting for an answer must be accepted, it was refused: ${refused?.message ?? ""}`, [
      lastClientRequest(ctx.wire.lines, "turn/cancel")?.line,
    ]);
    const terminal = await ctx.terminal(turnId);
    // And one more after the terminal.
    const afterEnd = ctx.wire.sendRaw(approve) + 1;
    await ctx.settle(THINK_MS);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the turn cancelled while asking must end "cancelled" whatever answer crosses the cancel, it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [crossing, terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "cancelled",
      `the tool call must close cancelled, never dispatched, got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}`}`,
      [crossing, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, "a late approve (after the cancel, or after the terminal) ran the tool call", [crossing, afterEnd, ran[0]?.line]);
  },
  checkWire(wire) {
    // The raw approves are this scenario's own second answers (a client fault the check commits on purpose).
    const raw = lateApproves.get(wire) ?? new Set<string>();
    return checkTranscript(wire.transcript((l) => !(l.dir === "client" && raw.has(l.raw)))).problems;
  },
};
