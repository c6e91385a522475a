/** The cancel scenarios that race or miss: a cancel racing a turn's completion, and a cancel of a turnId the host must not know. */
import { RejectionReasons, uuidv7 } from "@muse-code/sdk";
import { QUICK } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { isChange, lastClientRequest, paramsOf, type DirectiveStep, type ScenarioContext } from "./scenarioContext.js";

function reasonOf(error: { data: unknown } | undefined): unknown {
  const data = error?.data;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>)["reason"] : undefined;
}

function rejectionData(error: { data: unknown } | undefined): Record<string, unknown> {
  const data = error?.data;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
}

/**
 * Expect `refusal` (what {@link ScenarioContext.refused} returned) to carry `reason`: "`what` must
 * be refused `reason`, got …". An accepted command is a problem `refused` already recorded.
 */
function expectRefusedWith(
  ctx: ScenarioContext,
  refusal: { error: { message: string; data: unknown } | undefined; commandId: string },
  reason: string,
  what: string,
): void {
  ctx.expect(
    refusal.error === undefined || reasonOf(refusal.error) === reason,
    `${what} must be refused ${reason}, got ${JSON.stringify(reasonOf(refusal.error) ?? refusal.error?.message)}`,
    [ctx.exchange(refusal.commandId).response?.line],
  );
}

export const cancelRace: Scenario = {
  name: "cancel racing completion",
  async run(ctx) {
    const sessionId = await ctx.session();
    // A cancel that surely lost: the turn has already ended.
    const done = await ctx.start(sessionId, QUICK);
    const doneTerminal = await ctx.terminal(done.turnId);
    const late = await ctx.refused("turn/cancel", { sessionId, turnId: done.turnId });
    const lateLine = ctx.exchange(late.commandId).response?.line;
    expectRefusedWith(ctx, late, RejectionReasons.alreadyTerminal, "turn/cancel of an ended turn");
    if (late.error !== undefined) {
      const data = rejectionData(late.error);
      ctx.expect(
        data["terminal"] === undefined || data["terminal"] === doneTerminal.params["terminal"],
        `already_terminal says terminal ${JSON.stringify(data["terminal"])}, the turn ended ${JSON.stringify(doneTerminal.params["terminal"])}`,
        [lateLine, doneTerminal.line],
      );
    }
    // Real races: a cancel sent at five moments of a short turn's life.
    const moments: Array<{ what: string; wait: (turnId: string) => Promise<unknown> }> = [
      { what: "with the turn/start, before its ack", wait: async () => undefined },
      { what: "right after the ack", wait: async () => undefined },
      { what: "at turn/started", wait: (turnId) => ctx.wire.waitFor((m) => m["method"] === "turn/started" && paramsOf(m)["turnId"] === turnId) },
      { what: "at the first item/delta", wait: (turnId) => ctx.item(turnId, isChange, "the first item/delta") },
      { what: "at the message's item/completed", wait: (turnId) => ctx.item(turnId, (method) => method === "item/completed", "the first item/completed") },
    ];
    for (const [i, moment] of moments.entries()) {
      const commandId = uuidv7();
      const steps: DirectiveStep[] = [{ text: "A short answer that races the cancel.", chunkSize: 12, chunkDelayMs: 2 }];
      let started: Promise<unknown>;
      if (i === 0) {
        // Pipelined: the cancel follows the turn/start on the wire before the ack comes back (turnId = commandId).
        started = ctx.start(sessionId, steps, commandId);
        started.catch(() => {}); // awaited below, after the cancel: a refusal must not go unhandled meanwhile
      } else {
        await ctx.start(sessionId, steps, commandId);
        started = Promise.resolve();
      }
      await moment.wait(commandId);
      ctx.step(`waiting for the answer to a turn/cancel sent ${moment.what}`);
      const answer = await ctx.client.command("turn/cancel", { sessionId, turnId: commandId }, { timeoutMs: Infinity }).then(
        () => undefined,
        (error: unknown) => error as { message: string; data: unknown },
      );
      await started;
      const terminal = await ctx.terminal(commandId);
      const cancelCommand = lastClientRequest(ctx.wire.lines, "turn/cancel");
      const response =
        cancelCommand === undefined
          ? undefined
          : ctx.wire.lines.find(
              (l) =>
                l.line > cancelCommand.line && l.dir === "server" && l.message?.["id"] === cancelCommand.message?.["id"] && l.message?.["method"] === undefined,
            );
      if (answer === undefined) continue; // accepted: the terminal above is the turn's own (checkTranscript checks there is exactly one)
      const reason = reasonOf(answer);
      if (
        !ctx.expect(
          reason === RejectionReasons.alreadyTerminal,
          `a cancel sent ${moment.what} was refused ${JSON.stringify(reason ?? answer.message)}; only already_terminal may refuse it`,
          [response?.line],
        )
      )
        continue;
      ctx.expect(
        response !== undefined && terminal.line < response.line,
        `a cancel sent ${moment.what} was refused already_terminal before the turn's turn/completed (invariant 4)`,
        [response?.line, terminal.line],
      );
    }
    await ctx.settle();
  },
};

export const staleTurn: Scenario = {
  name: "stale turnId",
  async run(ctx) {
    const sessionId = await ctx.session();
    const unknown = await ctx.refused("turn/cancel", { sessionId, turnId: uuidv7() });
    expectRefusedWith(ctx, unknown, RejectionReasons.unknownTurn, "turn/cancel of a turnId the host never issued");
    // A turn of another session is stale here too.
    const other = await ctx.session();
    const turn = await ctx.start(other, QUICK);
    await ctx.terminal(turn.turnId);
    const elsewhere = await ctx.refused("turn/cancel", { sessionId, turnId: turn.turnId });
    expectRefusedWith(ctx, elsewhere, RejectionReasons.unknownTurn, "turn/cancel of another session's turn");
    const noSession = await ctx.refused("turn/cancel", { sessionId: uuidv7(), turnId: turn.turnId });
    expectRefusedWith(ctx, noSession, RejectionReasons.unknownSession, "turn/cancel in a session the host never created");
    await ctx.settle();
  },
};
