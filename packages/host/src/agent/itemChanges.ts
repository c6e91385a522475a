/**
 * Item changes as MSP 2.0 sends them: an append becomes an `item/delta` (only the appended text),
 * any other change an `item/updated` patch (only the fields that changed). `item/started` and
 * `item/completed` carry the whole item and need nothing from here.
 */
import type { Item } from "@muse-code/protocol";
import { growingField } from "@muse-code/protocol/itemFold.js";

/** A notification's method and body (the params without `sessionId`, `viewCursor`, `emittedAtMs`). */
export interface ItemChange {
  method: "item/delta" | "item/updated";
  body: Record<string, unknown>;
}

/**
 * The `item/delta` that takes an item to `next` by appending `append` (non-empty) to its growing
 * field: the caller vouches that `next` is the previous item with `append` added, and `revision`
 * and `recordedAt` new.
 */
export function itemDelta(next: Item, append: string): ItemChange {
  return {
    method: "item/delta",
    body: { turnId: next.turnId, itemId: next.itemId, revision: next.revision, field: growingField(next), append, recordedAt: next.recordedAt },
  };
}

/**
 * The `item/updated` patch that takes `previous` to `next`: the item's names, its new `revision`
 * and `recordedAt`, and every other field whose value differs (by `!==`; a field `next` no longer
 * has cannot be patched away and throws). A change that only appends to the growing field is sent
 * with {@link itemDelta} instead.
 */
export function itemPatch(previous: Item, next: Item): ItemChange {
  const before = previous as unknown as Record<string, unknown>;
  const after = next as unknown as Record<string, unknown>;
  const patch: Record<string, unknown> = { itemId: next.itemId, turnId: next.turnId, kind: next.kind, revision: next.revision, recordedAt: next.recordedAt };
  for (const key of Object.keys(after)) if (!(key in patch) && after[key] !== before[key]) patch[key] = after[key];
  for (const key of Object.keys(before)) {
    if (!(key in after)) throw new Error(`item ${next.itemId}: a patch cannot remove ${key}`);
  }
  return { method: "item/updated", body: { item: patch } };
}

/**
 * The change from `previous` to `next` (revision one more): an `item/delta` when only the growing
 * field changed and `next`'s value extends `previous`'s, else an `item/updated` patch. It compares
 * the growing field's text, so a streamer that knows its chunk uses {@link itemDelta} directly.
 */
export function itemChange(previous: Item, next: Item): ItemChange {
  const field = growingField(next);
  const before = (previous as unknown as Record<string, unknown>)[field];
  const after = (next as unknown as Record<string, unknown>)[field];
  if (typeof before === "string" && typeof after === "string" && after.length > before.length && after.startsWith(before)) {
    const appendOnly = { ...next, [field]: before, revision: previous.revision, recordedAt: previous.recordedAt } as Item;
    if (itemPatchIsEmpty(previous, appendOnly)) return itemDelta(next, after.slice(before.length));
  }
  return itemPatch(previous, next);
}

/** Whether `previous` and `next` have the same fields with the same values (`!==`). */
function itemPatchIsEmpty(previous: Item, next: Item): boolean {
  const a = previous as unknown as Record<string, unknown>;
  const b = next as unknown as Record<string, unknown>;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}
