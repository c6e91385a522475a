/**
 * ItemLedger: every item of every recent turn at its latest revision, so a UI can render a
 * turn's history, and an item left open when its turn ended is shown honestly as cancelled.
 * Users see it through its read-only view, {@link TurnItems} (`client.items`).
 */
import { BoundedMap } from "../internal/boundedMap.js";
import type { Item } from "../protocol/index.js";

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

/**
 * Options for an {@link ItemLedger}.
 *
 * @example
 * ```ts
 * const ledger = new ItemLedger({ turnCapacity: 100 });
 * ```
 */
export interface ItemLedgerOptions {
  /** How many turns' items to retain, least recently touched evicted first. @defaultValue 1 000 */
  turnCapacity?: number;
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
   * not seen, or forgotten beyond the connection's `itemTurnCapacity`).
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

/**
 * Items by turn, at their latest revision, in first-seen order; serves the {@link TurnItems} view.
 *
 * @example
 * ```ts
 * const ledger = new ItemLedger({ turnCapacity: 100 });
 * ledger.apply(params.item); // the connection does this for every item notification
 * ```
 */
export class ItemLedger implements TurnItems {
  readonly #turns: BoundedMap<string, Map<string, LedgerItem>>;

  constructor(options: ItemLedgerOptions = {}) {
    // A capacity below 1 still keeps the turn being applied, as it always has.
    this.#turns = new BoundedMap({ capacity: Math.max(1, options.turnCapacity ?? 1_000), order: "recency" });
  }

  /**
   * Apply an item notification. A revision older than the one held is ignored; returns whether
   * the ledger changed.
   *
   * @example
   * ```ts
   * ledger.apply(params.item);
   * ```
   */
  apply(item: Item): boolean {
    const items = this.#touch(item.turnId);
    const held = items.get(item.itemId);
    if (held !== undefined && held.revision > item.revision) return false;
    items.set(item.itemId, item);
    return true;
  }

  /**
   * Close a turn's ledger: every item still `inProgress` is shown as `cancelled` with
   * `synthesized: true`. Returns those items so they can be reported.
   *
   * @example
   * ```ts
   * const closed = ledger.closeTurn(turnId); // items the host never completed
   * ```
   */
  closeTurn(turnId: string): LedgerItem[] {
    const items = this.#turns.get(turnId);
    if (items === undefined) return [];
    const synthesized: LedgerItem[] = [];
    for (const [itemId, item] of items) {
      if (item.status !== "inProgress") continue;
      const closed: LedgerItem = { ...item, status: "cancelled", synthesized: true };
      items.set(itemId, closed);
      synthesized.push(closed);
    }
    return synthesized;
  }

  /** See {@link TurnItems.itemsOf}. */
  itemsOf(turnId: string): LedgerItem[] {
    return [...(this.#turns.get(turnId)?.values() ?? [])];
  }

  /** See {@link TurnItems.get}. */
  get(turnId: string, itemId: string): LedgerItem | undefined {
    return this.#turns.get(turnId)?.get(itemId);
  }

  /** Number of turns retained. */
  get turnCount(): number {
    return this.#turns.size;
  }

  #touch(turnId: string): Map<string, LedgerItem> {
    const items = this.#turns.get(turnId) ?? new Map<string, LedgerItem>();
    this.#turns.set(turnId, items); // most recently touched goes last; the least recently touched turn is evicted
    return items;
  }
}
