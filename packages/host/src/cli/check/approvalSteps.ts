/** The steps the approval scenarios share: start a turn that asks, wait for its tool/approve, find the answer and whether the call ran. */
import { ApprovalDecisions, ApprovalStates, HostRequests, type ApprovalHandler } from "@muse-code/sdk";
import type { WireLine } from "./checkWire.js";
import { ASKING } from "./directives.js";
import { paramsOf, type ScenarioContext } from "./scenarioContext.js";

/** How long the check's "user" thinks before it answers a question (so a tool run before the answer shows on the wire). @unit milliseconds */
export const THINK_MS = 300;

/** A handler that leaves the question to the scenario: it settles only when the SDK answers for it. */
export function unanswered(_request: unknown, { signal }: { signal: AbortSignal }): Promise<{ decision: "cancelled" }> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ decision: ApprovalDecisions.cancelled }), { once: true }));
}

/**
 * Wait for the host's tool/approve of the turn. A turn that ends first never asked: a problem,
 * and `undefined`.
 */
async function askOf(ctx: ScenarioContext, turnId: string): Promise<(WireLine & { params: Record<string, unknown> }) | undefined> {
  ctx.step(`waiting for the tool/approve of turn ${turnId} (the directive's tool call says approval: true)`);
  const line = await ctx.wire.waitFor(
    (m) => (m["method"] === HostRequests.toolApprove || m["method"] === "turn/completed") && paramsOf(m)["turnId"] === turnId,
  );
  const message = line.message as Record<string, unknown>;
  if (message["method"] === HostRequests.toolApprove) return { ...line, params: paramsOf(message) };
  ctx.fail(
    `turn ${turnId} ended without a tool/approve: its tool call's directive says approval: true, so the host must ask before it runs (a host without approvals says capabilities.approvals: false in host/info; see docs/checkable-hosts.md)`,
    [line.line],
  );
  return undefined;
}

/** A turn of {@link ASKING} that asked: its session, its turnId, the host's tool/approve and the item it asks about. */
export interface AskingTurn {
  sessionId: string;
  turnId: string;
  ask: WireLine & { params: Record<string, unknown> };
  itemId: unknown;
}

/**
 * Let `handler` answer this connection's questions, start a turn of {@link ASKING} in a new
 * session and wait for its tool/approve. A turn that ends first never asked: a problem (see
 * {@link askOf}), and `undefined`.
 */
export async function askingTurn(ctx: ScenarioContext, handler: ApprovalHandler): Promise<AskingTurn | undefined> {
  ctx.client.onApproval(handler);
  const sessionId = await ctx.session();
  const turn = await ctx.start(sessionId, ASKING);
  const ask = await askOf(ctx, turn.turnId);
  if (ask === undefined) return undefined;
  return { sessionId, turnId: turn.turnId, ask, itemId: ask.params["itemId"] };
}

/** The client's answer to the host request on `ask`'s line. */
export function answerTo(lines: readonly WireLine[], ask: WireLine): WireLine | undefined {
  const id = ask.message?.["id"];
  return lines.find((l) => l.line > ask.line && l.dir === "client" && l.message !== undefined && !("method" in l.message) && l.message["id"] === id);
}

/** The server lines about item `itemId` that show it ran: output (an `item/delta` of it, or an item with some), or `approval: "approved"`. */
export function ranLines(lines: readonly WireLine[], itemId: unknown): WireLine[] {
  return lines.filter((l) => {
    if (l.dir !== "server") return false;
    const params = paramsOf(l.message ?? {});
    if (l.message?.["method"] === "item/delta") return params["itemId"] === itemId && params["field"] === "visibleOutput";
    const item = params["item"] as Record<string, unknown> | undefined;
    if (item === undefined || item["itemId"] !== itemId) return false;
    return (typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "") || item["approval"] === ApprovalStates.approved;
  });
}
