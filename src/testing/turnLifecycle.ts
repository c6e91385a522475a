/**
 * checkTranscript's turn and item lifecycle: the invariants a host's notifications keep (1, 2, 3
 * and 5): one terminal per turn, items closed before it, nothing after it, `viewCursor` rising.
 * Each item notification is folded into its chain (itemChain: invariants A and B of MSP 2.0).
 */
import { Notifications, parseViewCursor, problemWithNotification } from "@muse-code/protocol";
import { checkGate, checkStopAnswerTerminal } from "./approvalInvariant.js";
import { foldIntoChain } from "./itemChain.js";
import {
  checkSteeringAtTerminal,
  noteSplice,
  noteSteeringCompleted,
  noteSteeringStarted,
  noteTurnStarted,
  reportSteeringUnended,
} from "./steeringInvariant.js";
import { checkSubagents, hearLinkedSession } from "./subagentInvariant.js";
import type { SessionHistory } from "./transcriptHistory.js";

/** A host notification: well-formed, its cursor rising, its turn and item in the right state. */
export function checkNotification(
  method: string,
  params: Record<string, unknown> | undefined,
  here: string,
  part: number,
  history: SessionHistory,
  say: (p: string) => void,
): void {
  const shape = problemWithNotification(method, params);
  if (shape?.startsWith("usage") === true)
    say(`${method}: ${shape} (invariant U)`); // a terminal still: it ends its turn
  else if (shape !== undefined) return say(`${method}: ${shape}`);
  if (params === undefined) return;
  const sessionId = params["sessionId"];
  // No leak across sessions: a connection hears only the sessions it created or resumed, and the sessions linked below them.
  hearLinkedSession(method, params, history);
  const own = history.connectionSessions;
  const askedAbout = method === Notifications.turnCompleted && history.connectionCancels.has(String(params["turnId"]));
  if (own !== undefined && typeof sessionId === "string" && !own.has(sessionId) && !askedAbout) {
    say(`${method} for session ${sessionId}, which this connection did not create or resume (a foreign session)`);
  }
  // Invariant 5.
  const cursor = params["viewCursor"];
  if (typeof sessionId === "string" && typeof cursor === "string") {
    const last = history.cursors.get(sessionId);
    const n = parseViewCursor(cursor, sessionId);
    // The session's first notification here: the transcript holds it from its start only at cursor 1.
    if (!history.sessions.has(sessionId)) history.sessions.set(sessionId, n === 1);
    if (n === 1) history.sessionsFromStart.add(sessionId);
    if (n === undefined) {
      say(`${method}: viewCursor ${JSON.stringify(cursor)} is not a cursor of session ${sessionId} (v:<sessionId>:<n>, invariant 5)`);
    } else {
      if (last !== undefined && !cursorAfter(cursor, last.cursor, sessionId)) {
        say(`${method}: viewCursor ${cursor} does not increase on ${last.cursor} at ${last.at} (invariant 5)`);
      }
      history.cursors.set(sessionId, { cursor, at: here });
    }
  }
  checkSubagents(method, params, here, history, say);
  switch (method) {
    case Notifications.turnStarted: {
      const turnId = params["turnId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) say(`turn/started for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
      history.turnsBegun.add(turnId);
      noteTurnStarted(history.steering, String(sessionId), turnId);
      return;
    }
    case Notifications.inboxCancelled:
      noteSplice(history.steering, params, here, history.terminals, say);
      return;
    case Notifications.itemStarted:
    case Notifications.itemDelta:
    case Notifications.itemUpdated:
    case Notifications.itemCompleted: {
      const named = (method === Notifications.itemDelta ? params : params["item"]) as Record<string, unknown>;
      const turnId = named["turnId"] as string;
      const itemId = named["itemId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) return say(`${method} (item ${itemId}) for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
      // The item as it stands after this notification: whole when its chain holds it (a patch or a delta is folded in).
      const item = foldIntoChain(method, params, here, history, say);
      if (item["kind"] === "toolCall") checkGate(method, item, String(sessionId), here, history, say);
      if (method === Notifications.itemStarted) {
        const open = history.openItems.get(itemId);
        if (open !== undefined) say(`a second item/started for item ${itemId}; the first was at ${open.at}`);
        else if (history.completedItems.has(itemId)) say(`item/started for item ${itemId} after its item/completed at ${history.completedItems.get(itemId)}`);
        else history.openItems.set(itemId, { turnId, at: here, part });
        if (item["kind"] === "message") noteSteeringStarted(history.steering, item);
      } else if (method === Notifications.itemCompleted) {
        const done = history.completedItems.get(itemId);
        if (done !== undefined) say(`a second item/completed for item ${itemId}; the first was at ${done} (invariant 2)`);
        else {
          history.openItems.delete(itemId);
          history.completedItems.set(itemId, here);
          if (item["kind"] === "message") noteSteeringCompleted(history.steering, String(sessionId), item, here, say);
        }
      }
      return;
    }
    case Notifications.turnCompleted: {
      const turnId = params["turnId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) return say(`a second turn/completed for turn ${turnId}; the first was at ${ended.at} (invariant 1)`);
      history.terminals.set(turnId, { at: here, terminal: params["terminal"], params });
      const rejected = history.earlyRejections.get(turnId);
      if (rejected !== undefined)
        say(`turn/completed for turn ${turnId} after the already_terminal rejection at ${rejected}: the rejection follows the terminal (invariant 4)`);
      checkHookCause(turnId, params, say);
      const accepted = history.cancelAccepted.get(turnId);
      const note = (p: string) => history.notes.push(`${here}: ${p}`);
      if (accepted !== undefined) checkCancelCause(turnId, params, accepted, say, note);
      checkStopAnswerTerminal(turnId, params, history, say, note);
      checkSteeringAtTerminal(history.steering, turnId, params, history.turnsBegun.has(turnId), say, history.gaps);
      for (const [itemId, open] of history.openItems) {
        if (open.turnId !== turnId) continue;
        history.openItems.delete(itemId);
        // A transcript with gaps may have left the item's item/completed out.
        if (history.gaps) continue;
        say(`turn/completed for turn ${turnId} while item ${itemId}, started at ${open.at}, has no item/completed (invariant 2)`);
      }
      return;
    }
    default:
      return;
  }
}

/**
 * The cause of a turn the client stopped: once the host accepted the client's `turn/cancel` (at
 * `acceptedAt`), a `cancelled` terminal of that turn is the user's Stop and says `cause.kind:
 * "user"` (`disposed` would tell the app the host shut down, `hook` a policy stopped it). A
 * terminal with no `cause` is not a wrong cause: it is noted (`note`), not a problem. Checked when
 * both the acceptance and the terminal are in the transcript, whichever comes last.
 */
export function checkCancelCause(
  turnId: string,
  terminal: Record<string, unknown>,
  acceptedAt: string,
  say: (p: string) => void,
  note: (p: string) => void,
): void {
  if (terminal["terminal"] !== "cancelled") return;
  const cause = terminal["cause"];
  if (cause === undefined) {
    return note(
      `turn/completed of turn ${turnId} is cancelled with no cause after the host accepted the client's turn/cancel at ${acceptedAt}: a host that sends a cause says "user" here`,
    );
  }
  const kind = typeof cause === "object" && cause !== null ? (cause as Record<string, unknown>)["kind"] : undefined;
  if (kind === "user") return;
  say(
    `turn/completed of turn ${turnId} is cancelled with cause.kind ${JSON.stringify(kind) ?? "missing"}, but the host accepted the client's turn/cancel at ${acceptedAt}: a Stop's cause is "user"`,
  );
}

/**
 * Invariant P (MSP 2.1): a policy stop, `cause.kind: "hook"`, appears only on a `cancelled`
 * terminal, and says why in a non-empty `cause.reason`.
 */
export function checkHookCause(turnId: string, terminal: Record<string, unknown>, say: (p: string) => void): void {
  const cause = terminal["cause"] as { kind?: unknown; reason?: unknown } | undefined;
  if (cause?.kind !== "hook") return;
  if (terminal["terminal"] !== "cancelled") {
    say(`turn/completed of turn ${turnId} is ${String(terminal["terminal"])} with cause.kind "hook": a policy stop ends a turn cancelled (invariant P)`);
  }
  if (typeof cause.reason !== "string" || cause.reason.trim() === "") {
    say(`turn/completed of turn ${turnId} has cause.kind "hook" with no reason: a policy stop says why, in a non-empty cause.reason (invariant P)`);
  }
}

/** True when cursor `next` comes strictly after `last` (both well-formed cursors of `sessionId`), by their sequence numbers. */
function cursorAfter(next: string, last: string, sessionId: string): boolean {
  return (parseViewCursor(next, sessionId) as number) > (parseViewCursor(last, sessionId) as number);
}

/**
 * At the end of a whole transcript: each accepted turn that never got its `turn/completed`
 * (invariant 1), and each item that never got its `item/completed` (invariant 2), reported in the
 * part that accepted or started it.
 */
export function reportUnended(history: SessionHistory, problemsOf: (part: number) => string[]): void {
  for (const [turnId, accepted] of history.accepted) {
    if (history.terminals.has(turnId)) continue;
    problemsOf(accepted.part).push(
      `${accepted.at}: turn ${turnId}, accepted here, never gets a turn/completed (invariant 1; pass {excerpt: true} for an excerpt)`,
    );
  }
  for (const [itemId, open] of history.openItems) {
    if (history.accepted.has(open.turnId) && !history.terminals.has(open.turnId)) continue; // reported above
    problemsOf(open.part).push(`${open.at}: item ${itemId} of turn ${open.turnId}, started here, never gets an item/completed (invariant 2)`);
  }
  reportSteeringUnended(history.steering, history.terminals, (p) => problemsOf(1).push(p));
}
