/**
 * The subagent scenarios (docs/protocol.md "Subagents"): one Stop stops the
 * tree, leaves first, each descendant `cancelled` with cause `parent`; a child that fails on its
 * own fails its delegating call and the parent goes on; a child's open question is withdrawn when
 * the parent is stopped; a restart mid-tree closes the tree `failed: host restarted`, leaves
 * first. Each runs only on a host whose host/info lists `capabilities.subagents: true`.
 * Invariant 7 (a parent's terminal after its children's) is checkTranscript's, on every wire.
 */
import { MspError } from "@muse-code/sdk";
import { checkTranscriptParts } from "@muse-code/sdk/testing";
import { ranLines, unanswered } from "./approvalSteps.js";
import type { WireLine, WireTap } from "./checkWire.js";
import { CHILD_ASKS, CHILD_FAILS, CHILD_FAILURE, FAILING_CHILD_TEXT, PARENT_WENT_ON, TREE } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { paramsOf, type ScenarioContext } from "./scenarioContext.js";

/** A child turn as its `turn/started` names it: its session, its depth and the delegating call above it. */
interface ChildTurn {
  turnId: string;
  sessionId: string;
  depth: unknown;
  parent: { sessionId: string; turnId: string; itemId: string };
  line: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The child turns started on `lines` after line `from`: each `turn/started` that names a parent. */
function childTurns(lines: readonly WireLine[], from = 0): ChildTurn[] {
  const out: ChildTurn[] = [];
  for (const l of lines) {
    if (l.line <= from || l.dir !== "server" || l.message?.["method"] !== "turn/started") continue;
    const params = paramsOf(l.message);
    const parent = record(params["parent"]);
    const { turnId, sessionId } = params;
    if (parent === undefined || typeof turnId !== "string" || typeof sessionId !== "string") continue;
    const { sessionId: parentSession, turnId: parentTurn, itemId } = parent;
    if (typeof parentSession !== "string" || typeof parentTurn !== "string" || typeof itemId !== "string") continue;
    out.push({ turnId, sessionId, depth: params["depth"], parent: { sessionId: parentSession, turnId: parentTurn, itemId }, line: l.line });
  }
  return out;
}

/** The `turn/completed` lines of `turnId` after line `from`. */
function terminalsOf(lines: readonly WireLine[], turnId: string, from = 0): Array<WireLine & { params: Record<string, unknown> }> {
  return lines
    .filter((l) => l.line > from && l.dir === "server" && l.message?.["method"] === "turn/completed" && paramsOf(l.message)["turnId"] === turnId)
    .map((l) => ({ ...l, params: paramsOf(l.message ?? {}) }));
}

/** The `item/completed` of item `itemId` after line `from`, with its item. */
function completionOf(lines: readonly WireLine[], itemId: string, from = 0): (WireLine & { item: Record<string, unknown> }) | undefined {
  for (const l of lines) {
    if (l.line <= from || l.dir !== "server" || l.message?.["method"] !== "item/completed") continue;
    const item = record(paramsOf(l.message)["item"]);
    if (item?.["itemId"] === itemId) return { ...l, item };
  }
  return undefined;
}

/** The text of the last `message` item turn `turnId` completed on the wire, if any. */
function lastMessageOf(ctx: ScenarioContext, turnId: string): string | undefined {
  const messages = ctx.completedItems(turnId).filter((i) => i.item["kind"] === "message" && typeof i.item["text"] === "string");
  return messages.at(-1)?.item["text"] as string | undefined;
}

function causeKind(params: Record<string, unknown>): unknown {
  return record(params["cause"])?.["kind"];
}

/** Whether an item notification shows a tool call's output (an append to, or a patch of, its visibleOutput). */
function isOutput(method: string, item: Record<string, unknown>): boolean {
  return method === "item/delta"
    ? item["field"] === "visibleOutput"
    : method === "item/updated" && typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "";
}

/**
 * Wait until `count` child turns below `root` have started (a `turn/started` naming a parent
 * each). The root turn ending first is a problem, and `undefined`.
 */
async function treeOf(ctx: ScenarioContext, root: string, count: number): Promise<ChildTurn[] | undefined> {
  for (;;) {
    const children = childTurns(ctx.wire.lines);
    if (children.length >= count) return children;
    const [ended] = terminalsOf(ctx.wire.lines, root);
    if (ended !== undefined) {
      ctx.fail(
        `turn ${root} ended (${JSON.stringify(ended.params["terminal"])}) with ${children.length} child turns started below it; its directive delegates to ${count} (a delegating call's child turn is a turn/started naming its parent: docs/protocol.md, subagents)`,
        [ended.line],
      );
      return undefined;
    }
    ctx.step(`waiting for child turn ${children.length + 1} of ${count} below turn ${root} to start (a turn/started naming its parent)`);
    await ctx.wire.waitFor(
      (m) => {
        const params = paramsOf(m);
        return (m["method"] === "turn/started" && record(params["parent"]) !== undefined) || (m["method"] === "turn/completed" && params["turnId"] === root);
      },
      ctx.wire.lines.at(-1)?.line ?? 0,
    );
  }
}

/** The tree of {@link TREE} once both leaves' tools print: the worker, the delegator and the grandchild. */
async function runningTree(ctx: ScenarioContext, root: string): Promise<{ worker: ChildTurn; delegator: ChildTurn; grandchild: ChildTurn } | undefined> {
  const children = await treeOf(ctx, root, 3);
  if (children === undefined) return undefined;
  const grandchild = children.find((c) => c.parent.turnId !== root);
  const delegator = children.find((c) => c.turnId === grandchild?.parent.turnId);
  const worker = children.find((c) => c.parent.turnId === root && c !== delegator);
  if (grandchild === undefined || delegator === undefined || worker === undefined || delegator.parent.turnId !== root) {
    ctx.fail(
      `the tree below turn ${root} is not the directed one (two children of it, one of which delegates to a grandchild): the child turns started name parents ${children.map((c) => c.parent.turnId).join(", ")}`,
      children.map((c) => c.line),
    );
    return undefined;
  }
  ctx.expect(
    delegator.depth === 1 && worker.depth === 1 && grandchild.depth === 2,
    `a child turn's turn/started says its depth (1 below a top-level turn, 2 below that): the children say ${JSON.stringify(worker.depth)} and ${JSON.stringify(delegator.depth)}, the grandchild ${JSON.stringify(grandchild.depth)}`,
    [worker.line, delegator.line, grandchild.line],
  );
  for (const [leaf, what] of [
    [worker, "the worker child's"],
    [grandchild, "the grandchild's"],
  ] as const) {
    await ctx.item(leaf.turnId, isOutput, `${what} tool output (an item/delta of its visibleOutput)`);
  }
  return { worker, delegator, grandchild };
}

/**
 * Leaves first: each child turn's terminal, then its delegating call's `item/completed`, then
 * its parent turn's terminal, in wire order (after line `from`).
 */
function expectLeavesFirst(ctx: ScenarioContext, children: readonly ChildTurn[], from = 0): void {
  for (const child of children) {
    const [end] = terminalsOf(ctx.wire.lines, child.turnId, from);
    const call = completionOf(ctx.wire.lines, child.parent.itemId, from);
    const [parentEnd] = terminalsOf(ctx.wire.lines, child.parent.turnId, from);
    if (end === undefined || call === undefined || parentEnd === undefined) {
      ctx.fail(
        `the tree must close whole: child turn ${child.turnId} ${end === undefined ? "got no" : "got its"} turn/completed, its delegating call ${child.parent.itemId} ${call === undefined ? "no" : "its"} item/completed, its parent turn ${child.parent.turnId} ${parentEnd === undefined ? "no" : "its"} turn/completed`,
        [child.line, end?.line, call?.line, parentEnd?.line],
      );
      continue;
    }
    ctx.expect(
      end.line < call.line && call.line < parentEnd.line,
      `a tree closes leaves first: child turn ${child.turnId}'s turn/completed (line ${end.line}) must come before its delegating call's item/completed (line ${call.line}), and that before its parent turn's turn/completed (line ${parentEnd.line})`,
      [end.line, call.line, parentEnd.line],
    );
  }
}

export const stopTree: Scenario = {
  name: "stop a tree",
  needs: ["subagents"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const root = await ctx.start(sessionId, TREE);
    const tree = await runningTree(ctx, root.turnId);
    if (tree === undefined) return;
    // One Stop: a turn/cancel of the parent turn only.
    await ctx.command("turn/cancel", { sessionId, turnId: root.turnId });
    const terminal = await ctx.terminal(root.turnId);
    await ctx.settle();
    ctx.expect(
      terminal.params["terminal"] === "cancelled" && causeKind(terminal.params) === "user",
      `the turn the client stopped must end "cancelled" with cause.kind "user", it ended ${JSON.stringify(terminal.params["terminal"])} with cause ${JSON.stringify(terminal.params["cause"]) ?? "missing"}`,
      [terminal.line],
    );
    const children = [tree.worker, tree.delegator, tree.grandchild];
    for (const child of children) {
      const ends = terminalsOf(ctx.wire.lines, child.turnId);
      const [end] = ends;
      if (end === undefined) continue; // expectLeavesFirst names it
      ctx.expect(
        end.params["terminal"] === "cancelled" && causeKind(end.params) === "parent",
        `a descendant of the stopped turn must end "cancelled" with cause.kind "parent": child turn ${child.turnId} (depth ${JSON.stringify(child.depth)}) ended ${JSON.stringify(end.params["terminal"])} with cause ${JSON.stringify(end.params["cause"]) ?? "missing"}`,
        [end.line],
      );
      const call = completionOf(ctx.wire.lines, child.parent.itemId);
      if (call === undefined) continue;
      ctx.expect(
        call.item["status"] === "cancelled",
        `the delegating call of a child stopped with its parent must complete "cancelled", call ${child.parent.itemId} completed ${JSON.stringify(call.item["status"])}`,
        [call.line],
      );
      // What the child wrote before the Stop is its call's output, never thrown away.
      const salvaged = lastMessageOf(ctx, child.turnId);
      const output = call.item["visibleOutput"];
      if (salvaged === undefined)
        ctx.fail(`child turn ${child.turnId} completed no message, though its directive writes one before anything can stop it`, [end.line]);
      else {
        ctx.expect(
          typeof output === "string" && salvaged !== "" && output.includes(salvaged),
          `the delegating call of a stopped child must keep what the child wrote in its visibleOutput: call ${child.parent.itemId} has ${JSON.stringify(output)}, the child's last message was ${JSON.stringify(salvaged)}`,
          [call.line],
        );
      }
    }
    expectLeavesFirst(ctx, children);
    const afterStop = ctx.completedItems(root.turnId).find((i) => i.item["text"] === PARENT_WENT_ON);
    ctx.expect(afterStop === undefined, "the parent's step after its delegating calls must not run once the parent is stopped", [afterStop?.line]);
  },
};

export const childFails: Scenario = {
  name: "a child fails on its own",
  needs: ["subagents"],
  async run(ctx) {
    const sessionId = await ctx.session();
    const root = await ctx.start(sessionId, CHILD_FAILS);
    const children = await treeOf(ctx, root.turnId, 1);
    const terminal = await ctx.terminal(root.turnId);
    await ctx.settle();
    const child = children?.[0];
    if (child === undefined) return;
    const [end] = terminalsOf(ctx.wire.lines, child.turnId);
    ctx.expect(
      end?.params["terminal"] === "failed" && String(end.params["reason"]).includes(CHILD_FAILURE),
      `the child whose model erred must end "failed", its reason naming the error (${JSON.stringify(CHILD_FAILURE)}): it ended ${JSON.stringify(end?.params["terminal"])}, reason ${JSON.stringify(end?.params["reason"])}`,
      [end?.line],
    );
    const call = completionOf(ctx.wire.lines, child.parent.itemId);
    const reason = call?.item["failureReason"];
    ctx.expect(
      call?.item["status"] === "failed" && typeof reason === "string" && reason.startsWith("subagent failed: "),
      `the delegating call of a child that failed on its own must complete "failed" with failureReason "subagent failed: <reason>", it completed ${JSON.stringify(call?.item["status"])} with ${JSON.stringify(reason)}`,
      [call?.line],
    );
    const output = call?.item["visibleOutput"];
    ctx.expect(
      typeof output === "string" && output.includes(FAILING_CHILD_TEXT),
      `the delegating call of a failed child must keep what the child wrote (${JSON.stringify(FAILING_CHILD_TEXT)}) in its visibleOutput, it has ${JSON.stringify(output)}`,
      [call?.line],
    );
    ctx.expect(
      terminal.params["terminal"] === "completed",
      `a child failing on its own does not stop its parent: the parent turn must go on to "completed", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const wentOn = ctx.completedItems(root.turnId).find((i) => i.item["text"] === PARENT_WENT_ON);
    ctx.expect(wentOn !== undefined, "the parent's step after the failed delegating call must run (the parent goes on)", [terminal.line]);
    expectLeavesFirst(ctx, [child]);
  },
};

export const childQuestionWithdrawn: Scenario = {
  name: "a child's question withdrawn",
  needs: ["subagents", "approvals"],
  async run(ctx) {
    ctx.client.onApproval(unanswered);
    const sessionId = await ctx.session();
    const root = await ctx.start(sessionId, CHILD_ASKS);
    ctx.step(`waiting for the tool/approve of a child turn of turn ${root.turnId} (the child's tool call says approval: true)`);
    const ask = await ctx.wire.waitFor(
      (m) =>
        (m["method"] === "tool/approve" && paramsOf(m)["sessionId"] !== sessionId) ||
        (m["method"] === "turn/completed" && paramsOf(m)["turnId"] === root.turnId),
    );
    if (ask.message?.["method"] !== "tool/approve") {
      ctx.fail(
        `turn ${root.turnId} ended with no tool/approve from its child: the child's tool call says approval: true, and the connection that hears the tree is asked`,
        [ask.line],
      );
      return;
    }
    const asked = paramsOf(ask.message);
    const itemId = asked["itemId"];
    const childTurn = String(asked["turnId"]);
    // The parent is stopped while its child's question is open; the check leaves the question unanswered.
    await ctx.command("turn/cancel", { sessionId, turnId: root.turnId });
    const terminal = await ctx.terminal(root.turnId);
    await ctx.settle();
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the stopped parent must end "cancelled", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const [childEnd] = terminalsOf(ctx.wire.lines, childTurn);
    ctx.expect(
      childEnd?.params["terminal"] === "cancelled" && causeKind(childEnd.params) === "parent",
      `the asking child must end "cancelled" with cause.kind "parent", it ended ${JSON.stringify(childEnd?.params["terminal"])} with cause ${JSON.stringify(childEnd?.params["cause"]) ?? "missing"}`,
      [childEnd?.line],
    );
    const tool = ctx.completedItems(childTurn).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "cancelled" && tool.item["approval"] === "cancelled",
      `the child's tool call asked about must close withdrawn, never dispatched (status "cancelled", approval: "cancelled"), got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, "the child's tool call ran although its question was withdrawn", [ran[0]?.line]);
    const wentOn = ctx.completedItems(childTurn).find((i) => i.item["text"] === "Child: went on.");
    ctx.expect(wentOn === undefined, "the child's step after its withdrawn tool call must not run", [wentOn?.line]);
  },
};

/** Where "restart mid-tree" opened its second connection (its wire's two parts), and whether the restarted host knew the tree, by wire. */
const restarts = new WeakMap<WireTap, { at: number; resumed: boolean }>();

/** The last `viewCursor` of session `sessionId` on the wire. */
function lastCursor(lines: readonly WireLine[], sessionId: string): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i] as WireLine;
    if (l.dir !== "server" || l.message === undefined || !("method" in l.message)) continue;
    const params = paramsOf(l.message);
    if (params["sessionId"] === sessionId && typeof params["viewCursor"] === "string") return params["viewCursor"];
  }
  return undefined;
}

/**
 * Resume `sessionId` after `afterCursor` on the scenario's (second) connection and wait for its
 * replay: `replayed` notifications of the sessions in `tree` (the resumed one and those below it,
 * which a resume of a tree replays too). `false` when the host does not know the session
 * (`unknown_session`): it kept nothing across the restart.
 */
async function resumeAndReplay(
  ctx: ScenarioContext,
  sessionId: string,
  afterCursor: string | undefined,
  tree: ReadonlySet<string>,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  let result: Record<string, unknown>;
  const from = ctx.wire.lines.length;
  try {
    result = await ctx.command("session/resume", { sessionId, ...(afterCursor === undefined ? {} : { afterCursor }), ...extra });
  } catch (error) {
    if (MspError.is(error) && record(error.data)?.["reason"] === "unknown_session") return false;
    throw error;
  }
  const replayed = result["replayed"];
  if (typeof replayed !== "number" || replayed <= 0) return true;
  ctx.step(`waiting for the ${replayed} notifications session/resume of session ${sessionId} said it replays (its tree's)`);
  let seen = 0;
  await ctx.wire.waitFor((m) => "method" in m && tree.has(String(paramsOf(m)["sessionId"])) && ++seen >= replayed, from);
  return true;
}

export const restartMidTree: Scenario = {
  name: "restart mid-tree",
  needs: ["subagents"],
  needsSpawnedHost: true,
  async run(ctx) {
    const spawned = ctx.spawned;
    if (spawned === undefined) throw new Error("restart mid-tree needs the host's process (the check did not spawn the host)");
    const sessionId = await ctx.session();
    const root = await ctx.start(sessionId, TREE);
    const tree = await runningTree(ctx, root.turnId);
    if (tree === undefined) return;
    const children = [tree.worker, tree.delegator, tree.grandchild];
    // Where the check will resume each session of the tree: after the last cursor it heard.
    const cursors = new Map<string, string | undefined>([
      [sessionId, lastCursor(ctx.wire.lines, sessionId)],
      ...children.map((c): [string, string | undefined] => [c.sessionId, lastCursor(ctx.wire.lines, c.sessionId)]),
    ]);
    // A crash: SIGKILL to the host's process, then the same command again (on the same data).
    const killedAfter = ctx.wire.lines.length;
    spawned.signal("SIGKILL");
    ctx.step(`waiting for the host's process to exit after SIGKILL (sent after line ${killedAfter})`);
    await spawned.exited;
    await ctx.reconnect();
    const restartedAt = ctx.reconnectedAfter ?? killedAfter;
    const restart = { at: restartedAt, resumed: false };
    restarts.set(ctx.wire, restart);
    // One resume of the parent, naming each child session's cursor (childCursors): the host
    // replays the whole tree, in the order it first sent it, so the wire shows it closed leaves first.
    const childCursors = Object.fromEntries(children.map((c) => [c.sessionId, cursors.get(c.sessionId)]).filter(([, cursor]) => cursor !== undefined));
    const treeSessions = new Set([sessionId, ...children.map((c) => c.sessionId)]);
    if (!(await resumeAndReplay(ctx, sessionId, cursors.get(sessionId), treeSessions, { childCursors }))) {
      ctx.notRun(
        `the restarted host does not know session ${sessionId} (session/resume: unknown_session): it keeps no sessions across a restart (the reference host without --data DIR)`,
      );
      return;
    }
    restart.resumed = true;
    await ctx.settle();
    for (const turnId of [root.turnId, ...children.map((c) => c.turnId)]) {
      const ends = terminalsOf(ctx.wire.lines, turnId, restartedAt);
      const [end] = ends;
      ctx.expect(
        end?.params["terminal"] === "failed" && /restart/.test(String(end.params["reason"])),
        `every turn of the tree the crash cut off must be closed "failed" (reason "host restarted") by the restarted host, turn ${turnId} ${end === undefined ? "got no turn/completed after the restart" : `ended ${JSON.stringify(end.params["terminal"])}, reason ${JSON.stringify(end.params["reason"])}`}`,
        [end?.line],
      );
    }
    for (const child of children) {
      const call = completionOf(ctx.wire.lines, child.parent.itemId, restartedAt);
      ctx.expect(
        call !== undefined && call.item["status"] !== "completed" && call.item["status"] !== "inProgress",
        `the delegating call of child turn ${child.turnId} must be closed by the restart (not "completed"), it ${call === undefined ? "got no item/completed after the restart" : `completed ${JSON.stringify(call.item["status"])}`}`,
        [call?.line],
      );
      // Leaves first, in the replay's order: the child's terminal, then its call's completion, then the parent's terminal.
      const [end] = terminalsOf(ctx.wire.lines, child.turnId, restartedAt);
      const [parentEnd] = terminalsOf(ctx.wire.lines, child.parent.turnId, restartedAt);
      if (end !== undefined && call !== undefined && parentEnd !== undefined) {
        ctx.expect(
          end.line < call.line && call.line < parentEnd.line,
          `the restarted host must close the tree leaves first: child turn ${child.turnId}'s turn/completed (line ${end.line}) must come before its delegating call's item/completed (line ${call.line}), and that before its parent's turn/completed (line ${parentEnd.line})`,
          [end.line, call.line, parentEnd.line],
        );
      }
    }
  },
  checkWire(wire) {
    // Two connections to two host processes: one history in two parts (a turn accepted before the crash ends after it).
    // A restarted host that knew nothing of the tree (the scenario is then not run) leaves its turns unended: not a problem of the wire.
    const { at, resumed } = restarts.get(wire) ?? { at: Infinity, resumed: false };
    return checkTranscriptParts([wire.transcript((l) => l.line <= at), wire.transcript((l) => l.line > at)], { excerpt: !resumed }).flatMap(
      (part) => part.problems,
    );
  },
};
