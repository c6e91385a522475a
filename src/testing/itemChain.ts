/**
 * checkTranscript's item chains (MSP 2.0, invariants A and B): each item is folded with
 * `foldItem`, the one folding rule, from its `item/started` (or the `items` of a `session/resume`
 * answer), its `item/delta`s and its `item/updated` patches; each link is checked as it comes
 * (A), and the whole item of its `item/completed` is compared with the fold (B).
 */
import { foldItem, isItem, type Item } from "@muse-code/protocol";
import type { SessionHistory } from "./transcriptHistory.js";

/** The fields an `item/completed` sets for itself: they may differ from the fold (invariant B). */
const SET_BY_COMPLETION: ReadonlySet<string> = new Set([
  "revision",
  "recordedAt",
  "status",
  "interrupted",
  "failureReason",
  "error",
  "truncated",
  "carriedOver",
]);

/** How much of a text a problem quotes. @unit UTF-16 code units */
const EXCERPT = 24;

/** The field of an item that grows by appends: a tool call's `visibleOutput`, any other item's `text`. */
function growingField(item: Item): "text" | "visibleOutput" {
  return item.kind === "toolCall" ? "visibleOutput" : "text";
}

/** A JSON text of `value` whose object keys are sorted, to compare values whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/** Up to {@link EXCERPT} code units of `text` from `from`, quoted. */
function excerpt(text: string, from: number): string {
  const part = text.slice(from, from + EXCERPT);
  return JSON.stringify(from + EXCERPT < text.length ? `${part}…` : part);
}

/** Where `a` and `b` first differ (0-based), or the shorter one's length. */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Whether the transcript may lack the item a delta or patch names: it is marked as beginning
 * mid-session and joined the session after the item started. That is when it does not hold the
 * session from its start (see `SessionHistory.sessions`) and did not see the item's turn begin (a
 * turn begun in the transcript has all its items start in it). Unmarked, every item starts first.
 * A transcript with gaps may leave out any line, an item's `item/started` too.
 */
function joinedAfter(sessionId: unknown, turnId: string, history: SessionHistory): boolean {
  if (history.gaps) return true;
  if (!history.midSession) return false;
  return history.sessions.get(String(sessionId)) !== true && !history.turnsBegun.has(turnId) && !history.accepted.has(turnId);
}

/**
 * The items in progress listed by a `session/resume` answer: whole items, the base the replay's
 * deltas and patches fold onto. Each is held (unless the transcript holds it at a later
 * revision, or saw it complete) and counts as open until its `item/completed`; the session's
 * items are then all known. One the transcript holds at the same revision must equal its fold
 * (invariant C: a client that resumes holding its items ends with what a live one has).
 */
export function seedItems(sessionId: string, items: unknown, here: string, part: number, history: SessionHistory, say: (p: string) => void): void {
  if (!Array.isArray(items)) return;
  for (const [i, item] of items.entries()) {
    if (!isItem(item)) {
      say(`session/resume: items[${i}] is not a whole item`);
      continue;
    }
    if (history.completedItems.has(item.itemId)) continue;
    const chain = history.chains.get(item.itemId);
    const held = chain?.state === "held" ? chain.item : undefined;
    // Invariant C, where it can be seen: at the revision the transcript holds, the host's item is the client's.
    if (held !== undefined && held.revision === item.revision && canonical(held) !== canonical(item)) {
      say(`session/resume lists item ${item.itemId} at revision ${item.revision} unlike the fold of its notifications up to ${chain?.at ?? "?"} (invariant C)`);
    }
    const folded = foldItem(held, "item/started", { item });
    if (typeof folded === "object") history.chains.set(item.itemId, { state: "held", item: folded, at: `${here} (session/resume)` });
    if (!history.openItems.has(item.itemId)) history.openItems.set(item.itemId, { turnId: item.turnId, at: here, part });
  }
  history.sessions.set(sessionId, true);
}

