/** notificationTurn: which turn a notification is about (`params.turnId`, or its item's `turnId`). */
import type { MspNotification } from "@muse-code/sdk";

/** The turnId a notification is about, or `undefined` for one about no turn. */
export function notificationTurn(notification: MspNotification): string | undefined {
  const params = notification.params;
  if (params === undefined) return undefined;
  if (typeof params["turnId"] === "string") return params["turnId"];
  const item = params["item"];
  if (typeof item === "object" && item !== null && typeof (item as { turnId?: unknown }).turnId === "string") return (item as { turnId: string }).turnId;
  return undefined;
}
