/**
 * The steering scenarios (MSP 2.1, invariant S): a steer of an ended turn is refused
 * `already_terminal` with its terminal; a default cancel of a steered turn sends one
 * `inbox/cancelled` before the terminal, listing exactly the discarded steer and queued turn; a
 * `keepInbox` cancel sends none and the steer is carried into the next turn; a tool call's output
 * streamed on after a steering item started in its turn keeps its own revisions (invariant A with
 * two items of one turn open at once). A host that does not
 * know `turn/steer` (JSON-RPC method not found) makes each "not run", never a pass.
 */
import { MspError, uuidv7 } from "@muse-code/sdk";
import { LONG_TOOL, QUICK } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { paramsOf, type ScenarioContext } from "./scenarioContext.js";

/** JSON-RPC's "method not found". */
const METHOD_NOT_FOUND = -32601;

/** The input every scenario steers with. */
const STEER_INPUT = [{ type: "text", text: "msp-check: steering input" }];

/**
 * Sends `turn/steer`: its result, or its `MspError` refusal; `undefined` (and the scenario marked
 * not run) when the host does not know the method.
 */
async function steer(
  ctx: ScenarioContext,
  sessionId: string,
  turnId: string,
): Promise<{ result?: Record<string, unknown>; error?: MspError; commandId: string } | undefined> {
  const commandId = uuidv7();
  ctx.step("waiting for the answer to turn/steer");
  try {
    const result = await ctx.client.command("turn/steer", { sessionId, turnId, input: STEER_INPUT, commandId }, { timeoutMs: Infinity });
    return { result, commandId };
  } catch (error) {
    if (!(error instanceof MspError)) throw error;
    if (error.kind === "rpcError" && (error.data as { code?: unknown }).code === METHOD_NOT_FOUND) {
      ctx.notRun("the host does not know turn/steer (method not found): it does not implement MSP 2.1 steering");
      return undefined;
    }
    if (error.kind === "commandRejected" || error.kind === "rpcError") return { error, commandId };
    throw error;
  }
}

/** Steers `turnId`, which runs: the steer must be accepted and its steering item start. Returns its steerId, or `undefined` (not run, or a problem recorded). */
async function steerRunning(ctx: ScenarioContext, sessionId: string, turnId: string): Promise<string | undefined> {
  const steered = await steer(ctx, sessionId, turnId);
  if (steered === undefined) return undefined;
  const line = ctx.exchange(steered.commandId).response?.line;
  if (steered.result === undefined) {
    ctx.fail(`turn/steer of a running turn must be accepted, it was refused: ${steered.error?.message ?? ""}`, [line]);
    return undefined;
  }
  const steerId = steered.result["steerId"];
  if (
    !ctx.expect(
      steerId === steered.commandId,
      `turn/steer's result must carry steerId, the commandId ${steered.commandId}; it has ${JSON.stringify(steerId)}`,
      [line],
    )
  ) {
    return undefined;
  }
  await ctx.item(
    turnId,
    (method, item) => method === "item/started" && item["steerId"] === steerId && item["author"] === "user",
    "the steering item's item/started",
  );
  return steerId as string;
}

/** Cancels the running turn and waits for every turn's terminal: a scenario that stops early leaves the wire whole (every accepted turn ended). */
async function endTurns(ctx: ScenarioContext, sessionId: string, running: string, turnIds: string[]): Promise<void> {
  await ctx.command("turn/cancel", { sessionId, turnId: running });
  for (const turnId of turnIds) await ctx.terminal(turnId);
  await ctx.settle();
}

/** The `inbox/cancelled` splices of `turnId` on the wire, with their lines. */
function splicesOf(ctx: ScenarioContext, turnId: string): Array<{ line: number; params: Record<string, unknown> }> {
  return ctx.wire.lines
    .filter((l) => l.dir === "server" && l.message?.["method"] === "inbox/cancelled" && paramsOf(l.message)["turnId"] === turnId)
    .map((l) => ({ line: l.line, params: paramsOf(l.message as Record<string, unknown>) }));
}

/** "steer after terminal rejected": `turn/steer` of a turn that ended is refused `already_terminal`, with the turn's real terminal. */
export const steerAfterTerminal: Scenario = {
  name: "steer after terminal rejected",
  needs: ["steering"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, QUICK);
    const terminal = await ctx.terminal(turn.turnId);
    const steered = await steer(ctx, sessionId, turn.turnId);
    if (steered === undefined) return;
    const line = ctx.exchange(steered.commandId).response?.line;
    if (steered.result !== undefined)
      return ctx.fail("turn/steer of a turn that already ended was accepted; it must be refused already_terminal", [terminal.line, line]);
    const data = steered.error?.kind === "commandRejected" ? (steered.error.data as Record<string, unknown>) : undefined;
    ctx.expect(
      data?.["reason"] === "already_terminal" && data["terminal"] === terminal.params["terminal"],
      `turn/steer of an ended turn must be refused already_terminal with data.terminal ${JSON.stringify(terminal.params["terminal"])}, it got ${steered.error?.message ?? ""} ${JSON.stringify(data ?? {})}`,
      [terminal.line, line],
    );
    await ctx.settle();
  },
};

