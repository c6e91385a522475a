/** notificationItem: the whole item an item notification leaves, as the client folded it (`client.items`). */
import type { Item, MspNotification, TurnItems } from "@muse-code/sdk";

/**
 * For an item notification (`item/started`, `item/delta`, `item/updated`, `item/completed`), the
 * whole item it leaves as the client folded it: `items`'s item when it is at the notification's
 * `revision`. `undefined` for any other notification, and for one the client could not apply (a
 * gap or an unknown item: the SDK reports those as protocol errors). Call it from a
 * `notification` listener, which runs after the client folded that notification: an item
 * captured later may be at a later revision.
 */
export function notificationItem(items: TurnItems, notification: MspNotification): Item | undefined {
  const { method, params } = notification;
  if (params === undefined || !method.startsWith("item/")) return undefined;
  const named = method === "item/delta" ? params : params["item"];
  if (typeof named !== "object" || named === null) return undefined;
  const { turnId, itemId, revision } = named as { turnId?: unknown; itemId?: unknown; revision?: unknown };
  if (typeof turnId !== "string" || typeof itemId !== "string") return undefined;
  const held = items.get(turnId, itemId);
  return held !== undefined && held.revision === revision ? held : undefined;
}
