/** The cancel scenarios that stop work: a turn cancelled while its model streams or its tool runs, keepInbox, and a queued turn cancelled by its turnId. */
import { LONG_STREAM, LONG_TOOL, MEDIUM_STREAM, QUICK } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { isChange, lastClientRequest, paramsOf } from "./scenarioContext.js";

export const cancelMidModel: Scenario = {
  name: "cancel mid-model",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, LONG_STREAM);
    const streaming = await ctx.item(turn.turnId, (method, item) => isChange(method) && item["kind"] === "message", "the message's first item/delta");
    ctx.step("waiting for the answer to turn/cancel");
    const ack = await ctx.client.command("turn/cancel", { sessionId, turnId: turn.turnId }, { timeoutMs: Infinity }).then(
      () => undefined,
      (error: unknown) => error as { message: string; data: unknown },
    );
    const cancelLine = lastClientRequest(ctx.wire.lines, "turn/cancel")?.line;
    ctx.expect(ack === undefined, `turn/cancel of a streaming turn must be accepted, it was refused: ${ack?.message ?? ""}`, [cancelLine, streaming.line]);
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the cancelled turn must end "cancelled", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    // The message the Stop cut: it completes "cancelled" with interrupted: true (docs/protocol.md, Items).
    const streamed = paramsOf(streaming.message ?? {});
    const cutId = (streaming.message?.["method"] === "item/delta" ? streamed : (streamed["item"] as Record<string, unknown> | undefined))?.["itemId"];
    const cut = ctx.completedItems(turn.turnId).find((i) => i.item["itemId"] === cutId);
    if (cut === undefined) ctx.fail(`the message cut by the cancel (item ${String(cutId)}) never got an item/completed`, [streaming.line, terminal.line]);
    else if (cut.item["text"] === LONG_STREAM[0]?.text) {
      ctx.fail(`the interrupted message completed with its whole text (status ${JSON.stringify(cut.item["status"])}): the stream was not stopped`, [cut.line]);
    } else {
      ctx.expect(
        cut.item["status"] === "cancelled" && cut.item["interrupted"] === true,
        `the message cut by the cancel must complete status "cancelled" with interrupted: true, it completed status ${JSON.stringify(cut.item["status"])}, interrupted ${JSON.stringify(cut.item["interrupted"])} (cut-off text)`,
        [streaming.line, cut.line],
      );
    }
    await ctx.settle();
  },
};

export const cancelMidTool: Scenario = {
  name: "cancel mid-tool",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, LONG_TOOL);
    let toolItemId: unknown;
    const running = await ctx.item(
      turn.turnId,
      (method, item) => {
        const output =
          method === "item/delta"
            ? item["field"] === "visibleOutput"
            : method === "item/updated" && typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "";
        if (output) toolItemId = item["itemId"];
        return output;
      },
      "the tool call's first output (an item/delta of its visibleOutput)",
    );
    ctx.step("waiting for the turn/completed of the turn cancelled while its tool ran");
    const { turnCompleted: outcome } = await ctx.client.cancelTurn({ sessionId, turnId: turn.turnId }, { timeoutMs: Infinity });
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(outcome.terminal === "cancelled", `the turn cancelled while its tool ran must end "cancelled", it ended ${JSON.stringify(outcome.terminal)}`, [
      terminal.line,
    ]);
    const tool = ctx.completedItems(turn.turnId).find((i) => i.item["itemId"] === toolItemId);
    ctx.expect(
      tool?.item["status"] === "cancelled",
      `the running tool call must complete "cancelled", got ${tool === undefined ? "no item/completed" : JSON.stringify(tool.item["status"])}`,
      [running.line, tool?.line, terminal.line],
    );
    const finalMessage = ctx.completedItems(turn.turnId).find((i) => i.item["text"] === "The tool finished.");
    ctx.expect(finalMessage === undefined, "the step after the cancelled tool call must not run", [finalMessage?.line]);
    await ctx.settle();
  },
};