/** "a splice on default cancel": a default `turn/cancel` after a steer sends one `inbox/cancelled` listing the steer and the queued turn, before the terminal (invariant S). */
export const spliceOnDefaultCancel: Scenario = {
  name: "a splice on default cancel",
  needs: ["steering"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const running = await ctx.start(sessionId, LONG_TOOL);
    const queued = await ctx.start(sessionId, QUICK);
    await ctx.item(running.turnId, (method, item) => method === "item/delta" && item["field"] === "visibleOutput", "the tool call's first output");
    const steerId = await steerRunning(ctx, sessionId, running.turnId);
    if (steerId === undefined) return endTurns(ctx, sessionId, running.turnId, [running.turnId, queued.turnId]);
    await ctx.command("turn/cancel", { sessionId, turnId: running.turnId });
    const end = await ctx.terminal(running.turnId);
    await ctx.terminal(queued.turnId);
    const splices = splicesOf(ctx, running.turnId);
    if (
      !ctx.expect(splices.length === 1, `a default turn/cancel of a steered turn must send exactly one inbox/cancelled, the host sent ${splices.length}`, [
        end.line,
        ...splices.map((s) => s.line),
      ])
    )
      return;
    const [splice] = splices as [{ line: number; params: Record<string, unknown> }];
    ctx.expect(splice.line < end.line, "the inbox/cancelled must come before the cancelled turn's turn/completed (invariant S)", [splice.line, end.line]);
    const discarded = splice.params["discarded"] as { steerIds?: unknown; turnIds?: unknown } | undefined;
    ctx.expect(
      JSON.stringify(discarded?.steerIds) === JSON.stringify([steerId]) && JSON.stringify(discarded?.turnIds) === JSON.stringify([queued.turnId]),
      `the inbox/cancelled must list exactly the discarded steer ${steerId} and queued turn ${queued.turnId}, it lists ${JSON.stringify(discarded ?? null)}`,
      [splice.line],
    );
    const item = ctx.completedItems(running.turnId).find((i) => i.item["steerId"] === steerId);
    ctx.expect(
      item?.item["status"] === "cancelled" && item.item["carriedOver"] === undefined,
      `the discarded steering item must complete "cancelled" (not carried over), it completed ${item === undefined ? "never" : JSON.stringify(item.item["status"])}`,
      [item?.line],
    );
    await ctx.settle();
  },
};

/** "no splice with keepInbox": a cancel with `keepInbox: true` sends no `inbox/cancelled`, and the steer carries over to the queued turn. */
export const noSpliceWithKeepInbox: Scenario = {
  name: "no splice with keepInbox",
  needs: ["steering"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const running = await ctx.start(sessionId, LONG_TOOL);
    const next = await ctx.start(sessionId, QUICK);
    await ctx.item(running.turnId, (method, item) => method === "item/delta" && item["field"] === "visibleOutput", "the tool call's first output");
    const steerId = await steerRunning(ctx, sessionId, running.turnId);
    if (steerId === undefined) return endTurns(ctx, sessionId, running.turnId, [running.turnId, next.turnId]);
    await ctx.command("turn/cancel", { sessionId, turnId: running.turnId, keepInbox: true });
    const end = await ctx.terminal(running.turnId);
    const nextEnd = await ctx.terminal(next.turnId);
    const splices = splicesOf(ctx, running.turnId);
    ctx.expect(
      splices.length === 0,
      "a keepInbox turn/cancel must send no inbox/cancelled (invariant S)",
      splices.map((s) => s.line),
    );
    const carried = ctx.completedItems(running.turnId).find((i) => i.item["steerId"] === steerId);
    ctx.expect(
      carried?.item["status"] === "cancelled" && carried.item["carriedOver"] === true,
      `with keepInbox the steering item must complete "cancelled" with carriedOver: true, it completed ${carried === undefined ? "never" : JSON.stringify({ status: carried.item["status"], carriedOver: carried.item["carriedOver"] })}`,
      [end.line, carried?.line],
    );
    const again = ctx.completedItems(next.turnId).find((i) => i.item["steerId"] === steerId);
    ctx.expect(again !== undefined, `the carried-over steer ${steerId} must start (and end) in the session's next turn ${next.turnId}`, [nextEnd.line]);
    await ctx.settle();
  },
};

/**
 * Two items of one turn open at once: the tool call streams, the turn is steered, and the tool's
 * output goes on after the steering item started. Each item's revisions rise by one from its own
 * previous notification, whatever the other item sent in between (invariant A, checked on the
 * wire); then a default cancel ends the turn.
 */
export const deltasAroundSteer: Scenario = {
  name: "deltas around a steer",
  needs: ["steering"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const running = await ctx.start(sessionId, LONG_TOOL);
    const first = await ctx.item(
      running.turnId,
      (method, item) => method === "item/delta" && item["field"] === "visibleOutput",
      "the tool call's first output",
    );
    const toolItemId = paramsOf(first.message ?? {})["itemId"];
    const steerId = await steerRunning(ctx, sessionId, running.turnId);
    if (steerId === undefined) return endTurns(ctx, sessionId, running.turnId, [running.turnId]);
    const started = await ctx.item(
      running.turnId,
      (method, item) => method === "item/started" && item["steerId"] === steerId,
      "the steering item's item/started",
    );
    ctx.step(`waiting for the tool call's output after the steering item started (line ${started.line})`);
    const after = await ctx.wire.waitFor((m) => m["method"] === "item/delta" && paramsOf(m)["itemId"] === toolItemId, started.line);
    ctx.expect(after.line > started.line, "the tool call's output must go on streaming after the turn was steered", [started.line]);
    await endTurns(ctx, sessionId, running.turnId, [running.turnId]);
  },
};