/**
 * Folds one item notification (well-formed) into its chain and checks it: invariant A for an
 * `item/delta` or `item/updated` (it follows the item's `item/started`, precedes its
 * `item/completed`, and has `revision` one more than the item's previous notification), invariant
 * B for an `item/completed`. Returns the item as it stands after the notification, whole when the
 * chain holds it, else what the notification says of it (for the approval gate).
 */
export function foldIntoChain(
  method: string,
  params: Record<string, unknown>,
  here: string,
  history: SessionHistory,
  say: (p: string) => void,
): Record<string, unknown> {
  if (method === "item/started" || method === "item/completed") {
    const item = params["item"] as Item;
    const chain = history.chains.get(item.itemId);
    const completedAt = history.completedItems.get(item.itemId);
    if (method === "item/completed" && completedAt === undefined && chain?.state === "held" && chain.item !== undefined) {
      checkCompletion(chain.item, chain.at, item, say);
    }
    if (
      method === "item/completed" &&
      completedAt === undefined &&
      chain?.state === "unknown" &&
      chain.revision !== undefined &&
      item.revision <= chain.revision
    ) {
      say(`item/completed of item ${item.itemId} has revision ${item.revision}, not above revision ${chain.revision} at ${chain.at} (invariant B)`);
    }
    if (method === "item/completed") checkInterrupted(item, say);
    // An item of a session or turn the transcript saw from its start starts in it (invariant A).
    if (method === "item/completed" && chain === undefined && completedAt === undefined && !joinedAfter(params["sessionId"], item.turnId, history)) {
      say(`item/completed for item ${item.itemId} before any item/started of it (invariant A)`);
    }
    if (completedAt === undefined) history.chains.set(item.itemId, { state: "held", item, at: here });
    return item as unknown as Record<string, unknown>;
  }
  const delta = method === "item/delta";
  const change = (delta ? params : params["item"]) as Record<string, unknown> & { itemId: string; turnId: string; revision: number };
  const partial = delta
    ? {
        itemId: change.itemId,
        turnId: change.turnId,
        kind: params["field"] === "visibleOutput" ? "toolCall" : undefined,
        [String(params["field"])]: params["append"],
      }
    : change;
  const itemId = change.itemId;
  if (delta && params["append"] === "") say(`item/delta of item ${itemId} appends nothing: append must be a non-empty string (invariant A)`);
  const completedAt = history.completedItems.get(itemId);
  if (completedAt !== undefined) {
    say(`${method} for item ${itemId} after its item/completed at ${completedAt} (invariant A)`);
    return partial;
  }
  const chain = history.chains.get(itemId);
  if (chain === undefined) {
    if (joinedAfter(params["sessionId"], change.turnId, history)) {
      history.chains.set(itemId, { state: "unknown", at: here, revision: change.revision });
    } else {
      say(`${method} for item ${itemId} before any item/started of it (invariant A)`);
      history.chains.set(itemId, { state: "broken", at: here });
    }
    return partial;
  }
  if (chain.state !== "held" || chain.item === undefined) {
    // Unfolded, the revisions still rise: a link at or below the last one seen is a repeat or a step back.
    const last = chain.revision;
    if (chain.state === "unknown" && last !== undefined && typeof change.revision === "number") {
      if (change.revision <= last) {
        const how = change.revision === last ? "a repeat" : "a step back";
        say(`${method} of item ${itemId} has revision ${change.revision}, not above revision ${last} at ${chain.at}: ${how} (invariant A)`);
        history.chains.set(itemId, { state: "broken", at: here });
        return partial;
      }
      chain.revision = change.revision;
    }
    chain.at = here;
    return partial;
  }
  const held = chain.item;
  const next = foldItem(held, method, params);
  if (next === undefined) {
    const how = change.revision === held.revision ? "a repeat" : "a step back";
    say(`${method} of item ${itemId} has revision ${change.revision}, not above revision ${held.revision} at ${chain.at}: ${how} (invariant A)`);
    return held as unknown as Record<string, unknown>;
  }
  if (typeof next === "string") {
    // With gaps, a revision gap may be links left out: the item is no longer known, not broken.
    if (history.gaps && next.endsWith(": a gap")) {
      history.chains.set(itemId, { state: "unknown", at: here, revision: change.revision });
      return partial;
    }
    const where = next.endsWith(": a gap") ? `; revision ${held.revision} was at ${chain.at}` : "";
    say(`${next}${where} (invariant A)`);
    history.chains.set(itemId, { state: "broken", at: here });
    return partial;
  }
  history.chains.set(itemId, { state: "held", item: next, at: here });
  return next as unknown as Record<string, unknown>;
}

