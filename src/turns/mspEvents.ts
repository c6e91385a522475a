/**
 * The typed events of an MSP client, and the shape of a notification as the user's handler
 * receives it.
 */
import type { MspError } from "../errors.js";
import type { ItemDeltaParams, ItemNotificationParams, JsonValue, ToolApproveResult, TurnCompletedParams, TurnStartedParams } from "@muse-code/protocol";
import type { ApprovalQuestion } from "./approvals.js";
import type { CloseInfo } from "../types/closeInfo.js";
import type { TypedEventEmitter } from "../types/typedEventEmitter.js";
import type { LedgerItem } from "./itemLedger.js";

/**
 * A notification as the user's handler receives it: `{ method, params }`.
 *
 * @example
 * ```ts
 * client.onNotification((n: MspNotification) => {
 *   if (n.method === "turn/completed") console.log(n.params?.["terminal"]);
 * });
 * ```
 */
export interface MspNotification {
  method: string;
  params: Record<string, unknown> | undefined;
  /**
   * When the host emitted it, read from the message envelope (MSP puts `emittedAtMs` beside
   * `params`, as the seed's wire shows). Absent when the host sent none.
   * @unit milliseconds since the Unix epoch
   */
  emittedAtMs?: number;
}

/**
 * The user's single, replace-only notification handler.
 *
 * @example
 * ```ts
 * const log: NotificationHandler = ({ method, params }) => console.log(method, params);
 * client.onNotification(log);
 * ```
 */
export type NotificationHandler = (notification: MspNotification) => void;

/**
 * The `item/delta` event: the wire's `item/delta` params (`field`, `append`, `revision`, …) and
 * `item`, the whole item with `append` already applied. A UI appends `append` to what it shows
 * instead of rendering `item[field]` again.
 *
 * @example
 * ```ts
 * const rows = new Map<string, Text>(); // one DOM text node per item, made on item/started
 * client.events.on("item/delta", ({ item, field, append }: ItemDeltaEvent) => {
 *   if (field === "text") rows.get(item.itemId)?.appendData(append);
 * });
 * ```
 */
export interface ItemDeltaEvent extends ItemDeltaParams {
  item: LedgerItem;
}

/**
 * The typed events of a client (any number of subscribers each). The item events give the whole
 * item at its new revision (as `client.items` holds it), whatever the wire carried: MSP 2.0 sends
 * appends as `item/delta` and other changes as `item/updated` patches. `notification` and the
 * `onNotification` handler give the wire's params as they came.
 *
 * @example
 * ```ts
 * client.events.on("turn/completed", (params) => console.log(params.turnId, params.terminal));
 * client.events.on("protocolError", (error) => console.warn(error.data.problem));
 * client.events.once("close", (info) => console.log(`closed: ${info.reason}`));
 * ```
 */
export interface MspEvents {
  /** Every well-formed notification, after the recorder and ledger saw it. */
  notification: [MspNotification];
  "turn/started": [TurnStartedParams];
  "item/started": [ItemNotificationParams];
  /** Text was appended to an item: the whole item, and the piece appended. */
  "item/delta": [ItemDeltaEvent];
  /** A change that is not an append (status, approval, truncation, failure): the whole item. */
  "item/updated": [ItemNotificationParams];
  "item/completed": [ItemNotificationParams];
  "turn/completed": [TurnCompletedParams];
  /** The host asked `tool/approve`; the question is in `client.approvals` until answered. */
  approvalAsked: [ApprovalQuestion];
  /** A question was answered, once: by the handler, the app, or the SDK (`cancelled`, when withdrawn). */
  approvalAnswered: [ApprovalQuestion, ToolApproveResult];
  /** An item the host left `inProgress` when its turn ended, now shown as `cancelled`. */
  itemSynthesized: [LedgerItem];
  /** The host sent something MSP does not allow: `error.data.problem` says what, `error.data.message` shows it. */
  protocolError: [MspError<"protocol">];
  /** A response arrived for a command that had already timed out or been aborted. */
  lateResponse: [{ id: number; method: string; response: JsonValue }];
  /** A notification handler or event listener threw. */
  handlerError: [unknown];
  /** The connection closed. Fires once. */
  close: [CloseInfo];
}

/**
 * The type of `client.events`: a {@link TypedEventEmitter} of {@link MspEvents}.
 *
 * @example
 * ```ts
 * function logTerminals(events: MspEventEmitter): void {
 *   events.on("turn/completed", ({ turnId, terminal }) => console.log(turnId, terminal));
 * }
 * logTerminals(client.events);
 * ```
 */
export type MspEventEmitter = TypedEventEmitter<MspEvents>;
