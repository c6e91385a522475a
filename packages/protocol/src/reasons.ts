/**
 * The reason strings MSP hosts put on the wire: `turn/completed.reason` and a tool call's
 * `failureReason`. Apps, the CLI, recipes and the reference host all read them from here.
 */

/**
 * The `turn/completed.reason` strings of the reference host. Any host may use its own words; these
 * are the ones `muse-host` sends, and the ones a UI can match to say where a turn stopped.
 *
 * @example
 * ```ts
 * import { TurnReasons } from "@muse-code/sdk";
 *
 * client.events.on("turn/completed", ({ reason }) => {
 *   if (reason === TurnReasons.cancelledDuringToolExecution) status.textContent = "Stopped while a tool ran";
 *   if (reason === TurnReasons.hostRestarted) status.textContent = "The host restarted: send your message again";
 * });
 * ```
 */
export const TurnReasons = {
  completed: "completed",
  cancelledBeforeStart: "cancelled before start",
  cancelledDuringPromptAssembly: "cancelled during prompt assembly",
  cancelledAtStepBoundary: "cancelled at step boundary",
  cancelledDuringModelStream: "cancelled during model stream",
  cancelledDuringToolExecution: "cancelled during tool execution",
  cancelledAwaitingApproval: "cancelled while awaiting approval",
  discardedFromInbox: "discarded from inbox",
  hostRestarted: "host restarted",
} as const;

/**
 * One of the reference host's `turn/completed.reason` strings (the values of {@link TurnReasons}).
 *
 * @example
 * ```ts
 * const reason: TurnReason = TurnReasons.discardedFromInbox;
 * ```
 */
export type TurnReason = (typeof TurnReasons)[keyof typeof TurnReasons];

/**
 * The `turn/completed.reason` of a turn a host restart cut off: `terminal: "failed"`, reason
 * `"host restarted"` (the same string as `TurnReasons.hostRestarted`).
 *
 * @example
 * ```ts
 * if (params.terminal === "failed" && params.reason === HOST_RESTARTED_REASON) status.textContent = "The host restarted";
 * ```
 */
export const HOST_RESTARTED_REASON = TurnReasons.hostRestarted;

/**
 * The `failureReason` of a tool call the client denied (`tool/approve` answered `deny`). Its
 * `error` is `{name: "ToolDenied", code: "TOOL_DENIED", message?}`, `message` being the client's
 * `reason` when it gave one. (An answer the host could not read is a deny too, with
 * `failureReason: "denied: <what was wrong>"`.)
 *
 * @example
 * ```ts
 * client.events.on("item/completed", ({ item }) => {
 *   if (item.kind === "toolCall" && item.failureReason === TOOL_DENIED_REASON) console.log(`${item.tool} was not allowed`);
 * });
 * ```
 */
export const TOOL_DENIED_REASON = "denied by the user";

/**
 * Failure reason and error of a tool call that was scheduled but never dispatched: a cancel came
 * first, so it is closed `cancelled` with this synthetic result.
 *
 * @example
 * ```ts
 * client.events.on("item/completed", ({ item }) => {
 *   if (item.kind === "toolCall" && item.failureReason === TOOL_ABORTED_BEFORE_DISPATCH.failureReason) console.log(`${item.tool} never ran`);
 * });
 * ```
 */
export const TOOL_ABORTED_BEFORE_DISPATCH = {
  failureReason: "tool call aborted before dispatch",
  error: { name: "AbortError", code: "TOOL_ABORTED_BEFORE_DISPATCH" },
} as const;