/**
 * A cut-off text (docs/protocol.md, Items): a `message` or `reasoning` that completes
 * `"cancelled"` was cut short by a Stop and must say `interrupted: true`; one that says
 * `interrupted: true` was cut short and must not complete `"completed"`.
 */
function checkInterrupted(completed: Item, say: (p: string) => void): void {
  if (completed.kind !== "message" && completed.kind !== "reasoning") return;
  const interrupted = (completed as unknown as Record<string, unknown>)["interrupted"];
  // The user's steering input (invariant S) is never cut: discarded or carried whole, so it never says interrupted.
  if (completed.kind === "message" && completed.steerId !== undefined && completed.author === "user") {
    if (interrupted === true)
      say(`item/completed of steering message ${completed.itemId} says interrupted: true: steering input is never cut, it ends whole (invariant S)`);
    return;
  }
  if (completed.status === "cancelled" && interrupted !== true) {
    say(`item/completed of ${completed.kind} ${completed.itemId} is "cancelled" without interrupted: true: a text cut by a Stop must say so (cut-off text)`);
  }
  if (completed.status === "completed" && interrupted === true) {
    say(
      `item/completed of ${completed.kind} ${completed.itemId} says interrupted: true with status "completed": a cut-off text completes "cancelled" (cut-off text)`,
    );
  }
}

/**
 * Invariant B: the whole item of an `item/completed` equals `folded` (the item folded from its
 * notifications up to `foldedAt`) except where the completion itself changes it: its `revision`
 * is above the fold's; `recordedAt`, `status`, `interrupted`, `failureReason`, `error` and
 * `truncated` are the completion's to set; its growing field (`text`, or a tool call's
 * `visibleOutput`) extends the fold's (a completion may carry what was not streamed, never rewrite
 * what was; a trailing U+FFFD of the folded output, a character the host had only part of, may be
 * completed); `approval` may go from `"pending"` to `"cancelled"` (a question withdrawn); every
 * other field is equal.
 */
function checkCompletion(folded: Item, foldedAt: string, completed: Item, say: (p: string) => void): void {
  const id = completed.itemId;
  const upTo = `the fold of its notifications up to ${foldedAt}`;
  if (completed.revision <= folded.revision) {
    say(`item/completed of item ${id} has revision ${completed.revision}, not above revision ${folded.revision} at ${foldedAt} (invariant B)`);
  }
  const before = folded as unknown as Record<string, unknown>;
  const after = completed as unknown as Record<string, unknown>;
  const field = growingField(folded);
  const streamed = before[field];
  const final = after[field];
  if (typeof streamed === "string" && typeof final === "string") {
    const base = field === "visibleOutput" ? streamed.replace(/\uFFFD+$/, "") : streamed;
    if (!final.startsWith(base)) {
      const at = firstDifference(final, base);
      say(
        `item/completed of item ${id} does not extend its streamed ${field}: from character ${at + 1} it has ${excerpt(final, at)}, where ${upTo} has ${excerpt(base, at)} (invariant B)`,
      );
    }
  }
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (key === field || SET_BY_COMPLETION.has(key)) continue;
    if (key === "approval" && before[key] === "pending" && after[key] === "cancelled") continue;
    if (canonical(before[key]) === canonical(after[key])) continue;
    say(`item/completed of item ${id} has ${key} ${canonical(after[key])}, where ${upTo} has ${canonical(before[key])} (invariant B)`);
  }
}
