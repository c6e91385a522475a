/**
 * The records of the session's storage layout (docs/sessions-that-survive.md, "How a session is
 * kept in storage"): a turn's record is its kept form with each long string of its items taken out
 * into pieces of {@link PIECE_CHARS} characters, so that a write of a growing text rewrites its last
 * piece only. A record is rebuilt only when its turn changed (items are compared by identity: a
 * changed item is a new object), and an item is split once.
 */
import type { Item } from "@muse-code/protocol";
import type { KeptTurn } from "./sessionStorage.js";

/** The characters of one piece of a long string. @unit UTF-16 code units */
export const PIECE_CHARS = 16_384;
/** A string field longer than this is kept in pieces, not in its turn's record. @unit UTF-16 code units */
export const INLINE_CHARS = 1_024;
/** The item fields that grow: kept in pieces when long. */
const LONG_FIELDS = ["text", "visibleOutput"] as const;
/** The field of a recorded item that gives each long string's length. */
export const PIECES_FIELD = "$pieces";

/** One long string of a record: which item and field, and its value. */
export interface LongString {
  /** `itemId`, a NUL, and the field: unique within the turn. */
  readonly id: string;
  readonly itemId: string;
  readonly field: string;
  readonly value: string;
}

/** A turn's record: its text (what is stored under its key), its long strings, and its size in storage. */
export interface TurnRecord {
  readonly turn: KeptTurn;
  readonly text: string;
  readonly longs: readonly LongString[];
  /** The record's text and its long strings' characters. @unit UTF-16 code units */
  readonly size: number;
}

interface SplitItem {
  readonly recorded: Record<string, unknown>;
  readonly longs: readonly LongString[];
}

const splits = new WeakMap<Item, SplitItem>();

/** The item without its long strings (their lengths under {@link PIECES_FIELD}), and those strings. */
function split(item: Item): SplitItem {
  const known = splits.get(item);
  if (known !== undefined) return known;
  const fields = item as unknown as Record<string, unknown>;
  let recorded: Record<string, unknown> = fields;
  const longs: LongString[] = [];
  for (const field of LONG_FIELDS) {
    const value = fields[field];
    if (typeof value !== "string" || value.length <= INLINE_CHARS) continue;
    if (recorded === fields) recorded = { ...fields, [PIECES_FIELD]: {} };
    delete recorded[field];
    (recorded[PIECES_FIELD] as Record<string, number>)[field] = value.length;
    longs.push({ id: `${item.itemId}\u0000${field}`, itemId: item.itemId, field, value });
  }
  const one = { recorded, longs };
  splits.set(item, one);
  return one;
}

/**
 * The record of `turn`; `previous` is returned as it is when the turn did not change since.
 *
 * @example
 * ```ts
 * const record = turnRecord(turn, kept.get(turn.turnId)); // record.text is stored, record.longs in pieces
 * ```
 */
export function turnRecord(turn: KeptTurn, previous?: TurnRecord): TurnRecord {
  if (previous !== undefined && sameTurn(previous.turn, turn)) return previous;
  const items: Array<Record<string, unknown>> = [];
  const longs: LongString[] = [];
  let size = 0;
  for (const item of turn.items) {
    const one = split(item);
    items.push(one.recorded);
    for (const long of one.longs) {
      longs.push(long);
      size += long.value.length;
    }
  }
  const text = JSON.stringify({ ...turn, items });
  return { turn, text, longs, size: size + text.length };
}

/** Same kept content: the same items (by identity) and the same fields. */
function sameTurn(a: KeptTurn, b: KeptTurn): boolean {
  if (a.items.length !== b.items.length || !a.items.every((item, i) => item === b.items[i])) return false;
  const fields = (turn: KeptTurn) => [
    turn.turnId,
    turn.phase,
    turn.droppedItems,
    turn.stopRequested,
    turn.cancelCommandId,
    turn.unknownReason,
    turn.input,
    turn.terminal,
    turn.approvals,
  ];
  const x = fields(a);
  const y = fields(b);
  for (let i = 0; i < x.length; i++) {
    if (x[i] === y[i]) continue;
    if (typeof x[i] !== "object" || JSON.stringify(x[i]) !== JSON.stringify(y[i])) return false;
  }
  return true;
}

/**
 * How many pieces a string of `length` characters (@unit UTF-16 code units) is kept in.
 *
 * @example
 * ```ts
 * pieceCount(40_000); // 3 (of PIECE_CHARS = 16 384)
 * ```
 */
export const pieceCount = (length: number): number => Math.ceil(length / PIECE_CHARS);

/**
 * A stored record's items with their long strings put back from their pieces (`piece(itemId, field, n)`),
 * or undefined for an item whose pieces are missing or do not add up to the length its record gives (a torn write).
 *
 * @example
 * ```ts
 * const { items, torn } = joinedItems(record.items, (itemId, field, n) => pieces.get(`${itemId}/${field}/${n}`) ?? null);
 * ```
 */
export function joinedItems(items: unknown, piece: (itemId: string, field: string, n: number) => string | null): { items: unknown[]; torn: boolean } {
  if (!Array.isArray(items)) return { items: [], torn: false };
  const joined: unknown[] = [];
  let torn = false;
  for (const raw of items as unknown[]) {
    if (typeof raw !== "object" || raw === null || !(PIECES_FIELD in raw)) {
      joined.push(raw);
      continue;
    }
    const { [PIECES_FIELD]: lengths, ...item } = raw as Record<string, unknown>;
    const itemId = item["itemId"];
    let whole = typeof lengths === "object" && lengths !== null && typeof itemId === "string";
    for (const [field, length] of whole ? Object.entries(lengths as Record<string, unknown>) : []) {
      if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) {
        whole = false;
        break;
      }
      const parts: string[] = [];
      for (let n = 0; n < pieceCount(length); n++) parts.push(piece(itemId as string, field, n) ?? "");
      const value = parts.join("");
      if (value.length !== length) {
        whole = false;
        break;
      }
      item[field] = value;
    }
    if (whole) joined.push(item);
    else torn = true;
  }
  return { items: joined, torn };
}
