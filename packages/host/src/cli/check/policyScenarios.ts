/**
 * The MSP 2.1 scenarios of policy stops and usage: a turn a named hook stops ends `cancelled` with
 * `cause.kind: "hook"` and a non-empty reason (not `"user"`: the client sent no `turn/cancel`), and
 * a turn cancelled while its tool runs carries the usage its directive declared, each count a
 * non-negative integer. A host that refuses the directive key (`stopByHook`, `usage`), failing
 * the turn with a reason naming it, has no such feature: the scenario is "not run", never passed.
 */
import { HOOK_REASON, HOOK_STOPPED, USAGE_OF_STEP, USAGE_TOOL } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { paramsOf, type ScenarioContext } from "./scenarioContext.js";

/**
 * The host's reason when it failed the turn refusing the directive key `key` itself as unknown (it
 * has no such feature), else undefined. A failure about a part of the key's value
 * (`….usage.inputTokens: must be …`) or one that merely mentions the key is a host that has the
 * feature and got it wrong: a failure, never "not run".
 */
function refused(params: Record<string, unknown>, key: string): string | undefined {
  const reason = params["reason"];
  if (params["terminal"] !== "failed" || typeof reason !== "string") return undefined;
  const namesKey = new RegExp(`\\b${key}\\b(?![.[])`).test(reason);
  return namesKey && /\b(unknown|unsupported|not supported)\b/i.test(reason) ? reason : undefined;
}

/** Marks the scenario not run when the host refused `key`; returns true when it did. */
function notSupported(ctx: ScenarioContext, params: Record<string, unknown>, key: string, feature: string): boolean {
  const reason = refused(params, key);
  if (reason === undefined) return false;
  ctx.notRun(`the host refused the directive key ${key} (${feature}): ${reason}`);
  return true;
}

/** "hook stop's cause": a step a named policy hook stops ends the turn `cancelled` with `cause.kind: "hook"`, and neither it nor the next step runs. */
export const hookStopCause: Scenario = {
  name: "hook stop's cause",
  needs: ["policyHooks"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, HOOK_STOPPED);
    const terminal = await ctx.terminal(turn.turnId);
    const params = terminal.params;
    if (notSupported(ctx, params, "stopByHook", "no policy stops")) return ctx.settle();
    ctx.expect(
      params["terminal"] === "cancelled",
      `a turn a policy hook stopped must end "cancelled", it ended ${JSON.stringify(params["terminal"])}${params["terminal"] === "completed" ? " (a host without policy stops must refuse the directive key stopByHook: fail the turn naming it)" : ""}`,
      [terminal.line],
    );
    if (params["terminal"] === "cancelled") {
      const cause = params["cause"];
      const kind = typeof cause === "object" && cause !== null ? (cause as Record<string, unknown>)["kind"] : undefined;
      const reason = typeof cause === "object" && cause !== null ? (cause as Record<string, unknown>)["reason"] : undefined;
      ctx.expect(
        kind === "hook",
        `a turn a policy hook stopped must say cause.kind "hook", it says cause ${JSON.stringify(cause) ?? "missing"}${kind === "user" ? ': "user" is a user\'s turn/cancel, and the client sent none' : ""} (hook stop's cause)`,
        [terminal.line],
      );
      ctx.expect(
        reason === HOOK_REASON,
        `a hook stop's cause must carry the reason the hook gave (the directive's stopByHook, ${JSON.stringify(HOOK_REASON)}), it has ${JSON.stringify(reason) ?? "none"}`,
        [terminal.line],
      );
    }
    // Step 1 ran whole, and nothing of the stopped step or the one after it began.
    const started = ctx.wire.lines.filter(
      (l) =>
        l.dir === "server" &&
        l.message?.["method"] === "item/started" &&
        (paramsOf(l.message)["item"] as Record<string, unknown> | undefined)?.["turnId"] === turn.turnId,
    );
    const completed = ctx.completedItems(turn.turnId);
    const first = completed[0];
    ctx.expect(
      started.length === 1 && completed.length === 1 && first?.item["text"] === HOOK_STOPPED[0]?.text && first?.item["status"] === "completed",
      `the turn must hold exactly one item, the first step's message ${JSON.stringify(HOOK_STOPPED[0]?.text)} ended "completed": the step the hook stopped, and the steps after it, must not begin (nothing of them runs); it started ${started.length} item(s) and completed ${completed.length}`,
      [...started.map((l) => l.line), ...completed.map((c) => c.line)],
    );
    await ctx.settle();
  },
};

/** "usage on a cancelled turn": a turn cancelled mid-tool carries `usage` that counts the step that ran and not the one that never did. */
export const usageOnCancelledTurn: Scenario = {
  name: "usage on a cancelled turn",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, USAGE_TOOL);
    // The tool's first output, or the turn's end before it (a host that refused the directive key usage).
    ctx.step(`waiting for the tool call's first output (an item/delta of its visibleOutput) of turn ${turn.turnId}`);
    const first = await ctx.wire.waitFor((m) => {
      const params = paramsOf(m);
      if (m["method"] === "turn/completed") return params["turnId"] === turn.turnId;
      return m["method"] === "item/delta" && params["turnId"] === turn.turnId && params["field"] === "visibleOutput";
    });
    if (first.message?.["method"] === "turn/completed") {
      const end = paramsOf(first.message);
      if (notSupported(ctx, end, "usage", "no usage")) return ctx.settle();
      ctx.fail(`the turn ended ${JSON.stringify(end["terminal"])} before its tool ran: ${JSON.stringify(end["reason"])}`, [first.line]);
      return ctx.settle();
    }
    await ctx.command("turn/cancel", { sessionId, turnId: turn.turnId });
    const terminal = await ctx.terminal(turn.turnId);
    const params = terminal.params;
    ctx.expect(
      params["terminal"] === "cancelled",
      `the turn cancelled while its tool ran must end "cancelled", it ended ${JSON.stringify(params["terminal"])}`,
      [terminal.line],
    );
    const usage = params["usage"];
    if (usage === undefined) {
      ctx.fail(
        `the cancelled turn's turn/completed carries no usage, though its directive declared usage for the step that ran (${JSON.stringify(USAGE_OF_STEP)}): a Stop still costs tokens (usage on every terminal)`,
        [terminal.line],
      );
      return ctx.settle();
    }
    const counts = typeof usage === "object" && usage !== null ? (usage as Record<string, unknown>) : {};
    const bad = Object.keys(USAGE_OF_STEP).filter((key) => !(Number.isSafeInteger(counts[key]) && (counts[key] as number) >= 0));
    ctx.expect(
      bad.length === 0,
      `the cancelled turn's usage must be {inputTokens, outputTokens, reasoningTokens}, each a non-negative integer; ${bad.map((key) => `${key} is ${JSON.stringify(counts[key]) ?? "missing"}`).join(", ")}`,
      [terminal.line],
    );
    if (bad.length === 0) {
      ctx.expect(
        Object.entries(USAGE_OF_STEP).every(([key, n]) => counts[key] === n),
        `the cancelled turn's usage must count the step that ran, cut short or not, and not the step that never ran: ${JSON.stringify(USAGE_OF_STEP)}, it is ${JSON.stringify(usage)}`,
        [terminal.line],
      );
    }
    await ctx.settle();
  },
};
