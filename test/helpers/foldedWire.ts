/**
 * Test helpers that read an MSP 2.0 wire as a client would: items folded from their
 * `item/started`, `item/delta`s, `item/updated` patches and `item/completed` with `foldItem`.
 */
import { foldItem, type Item } from "../../packages/protocol/src/index.js";

/** A parsed wire message: `method` and `params` for a notification. */
type Message = { method?: unknown; id?: unknown; params?: Record<string, unknown> | undefined };

const ITEM_METHODS = new Set(["item/started", "item/delta", "item/updated", "item/completed"]);

/** The itemId an item notification is about. */
export function itemIdOf(m: Message): string | undefined {
  if (typeof m.method !== "string" || !ITEM_METHODS.has(m.method) || m.params === undefined) return undefined;
  return m.method === "item/delta" ? String(m.params["itemId"]) : (m.params["item"] as { itemId?: string } | undefined)?.itemId;
}

/** Every item of `wire`, folded up to and including `upTo` (a message of the wire; all of it when absent). */
export function foldedItems(wire: readonly Message[], upTo?: Message): Map<string, Item> {
  const items = new Map<string, Item>();
  for (const m of wire) {
    const itemId = itemIdOf(m);
    if (itemId !== undefined) {
      const next = foldItem(items.get(itemId), m.method as string, m.params as Record<string, unknown>);
      if (typeof next === "object") items.set(itemId, next);
    }
    if (m === upTo) break;
  }
  return items;
}

/** The item `m` is about, as a client holds it once `m` is read (`undefined` for any other message). */
export function itemAfter(wire: readonly Message[], m: Message): Item | undefined {
  const itemId = itemIdOf(m);
  return itemId === undefined ? undefined : foldedItems(wire, m).get(itemId);
}

/** A tool call's `visibleOutput`, or a message's `text`, once `m` is read ("" for anything else). */
export function grownAfter(wire: readonly Message[], m: Message): string {
  const item = itemAfter(wire, m) as { text?: string; visibleOutput?: string } | undefined;
  return item?.visibleOutput ?? item?.text ?? "";
}

/** A `waitFor` predicate: an append after which the item's text or output matches `pattern`. */
export function grownTo(wire: readonly Message[], pattern: RegExp): (m: Message) => boolean {
  return (m) => m.method === "item/delta" && pattern.test(grownAfter(wire, m));
}
