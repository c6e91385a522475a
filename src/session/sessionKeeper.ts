/**
 * SessionKeeper: the session in its {@link KeyValueStorage}, over several keys (the layout is in
 * docs/sessions-that-survive.md, "How a session is kept in storage"): an index under the session's
 * key, one record per turn, and the long strings of its items in pieces. A write stores only what
 * changed since the last one, bounded in characters; a storage that throws is left for memory, where
 * the whole session is written at once, and `onFailure` hears it once.
 */
import { PIECE_CHARS, joinedItems, pieceCount, turnRecord, type TurnRecord } from "./keptRecords.js";
import type { KeptTreeTurn } from "./sessionTree.js";
import { SessionStorageError, storageErrorKind } from "./sessionStorageError.js";
import { memoryStorage, parseKept, type KeptSession, type KeptTurn, type KeyValueStorage } from "./sessionStorage.js";

/** The index's `layout`: a document without it is the whole session under one key (read, then replaced). */
const LAYOUT = 2;

/** What a turn's keys hold in the storage: its record's text and, per long string, its value and piece count. */
interface StoredTurn {
  text: string | undefined;
  readonly pieces: Map<string, { value: string; count: number; itemId: string; field: string }>;
}

/** What one write keeps: the index and the turns' records, each either whole or without its items. */
interface Plan {
  index: string;
  records: TurnRecord[];
  /** Records kept without their items (and with no cursor in the index): their pieces are not written. */
  bare: boolean;
}

/**
 * The session kept in a {@link KeyValueStorage}: read once, written by what changed, at most
 * `maxBytes` UTF-16 code units over all its keys (ended turns are dropped first; if the unended ones
 * alone do not fit, they are kept without items and the cursor is left out, so a reload replays the
 * session whole rather than resuming on top of a cut copy).
 *
 * @example
 * ```ts
 * const keeper = new SessionKeeper(localStorage, "msp:chat", 4_000_000, (error) => console.warn(error.message));
 * const kept = keeper.read();
 * keeper.write({ ...kept, cursor });
 * ```
 */
export class SessionKeeper {
  readonly #key: string;
  readonly #maxBytes: number;
  readonly #onFailure: (error: SessionStorageError) => void;
  #storage: KeyValueStorage;
  #persistent = true;
  /** The records last built, by turn: a turn that did not change is not built again. */
  #records = new Map<string, TurnRecord>();
  /** What the storage holds, by turn, and its index. */
  #stored = new Map<string, StoredTurn>();
  #storedIndex: string | undefined;

  constructor(storage: KeyValueStorage, key: string, maxBytes: number, onFailure: (error: SessionStorageError) => void) {
    this.#storage = storage;
    this.#key = key;
    this.#maxBytes = maxBytes;
    this.#onFailure = onFailure;
  }

  /** False once the storage failed and the session went on in memory. */
  get persistent(): boolean {
    return this.#persistent;
  }

  /** What was kept, checked shape by shape: anything unexpected is dropped, not trusted. */
  read(): KeptSession {
    try {
      const text = this.#storage.getItem(this.#key);
      if (text === null) return { turns: [] };
      const raw = JSON.parse(text) as unknown;
      if (typeof raw !== "object" || raw === null || (raw as Record<string, unknown>)["layout"] !== LAYOUT) return parseKept(raw);
      return this.#readLayout(raw as Record<string, unknown>, text);
    } catch (error) {
      this.#degrade(error, "read");
      return { turns: [] };
    }
  }

