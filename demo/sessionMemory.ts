/**
 * What this tab remembers across a reload, in `sessionStorage` (per tab, gone when the tab
 * closes): the token, the session, the last `viewCursor` the page saw in it, and the turns it
 * showed up to that cursor. A reload resumes the session from that cursor: the host replays only
 * what came after, and the remembered turns fill in what came before. The cursor and the turns
 * are written together, so they always describe the same moment. Bounded: a few turns, and each
 * item's text cut to a size, so the storage quota is never the problem.
 */
import { isItem, isTurnCompleted, type Item, type TurnCompletedParams } from "@muse-code/sdk";
import type { TurnBook, TurnPhase } from "./turnBook.js";

const KEY = "muse-demo:v1";
/** Turns kept across a reload: every unfinished one, and the latest ended ones up to this many in all. */
export const REMEMBERED_TURNS = 20;
/** Longest text kept per item field (a later item/updated brings the whole text back). @unit UTF-16 code units */
const MAX_FIELD_CHARS = 32 * 1024;

/** A remembered turn: what the page showed of it. */
export interface RememberedTurn {
  turnId: string;
  prompt?: string;
  phase: TurnPhase;
  items: Item[];
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

function rememberTurn(entry: ReturnType<TurnBook["entries"]>[number]): RememberedTurn {
  const turn: RememberedTurn = { turnId: entry.turnId, phase: entry.phase, items: [...entry.items.values()].map(cut), stopRequested: entry.stopRequested };
  if (entry.prompt !== undefined) turn.prompt = entry.prompt.slice(0, MAX_FIELD_CHARS);
  if (entry.terminal !== undefined) turn.terminal = entry.terminal;
  return turn;
}

function cut(item: Item): Item {
  if (item.kind === "toolCall")
    return item.visibleOutput.length > MAX_FIELD_CHARS ? { ...item, visibleOutput: item.visibleOutput.slice(0, MAX_FIELD_CHARS), truncated: true } : item;
  return item.text.length > MAX_FIELD_CHARS ? { ...item, text: item.text.slice(0, MAX_FIELD_CHARS) } : item;
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
      const remembered: RememberedTurn = {
        turnId: t["turnId"],
        phase: t["phase"] as TurnPhase,
        items: (t["items"] as unknown[]).filter(isItem),
        stopRequested: t["stopRequested"] === true,
      };
      if (typeof t["prompt"] === "string") remembered.prompt = t["prompt"];
      if (isTurnCompleted(t["terminal"])) remembered.terminal = t["terminal"];
      value.turns.push(remembered);
    }
  }
  return value;
}
