/**
 * What this tab remembers across a reload, in `sessionStorage` (per tab, gone when the tab
 * closes): the token, the session, the last `viewCursor` the page saw in it, and the turns it
 * showed up to that cursor. The cursor and the turns are written together, so they always
 * describe the same moment. Bounded: a few turns, and each item's text cut to a size, so the
 * storage quota is never the problem.
 *
 * A reload resumes the session after that cursor (MSP 2.0, docs/protocol.md "Streaming
 * deltas"). The host replays what came after it as it was sent: `item/delta` appends and
 * `item/updated` patches, which apply to the items as they were at the cursor. Nothing sends an
 * item whole again later, so a remembered copy that is cut would stay wrong, and an append to it
 * would lose the middle of the text. Hence:
 * - An item still in progress at the cursor comes back whole in the resume's answer (`items`),
 *   which the SDK puts in `client.items` before the replay: the page takes that copy in place of
 *   what it remembered (main.ts), and never appends to a cut copy (turnBook.ts renders the
 *   delta's whole item instead).
 * - An item finished by the cursor is not sent again on that resume. The page shows what it
 *   remembered: the whole text up to {@link MAX_FIELD_CHARS}, and beyond that the start of it,
 *   listed in the turn's `cut` and shown marked as cut, never as if it were whole. (A resume
 *   without `afterCursor` would bring every item back whole, but it replays the whole session,
 *   every delta of every turn, on every reload; a text over the size is rare, and the page says
 *   where it shows less.)
 */
import { isItem, isTurnCompleted, type Item, type TurnCompletedParams } from "@muse-code/sdk";
import type { TurnBook, TurnEntry, TurnPhase } from "./turnBook.js";

/** v2: MSP 2.0 items, and the ids of the ones kept cut (v1 cut them silently, counting on a later whole item/updated). */
const KEY = "muse-demo:v2";
/** Turns kept across a reload: every unfinished one, and the latest ended ones up to this many in all. */
export const REMEMBERED_TURNS = 20;
/** Longest text kept per item field; a longer one is kept cut, and its item id listed in `cut`. @unit UTF-16 code units */
export const MAX_FIELD_CHARS = 32 * 1024;

/** A remembered turn: what the page showed of it. */
export interface RememberedTurn {
  turnId: string;
  prompt?: string;
  phase: TurnPhase;
  items: Item[];
  /** The ids of `items` whose text (`text`, or a tool call's `visibleOutput`) is only its first {@link MAX_FIELD_CHARS} code units. */
  cut: string[];
  terminal?: TurnCompletedParams;
  stopRequested: boolean;
}

/** Everything remembered. */
export interface Remembered {
  token?: string;
  sessionId?: string;
  /** The last viewCursor seen in the session, at the moment `turns` were written. */
  cursor?: string;
  turns: RememberedTurn[];
}

/** This tab's memory of the session, read once at load and written whole on every change. */
export class SessionMemory {
  readonly #storage: Storage | undefined;
  #value: Remembered;

  /** Reads what this tab remembered; a storage that is missing, full or holds junk means nothing is remembered. */
  constructor(storage: Storage | undefined) {
    this.#storage = storage;
    this.#value = { turns: [] };
    try {
      const text = storage?.getItem(KEY);
      if (text != null) this.#value = parse(text);
    } catch {
      this.#value = { turns: [] };
    }
  }

  get value(): Readonly<Remembered> {
    return this.#value;
  }

  /** Remember the token (a new one replaces the old: the page was opened from a new host's URL). */
  rememberToken(token: string): void {
    if (this.#value.token !== token) this.#value = { token, turns: [] };
    this.#write();
  }

  /** Remember the session and where the page is in it, with the turns it shows. */
  rememberSession(sessionId: string, cursor: string | undefined, book: TurnBook): void {
    const turns = book.entries().map(rememberTurn);
    const next: Remembered = { turns };
    if (this.#value.token !== undefined) next.token = this.#value.token;
    next.sessionId = sessionId;
    if (cursor !== undefined) next.cursor = cursor;
    this.#value = next;
    this.#write();
  }

  /** Forget the session (the host no longer knows it), keeping the token. */
  forgetSession(): void {
    this.#value = this.#value.token === undefined ? { turns: [] } : { token: this.#value.token, turns: [] };
    this.#write();
  }

  #write(): void {
    try {
      this.#storage?.setItem(KEY, JSON.stringify(this.#value));
    } catch {
      // Storage full or disabled: a reload then starts a new session; nothing else depends on it.
    }
  }
}

function rememberTurn(entry: TurnEntry): RememberedTurn {
  const items: Item[] = [];
  const cut: string[] = [];
  for (const item of entry.items.values()) {
    const kept = cutToSize(item);
    items.push(kept);
    if (kept !== item || entry.cut.has(item.itemId)) cut.push(item.itemId);
  }
  const turn: RememberedTurn = { turnId: entry.turnId, phase: entry.phase, items, cut, stopRequested: entry.stopRequested };
  if (entry.prompt !== undefined) turn.prompt = entry.prompt.slice(0, MAX_FIELD_CHARS);
  if (entry.terminal !== undefined) turn.terminal = entry.terminal;
  return turn;
}

/** The item with its text cut to MAX_FIELD_CHARS (the same object when it fits). */
function cutToSize(item: Item): Item {
  if (item.kind === "toolCall") return item.visibleOutput.length > MAX_FIELD_CHARS ? { ...item, visibleOutput: startOf(item.visibleOutput) } : item;
  return item.text.length > MAX_FIELD_CHARS ? { ...item, text: startOf(item.text) } : item;
}

/** The first MAX_FIELD_CHARS code units of `text`, less a high surrogate left without its pair at the end. */
function startOf(text: string): string {
  const start = text.slice(0, MAX_FIELD_CHARS);
  return /[\ud800-\udbff]$/.test(start) ? start.slice(0, -1) : start;
}

const PHASES: readonly string[] = ["starting", "queued", "running", "ended"];

/** The remembered value, checked shape by shape (items and terminals with the SDK's own guards): anything unexpected is dropped, not trusted. */
function parse(text: string): Remembered {
  const raw: unknown = JSON.parse(text);
  if (typeof raw !== "object" || raw === null) return { turns: [] };
  const { token, sessionId, cursor, turns } = raw as Record<string, unknown>;
  const value: Remembered = { turns: [] };
  if (typeof token === "string" && token !== "") value.token = token;
  if (typeof sessionId === "string" && sessionId !== "") value.sessionId = sessionId;
  if (typeof cursor === "string" && cursor !== "") value.cursor = cursor;
  if (Array.isArray(turns)) {
    for (const turn of turns.slice(-REMEMBERED_TURNS * 2)) {
      if (typeof turn !== "object" || turn === null) continue;
      const t = turn as Record<string, unknown>;
      if (typeof t["turnId"] !== "string" || typeof t["phase"] !== "string" || !PHASES.includes(t["phase"]) || !Array.isArray(t["items"])) continue;
      const items = (t["items"] as unknown[]).filter(isItem);
      const cut = Array.isArray(t["cut"]) ? t["cut"].filter((id): id is string => typeof id === "string" && items.some((item) => item.itemId === id)) : [];
      const remembered: RememberedTurn = { turnId: t["turnId"], phase: t["phase"] as TurnPhase, items, cut, stopRequested: t["stopRequested"] === true };
      if (typeof t["prompt"] === "string") remembered.prompt = t["prompt"];
      if (isTurnCompleted(t["terminal"])) remembered.terminal = t["terminal"];
      value.turns.push(remembered);
    }
  }
  return value;
}