  #readLayout(index: Record<string, unknown>, indexText: string): KeptSession {
    const entries = Array.isArray(index["turns"]) ? (index["turns"] as unknown[]) : [];
    const turns: unknown[] = [];
    let torn = false;
    for (const entry of entries) {
      const turnId = (entry as { turnId?: unknown } | null)?.turnId;
      if (typeof turnId !== "string") continue;
      const text = this.#storage.getItem(this.#turnKey(turnId));
      if (text === null) {
        torn = true;
        continue;
      }
      if (text.length !== (entry as { length?: unknown }).length) torn = true;
      const record = parseRecord(text);
      if (record === undefined) {
        torn = true;
        continue;
      }
      const stored: StoredTurn = { text, pieces: new Map() };
      const joined = joinedItems(record["items"], (itemId, field, n) => {
        const piece = this.#storage.getItem(this.#pieceKey(turnId, itemId, field, n));
        const id = `${itemId}\u0000${field}`;
        const held = stored.pieces.get(id) ?? { value: "", count: 0, itemId, field };
        held.value += piece ?? "";
        held.count = n + 1;
        stored.pieces.set(id, held);
        return piece;
      });
      torn ||= joined.torn;
      turns.push({ ...record, items: joined.items });
      this.#stored.set(turnId, stored);
    }
    this.#storedIndex = indexText;
    const kept = parseKept({ ...index, turns });
    // A torn write: what is kept may be ahead of or behind the cursor, so the resume replays the session whole.
    if (torn) {
      delete kept.cursor;
      delete kept.childCursors;
    }
    return kept;
  }

  /** Keep `value` (bounded, see the class): only the keys whose content changed are written. */
  write(value: KeptSession): void {
    const plan = this.#plan(value);
    try {
      this.#store(plan);
    } catch (error) {
      this.#degrade(error, "write");
      this.#store(plan);
    }
  }

  /** Forget the session: every key it wrote. */
  clear(): void {
    try {
      for (const [turnId, stored] of this.#stored) this.#removeTurn(turnId, stored);
      this.#stored.clear();
      this.#storage.removeItem(this.#key);
      this.#storedIndex = undefined;
    } catch (error) {
      this.#degrade(error, "remove");
    }
  }

  /** The records and index `value` is kept as, within the bound (see the class). */
  #plan(value: KeptSession): Plan {
    const records = value.turns.map((turn) => turnRecord(turn, this.#records.get(turn.turnId)));
    this.#records = new Map(records.map((record) => [record.turn.turnId, record]));
    const kept = [...records];
    for (;;) {
      const index = this.#index(value, kept, true);
      if (index.length + sumOf(kept) <= this.#maxBytes) return { index, records: kept, bare: false };
      const oldestEnded = kept.findIndex(({ turn }) => turn.phase === "ended" || turn.phase === "unknown");
      if (oldestEnded === -1) break;
      kept.splice(oldestEnded, 1);
    }
    // What is unended does not fit: keep its ids and Stops only, and no cursor, so a reload replays the whole session.
    const bare = kept.map(({ turn }) => turnRecord({ ...turn, items: [], droppedItems: 0 }));
    const index = this.#index(value, bare, false);
    if (index.length + sumOf(bare) <= this.#maxBytes) return { index, records: bare, bare: true };
    const none: KeptSession = value.sessionId === undefined ? { turns: [] } : { sessionId: value.sessionId, turns: [] };
    return { index: this.#index(none, [], false), records: [], bare: true };
  }

  /** The index of `records`; `whole` keeps the cursor and the tree below the kept turns. */
  #index(value: KeptSession, records: readonly TurnRecord[], whole: boolean): string {
    const index: Record<string, unknown> = { layout: LAYOUT, turns: records.map(({ turn, text }) => ({ turnId: turn.turnId, length: text.length })) };
    if (value.sessionId !== undefined) index["sessionId"] = value.sessionId;
    if (whole && value.cursor !== undefined) index["cursor"] = value.cursor;
    if (whole && value.childCursors !== undefined) index["childCursors"] = value.childCursors;
    if (whole && value.tree !== undefined) index["tree"] = treeBelow(value.tree, records);
    if (value.model !== undefined) index["model"] = value.model;
    return JSON.stringify(index);
  }

  /** Pieces first, then records, then the index; keys no longer named go last. */
  #store(plan: Plan): void {
    const removals: Array<() => void> = [];
    const keptIds = new Set<string>();
    for (const record of plan.records) {
      const turnId = record.turn.turnId;
      keptIds.add(turnId);
      let stored = this.#stored.get(turnId);
      if (stored === undefined) this.#stored.set(turnId, (stored = { text: undefined, pieces: new Map() }));
      const named = new Set<string>();
      for (const long of plan.bare ? [] : record.longs) {
        named.add(long.id);
        const held = stored.pieces.get(long.id);
        if (held?.value === long.value) continue;
        const count = pieceCount(long.value.length);
        const appended = held !== undefined && long.value.length >= held.value.length && long.value.startsWith(held.value);
        for (let n = appended ? Math.floor(held.value.length / PIECE_CHARS) : 0; n < count; n++) {
          this.#storage.setItem(this.#pieceKey(turnId, long.itemId, long.field, n), long.value.slice(n * PIECE_CHARS, (n + 1) * PIECE_CHARS));
        }
        const surplus = held?.count ?? 0;
        if (surplus > count) removals.push(() => this.#removePieces(turnId, long.itemId, long.field, count, surplus));
        stored.pieces.set(long.id, { value: long.value, count, itemId: long.itemId, field: long.field });
      }
      for (const [id, held] of stored.pieces) {
        if (named.has(id)) continue;
        stored.pieces.delete(id);
        removals.push(() => this.#removePieces(turnId, held.itemId, held.field, 0, held.count));
      }
      if (stored.text !== record.text) {
        this.#storage.setItem(this.#turnKey(turnId), record.text);
        stored.text = record.text;
      }
    }
    if (this.#storedIndex !== plan.index) {
      this.#storage.setItem(this.#key, plan.index);
      this.#storedIndex = plan.index;
    }
    for (const [turnId, stored] of this.#stored) {
      if (keptIds.has(turnId)) continue;
      this.#stored.delete(turnId);
      removals.push(() => this.#removeTurn(turnId, stored));
    }
    for (const remove of removals) remove();
  }

  #removeTurn(turnId: string, stored: StoredTurn): void {
    for (const held of stored.pieces.values()) this.#removePieces(turnId, held.itemId, held.field, 0, held.count);
    if (stored.text !== undefined) this.#storage.removeItem(this.#turnKey(turnId));
  }

  #removePieces(turnId: string, itemId: string, field: string, from: number, to: number): void {
    for (let n = from; n < to; n++) this.#storage.removeItem(this.#pieceKey(turnId, itemId, field, n));
  }

  #turnKey(turnId: string): string {
    return `${this.#key}:turn:${turnId}`;
  }

  #pieceKey(turnId: string, itemId: string, field: string, n: number): string {
    return `${this.#key}:text:${turnId}:${itemId}:${field}:${n}`;
  }

  /** Leave the storage for memory: what is stored there starts empty, so the next write writes the whole session. */
  #degrade(error: unknown, operation: "read" | "write" | "remove"): void {
    this.#stored = new Map();
    this.#storedIndex = undefined;
    if (!this.#persistent) return;
    this.#persistent = false;
    this.#storage = memoryStorage();
    this.#onFailure(new SessionStorageError(storageErrorKind(error), operation, error));
  }
}

/** A stored turn record, or undefined for one that is not JSON of an object (edited by hand, or cut). */
function parseRecord(text: string): Record<string, unknown> | undefined {
  try {
    const record: unknown = JSON.parse(text);
    return typeof record === "object" && record !== null && !Array.isArray(record) ? (record as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const sumOf = (records: readonly TurnRecord[]) => records.reduce((sum, record) => sum + record.size, 0);

/** The kept child turns still below a kept turn (each is after its parent, so one pass finds them). */
function treeBelow(tree: readonly KeptTreeTurn[], records: readonly TurnRecord[]): KeptTreeTurn[] {
  const below = new Set(records.map(({ turn }) => turn.turnId));
  return tree.filter((turn) => below.has(turn.parent.turnId) && below.add(turn.turnId) !== undefined);
}

export type { KeptSession, KeptTurn };
