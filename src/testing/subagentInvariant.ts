/**
 * checkTranscript's subagent invariant (invariant 7): a parent turn ends after every
 * child turn it started; a child turn's `turn/started` names a parent whose delegating item was
 * linked to it (`subagent`) before; `cause.kind: "parent"` only below a cancelled turn; and a
 * session linked below a session the connection hears is heard too (the foreign-session rule).
 */
import { Notifications, Terminals, isObject, problemWithSubagentLinks } from "@muse-code/protocol";
import type { SessionHistory } from "./transcriptHistory.js";

/** The `subagent` link of an item notification's tool call, when it carries a well-formed one. */
function linkOf(method: string, params: Record<string, unknown>): { sessionId: string; turnId: string } | undefined {
  if (method !== Notifications.itemStarted && method !== Notifications.itemUpdated && method !== Notifications.itemCompleted) return undefined;
  const item = params["item"];
  const link = isObject(item) ? item["subagent"] : undefined;
  if (!isObject(link) || typeof link["sessionId"] !== "string" || typeof link["turnId"] !== "string") return undefined;
  return { sessionId: link["sessionId"], turnId: link["turnId"] };
}

/**
 * The foreign-session rule below a tree: a session linked below one the connection hears is heard
 * from the link on (an item's `subagent`, or a child's `turn/started` naming a heard parent
 * session, whose missing link {@link checkSubagents} reports). Called before the rule is applied.
 */
export function hearLinkedSession(method: string, params: Record<string, unknown>, history: SessionHistory): void {
  const own = history.connectionSessions;
  const sessionId = params["sessionId"];
  if (own === undefined || typeof sessionId !== "string") return;
  const link = linkOf(method, params);
  if (link !== undefined && own.has(sessionId)) own.add(link.sessionId);
  const parent = method === Notifications.turnStarted ? params["parent"] : undefined;
  if (isObject(parent) && typeof parent["sessionId"] === "string" && own.has(parent["sessionId"])) own.add(sessionId);
}

/**
 * A `session/resume` the client sent: the resumed session's tree is this connection's from the
 * request on, as the session itself is: every session the history knows below it, and each session
 * named in `childCursors`.
 */
export function hearResumedTree(params: Record<string, unknown>, history: SessionHistory): void {
  const own = history.connectionSessions;
  const root = params["sessionId"];
  if (own === undefined || typeof root !== "string") return;
  const cursors = params["childCursors"];
  if (isObject(cursors)) for (const sessionId of Object.keys(cursors)) own.add(sessionId);
  for (const child of history.subagents.sessionParents.keys()) if (below(child, root, history)) own.add(child);
}

/** Whether `sessionId` is linked below `root` (bounded by the number of links known). */
function below(sessionId: string, root: string, history: SessionHistory): boolean {
  const parents = history.subagents.sessionParents;
  let at: string | undefined = sessionId;
  for (let hops = 0; at !== undefined && hops <= parents.size; hops++) {
    if (at === root) return true;
    at = parents.get(at);
  }
  return false;
}

/**
 * The items of a `session/resume` answer: a delegating tool call still in progress there carries
 * its `subagent` link, which counts as made (a child turn may name it) and makes the child session
 * this connection's.
 */
export function seedLinks(sessionId: string, items: unknown, here: string, history: SessionHistory): void {
  if (!Array.isArray(items)) return;
  for (const item of items) {
    if (!isObject(item) || item["kind"] !== "toolCall") continue;
    const link = linkOf(Notifications.itemStarted, { item });
    if (link === undefined || typeof item["turnId"] !== "string" || typeof item["itemId"] !== "string") continue;
    recordLink(link, sessionId, item["turnId"], item["itemId"], `${here} (session/resume)`, history, false);
    history.connectionSessions?.add(link.sessionId);
  }
}

function recordLink(
  link: { sessionId: string; turnId: string },
  parentSessionId: string,
  parentTurnId: string,
  itemId: string,
  at: string,
  history: SessionHistory,
  started: boolean,
): void {
  const tree = history.subagents;
  if (tree.links.has(link.turnId)) return;
  tree.links.set(link.turnId, { sessionId: link.sessionId, parentSessionId, parentTurnId, itemId, at });
  tree.sessionParents.set(link.sessionId, parentSessionId);
  // A link seen live starts the child here: it must end here, before its parent (a link listed by a resume may have ended before the cursor).
  if (started) childrenOf(parentTurnId, history).set(link.turnId, at);
}

function childrenOf(turnId: string, history: SessionHistory): Map<string, string> {
  const children = history.subagents.children;
  let known = children.get(turnId);
  if (known === undefined) children.set(turnId, (known = new Map()));
  return known;
}

/**
 * Invariant 7 on one host notification (well-formed as `problemWithNotification` sees it):
 * - its subagent links are well-formed (`problemWithSubagentLinks`);
 * - a child turn's `turn/started` names the parent session, turn and item whose `subagent` patch
 *   named this turn and session before it, and `depth` one more than its parent turn's; a turn a
 *   link named starts with `parent`;
 * - a turn's `turn/completed` comes after the `turn/completed` of every child turn linked to or
 *   started below it;
 * - `cause.kind: "parent"` is on a child turn whose parent turn ends `cancelled` (checked at the
 *   parent's terminal, which comes later by the rule above; a parent that never ends in the
 *   transcript leaves it unchecked). A grandchild's parent, stopped by its own parent, is
 *   `cancelled` too, so this covers a turn below a cancelled one.
 *
 * A transcript marked `beginsMidSession` may lack the link of a child whose parent item it never
 * saw: that child's `turn/started` is not reported.
 */
