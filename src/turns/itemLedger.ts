/**
 * ItemLedger: every item of every recent turn at its latest revision, so a UI can render a
 * turn's history, and an item left open when its turn ended is shown honestly as cancelled.
 * Users see it through its read-only view, {@link TurnItems} (`client.items`).
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import { foldItem, type Item } from "@muse-code/protocol";

/**
 * An item as the ledger holds it. `synthesized` marks an item the SDK closed itself.
 *
 * @example
 * ```ts
 * for (const item of client.items.itemsOf(turnId)) {
 *   if (item.synthesized) console.log(`${item.itemId} was left open by the host; shown as cancelled`);
 * }
 * ```
 */
export type LedgerItem = Item & { synthesized?: true };

/** Default number of turns whose items the ledger retains (1 000). */
export const DEFAULT_ITEM_TURN_CAPACITY = 1_000;

/** Default number of items the ledger retains per turn (1 000). */
export const DEFAULT_ITEMS_PER_TURN_CAPACITY = 1_000;

/** Options for an {@link ItemLedger}. */
export interface ItemLedgerOptions {
  /** How many turns' items to retain, least recently touched evicted first. @defaultValue 1 000 */
  turnCapacity?: number;
  /**
   * How many items to retain per turn. Past it, the turn's earliest-finished item (completed,
   * failed or cancelled) is forgotten to make room: like a terminal's scrollback, a long turn
   * shows its latest items. An item in progress is never forgotten; when every retained item is
   * in progress, a new one is not retained and {@link ItemLedger.apply} returns `"full"`.
   * @defaultValue 1 000
   */
  itemsPerTurnCapacity?: number;
}

/**
 * What {@link ItemLedger.apply} did: `item` is the item now held (or, for a whole item the turn
 * had no room for, the item as sent); `problem` says why something was not applied. Neither: the
 * notification was already reflected (an older revision).
 */
export interface ApplyResult {
  item?: LedgerItem;
  problem?: string;
}

/** One turn's items: by id in first-seen order, and the ids of finished ones (`done`) in the order they finished. */
interface TurnLedger {
  items: Map<string, LedgerItem>;
  done: Set<string>;
}

/**
 * The items of a connection's recent turns, read-only: `client.items`. Each item is at its latest
 * revision; a turn's items are in the order they were first seen. Only the connection applies
 * item notifications to it.
 *
 * @example
 * ```ts
 * for (const item of client.items.itemsOf(turnId)) console.log(item.itemId, item.kind, item.status);
 * ```
 */
export interface TurnItems {
  /**
   * A turn's items at their latest revision, in the order they were first seen (empty for a turn
   * not seen, or forgotten beyond the client's `itemTurnCapacity`). A turn with more items than
   * `itemsPerTurnCapacity` shows its latest: its earliest-finished items are forgotten first.
   *
   * @example
   * ```ts
   * const tools = client.items.itemsOf(turnId).filter((i) => i.kind === "toolCall");
   * ```
   */
  itemsOf(turnId: string): LedgerItem[];
  /**
   * One item at its latest revision.
   *
   * @example
   * ```ts
   * const started: { turnId: string; itemId: string }[] = [];
   * client.events.on("item/started", ({ item }) => started.push({ turnId: item.turnId, itemId: item.itemId }));
   * // later: each at its latest revision
   * for (const { turnId, itemId } of started) console.log(itemId, client.items.get(turnId, itemId)?.status);
   * ```
   */
  get(turnId: string, itemId: string): LedgerItem | undefined;
  /** Number of turns retained. */
  readonly turnCount: number;
}

/** Items by turn, at their latest revision, in first-seen order; serves the {@link TurnItems} view. */
export class ItemLedger implements TurnItems {
  readonly #turns: BoundedMap<string, TurnLedger>;
  readonly #itemsPerTurn: number;

  constructor(options: ItemLedgerOptions = {}) {
    // A capacity below 1 still keeps the turn (and the item) being applied, as it always has.
    this.#turns = new BoundedMap({ capacity: Math.max(1, options.turnCapacity ?? DEFAULT_ITEM_TURN_CAPACITY), order: "recency" });
    this.#itemsPerTurn = Math.max(1, options.itemsPerTurnCapacity ?? DEFAULT_ITEMS_PER_TURN_CAPACITY);
  }

  /**
   * Apply an item notification (`item/started`, `item/delta`, `item/updated`, `item/completed`,
   * with well-formed params) by the one folding rule of `foldItem`. A delta or patch with a gap in
   * `revision`, or for an item not held, is not applied: `problem` says why. A new item of a turn
   * at its `itemsPerTurnCapacity` takes the place of the turn's earliest-finished item; when every
   * retained item is in progress it is not retained (`problem` says so, `item` is the item sent).
   */
  apply(method: string, params: Record<string, unknown>): ApplyResult {
    const ids = (method === "item/delta" ? params : params["item"]) as { turnId: string; itemId: string };
    const turn = this.#turns.get(ids.turnId);
    const held = turn?.items.get(ids.itemId);
    const next = foldItem(held, method, params);
    if (typeof next !== "object") return next === undefined ? {} : { problem: next };
    const into = turn ?? { items: new Map<string, LedgerItem>(), done: new Set<string>() };
    this.#turns.set(ids.turnId, into); // most recently touched goes last; the least recently touched turn is evicted
    if (held === undefined && into.items.size >= this.#itemsPerTurn) {
      const earliest = into.done.values().next();
      if (earliest.done === true)
        return { item: next, problem: `${method}: item ${next.itemId} not kept: turn ${next.turnId} has itemsPerTurnCapacity items in progress` };
      into.done.delete(earliest.value);
      into.items.delete(earliest.value);
    }
    this.#set(into, next);
    return { item: next };
  }

  /**
   * Close a turn's ledger: every item still `inProgress` is shown as `cancelled` with
   * `synthesized: true`. Returns those items so they can be reported.
   */
  closeTurn(turnId: string): LedgerItem[] {
    const turn = this.#turns.get(turnId);
    if (turn === undefined) return [];
    const synthesized: LedgerItem[] = [];
    for (const item of turn.items.values()) {
      if (item.status !== "inProgress") continue;
      synthesized.push({ ...item, status: "cancelled", synthesized: true });
    }
    for (const closed of synthesized) this.#set(turn, closed);
    return synthesized;
  }

  /** See {@link TurnItems.itemsOf}. */
  itemsOf(turnId: string): LedgerItem[] {
    return [...(this.#turns.get(turnId)?.items.values() ?? [])];
  }

  /** See {@link TurnItems.get}. */
  get(turnId: string, itemId: string): LedgerItem | undefined {
    return this.#turns.get(turnId)?.items.get(itemId);
  }

  /** Number of turns retained. */
  get turnCount(): number {
    return this.#turns.size;
  }

  /** Forget every turn (the connection closed). */
  clear(): void {
    this.#turns.clear();
  }

  #set(turn: TurnLedger, item: LedgerItem): void {
    turn.items.set(item.itemId, item);
    if (item.status === "inProgress") turn.done.delete(item.itemId);
    else turn.done.add(item.itemId); // a Set keeps the place of an id already there: the order they finished
  }
}