export const keepInbox: Scenario = {
  name: "keepInbox",
  async run(ctx) {
    const sessionId = await ctx.session();
    // keepInbox: true stops the running turn only.
    const running = await ctx.start(sessionId, LONG_STREAM);
    const queued = await ctx.start(sessionId, QUICK);
    ctx.expect(queued.disposition === "queued", `a turn/start while a turn runs must be queued, got ${JSON.stringify(queued.disposition)}`, [queued.ackLine]);
    await ctx.item(running.turnId, isChange, "the first item/delta");
    await ctx.command("turn/cancel", { sessionId, turnId: running.turnId, keepInbox: true });
    const stopped = await ctx.terminal(running.turnId);
    ctx.expect(stopped.params["terminal"] === "cancelled", `the running turn must end "cancelled", it ended ${JSON.stringify(stopped.params["terminal"])}`, [
      stopped.line,
    ]);
    const kept = await ctx.terminal(queued.turnId);
    ctx.expect(
      kept.params["terminal"] === "completed",
      `with keepInbox: true the queued turn must survive and complete, it ended ${JSON.stringify(kept.params["terminal"])}`,
      [kept.line],
    );
    // Without keepInbox, each discarded turn gets its own cancelled terminal (invariant 1).
    const second = await ctx.start(sessionId, LONG_STREAM);
    const discarded = [await ctx.start(sessionId, QUICK), await ctx.start(sessionId, QUICK)];
    await ctx.item(second.turnId, isChange, "the first item/delta");
    await ctx.command("turn/cancel", { sessionId, turnId: second.turnId });
    const secondEnd = await ctx.terminal(second.turnId);
    ctx.expect(
      secondEnd.params["terminal"] === "cancelled",
      `the running turn must end "cancelled", it ended ${JSON.stringify(secondEnd.params["terminal"])}`,
      [secondEnd.line],
    );
    for (const turn of discarded) {
      const end = await ctx.terminal(turn.turnId);
      ctx.expect(
        end.params["terminal"] === "cancelled",
        `a queued turn discarded by a cancel without keepInbox must end "cancelled", it ended ${JSON.stringify(end.params["terminal"])}`,
        [turn.ackLine, end.line],
      );
    }
    await ctx.settle();
  },
};

export const cancelQueued: Scenario = {
  name: "cancel queued turn",
  async run(ctx) {
    const sessionId = await ctx.session();
    const running = await ctx.start(sessionId, MEDIUM_STREAM);
    const queued = await ctx.start(sessionId, QUICK);
    ctx.expect(queued.disposition === "queued", `a turn/start while a turn runs must be queued, got ${JSON.stringify(queued.disposition)}`, [queued.ackLine]);
    await ctx.item(running.turnId, isChange, "the first item/delta");
    const ack = await ctx.command("turn/cancel", { sessionId, turnId: queued.turnId });
    const cancelLine = lastClientRequest(ctx.wire.lines, "turn/cancel")?.line;
    ctx.expect(
      ack["turnId"] === undefined || ack["turnId"] === queued.turnId,
      `the turn/cancel of queued turn ${queued.turnId} was answered for turn ${JSON.stringify(ack["turnId"])}`,
      [cancelLine],
    );
    const queuedEnd = await ctx.terminal(queued.turnId);
    ctx.expect(
      queuedEnd.params["terminal"] === "cancelled",
      `the queued turn cancelled by its turnId must end "cancelled", it ended ${JSON.stringify(queuedEnd.params["terminal"])}`,
      [cancelLine, queuedEnd.line],
    );
    const runningEnd = await ctx.terminal(running.turnId);
    ctx.expect(
      runningEnd.params["terminal"] === "completed",
      `a cancel of the queued turn ${queued.turnId} must leave the running turn alone: it must go on to "completed", it ended ${JSON.stringify(runningEnd.params["terminal"])} (cancel queued turn)`,
      [cancelLine, runningEnd.line],
    );
    await ctx.settle();
    const started = ctx.wire.lines.find(
      (l) => l.dir === "server" && l.message?.["method"] === "turn/started" && paramsOf(l.message)["turnId"] === queued.turnId,
    );
    ctx.expect(started === undefined, `the queued turn ${queued.turnId} was cancelled before it started, yet it started`, [started?.line]);
  },
};