export function checkSubagents(method: string, params: Record<string, unknown>, here: string, history: SessionHistory, say: (p: string) => void): void {
  const problem = problemWithSubagentLinks(method, params);
  if (problem !== undefined) return say(`${method}: ${problem} (invariant 7)`);
  const sessionId = params["sessionId"] as string;
  const link = linkOf(method, params);
  if (link !== undefined) {
    const item = params["item"] as Record<string, unknown>;
    const known = history.subagents.links.get(link.turnId);
    if (known !== undefined && known.itemId !== item["itemId"]) {
      return say(`${method}: item ${String(item["itemId"])} links turn ${link.turnId}, already linked to item ${known.itemId} at ${known.at} (invariant 7)`);
    }
    return recordLink(link, sessionId, item["turnId"] as string, item["itemId"] as string, here, history, true);
  }
  const turnId = params["turnId"] as string;
  if (method === Notifications.turnStarted) return checkChildStart(turnId, sessionId, params, here, history, say);
  if (method === Notifications.turnCompleted && !history.terminals.has(turnId)) checkTreeEnd(turnId, params, here, history, say);
}

function checkChildStart(
  turnId: string,
  sessionId: string,
  params: Record<string, unknown>,
  here: string,
  history: SessionHistory,
  say: (p: string) => void,
): void {
  const tree = history.subagents;
  const parent = params["parent"] as { sessionId: string; turnId: string; itemId: string } | undefined;
  if (parent === undefined) {
    if (!tree.turns.has(turnId)) tree.turns.set(turnId, { depth: 0 });
    const link = tree.links.get(turnId);
    if (link !== undefined)
      say(`turn/started of turn ${turnId} names no parent, but the subagent link at ${link.at} made it a child turn of item ${link.itemId} (invariant 7)`);
    return;
  }
  const depth = params["depth"] as number;
  const parentDepth = tree.turns.get(parent.turnId)?.depth;
  // The depth it has by its parent's, when known: one wrong depth is one problem, not one per turn below it.
  tree.turns.set(turnId, { depth: parentDepth === undefined ? depth : parentDepth + 1, parentTurnId: parent.turnId });
  if (!childrenOf(parent.turnId, history).has(turnId)) childrenOf(parent.turnId, history).set(turnId, here);
  const link = tree.links.get(turnId);
  const named = `turn/started of child turn ${turnId} names item ${parent.itemId} of turn ${parent.turnId} (session ${parent.sessionId})`;
  if (link === undefined) {
    // An excerpt that never saw the parent's item may have begun after its link.
    if ((history.midSession && !history.chains.has(parent.itemId)) || history.gaps) return;
    return say(`${named}, but no item/updated before it linked that item to this turn with subagent (invariant 7)`);
  }
  if (link.itemId !== parent.itemId || link.parentTurnId !== parent.turnId || link.parentSessionId !== parent.sessionId || link.sessionId !== sessionId) {
    return say(
      `${named} in session ${sessionId}, but the subagent link at ${link.at} is item ${link.itemId} of turn ${link.parentTurnId} (session ${link.parentSessionId}) to session ${link.sessionId} (invariant 7)`,
    );
  }
  if (parentDepth !== undefined && depth !== parentDepth + 1) {
    say(`turn/started of child turn ${turnId} says depth ${depth}, but its parent turn ${parent.turnId} is at depth ${parentDepth} (invariant 7)`);
  }
}

function checkTreeEnd(turnId: string, params: Record<string, unknown>, here: string, history: SessionHistory, say: (p: string) => void): void {
  const tree = history.subagents;
  // The leaves first: every child this turn started has ended.
  for (const [child, at] of tree.children.get(turnId) ?? []) {
    // A transcript with gaps may have left the child's terminal out; a child terminal after this one contradicts (below).
    if (!history.terminals.has(child) && !history.gaps)
      say(`turn/completed of turn ${turnId} before the turn/completed of its child turn ${child}, linked at ${at} (invariant 7)`);
  }
  // The children that said their parent stopped them: this turn was cancelled.
  const waiting = tree.parentCauses.get(turnId);
  tree.parentCauses.delete(turnId);
  if (waiting !== undefined && params["terminal"] !== Terminals.cancelled) {
    for (const child of waiting) {
      say(
        `turn/completed of turn ${turnId} is ${String(params["terminal"])}, but its child turn ${child.turnId} ended cancelled with cause.kind "parent" at ${child.at}: only a cancelled parent stops its children (invariant 7)`,
      );
    }
  }
  const cause = params["cause"];
  const parentOf = tree.turns.get(turnId)?.parentTurnId ?? tree.links.get(turnId)?.parentTurnId;
  const parentEnded = parentOf === undefined ? undefined : history.terminals.get(parentOf);
  if (history.gaps && parentEnded !== undefined) {
    say(`turn/completed of child turn ${turnId} after the turn/completed of its parent turn ${String(parentOf)} at ${parentEnded.at} (invariant 7)`);
  }
  if (!isObject(cause) || cause["kind"] !== "parent") return;
  const parentTurnId = parentOf;
  if (parentTurnId === undefined) {
    if (history.gaps) return; // the link may be a left-out line
    return say(`turn/completed of turn ${turnId} has cause.kind "parent", but no subagent link or turn/started made it a child turn (invariant 7)`);
  }
  const ended = history.terminals.get(parentTurnId);
  if (ended === undefined) {
    const list = tree.parentCauses.get(parentTurnId) ?? [];
    list.push({ turnId, at: here });
    tree.parentCauses.set(parentTurnId, list);
  } else if (ended.terminal !== Terminals.cancelled) {
    say(
      `turn/completed of turn ${turnId} has cause.kind "parent", but its parent turn ${parentTurnId} ended ${String(ended.terminal)} at ${ended.at} (invariant 7)`,
    );
  }
}
