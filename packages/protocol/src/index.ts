/**
 * The MSP protocol module: wire types, method names, reasons and guards.
 * The only code the client and the reference host share.
 */
export { Commands, Notifications, HostRequests, COMMAND_REJECTED_CODE, PROTOCOL_VERSION } from "./methods.js";
export type { CommandMethod, NotificationMethod, HostRequestMethod } from "./methods.js";
export { Terminals, RejectionReasons, CancelCauseKinds, ItemKinds, ItemStatuses, ApprovalStates, ApprovalDecisions } from "./types.js";
export type {
  JsonValue,
  JsonObject,
  Terminal,
  RejectionReason,
  CancelCauseKind,
  CancelCause,
  ItemKind,
  ItemStatus,
  ItemBase,
  MessageItem,
  ReasoningItem,
  ToolCallItem,
  Item,
  TextInput,
  TurnInput,
  SourceRange,
  NotificationBase,
  TurnStartedParams,
  ItemNotificationParams,
  ItemDeltaField,
  ItemDeltaParams,
  ItemPatch,
  ItemUpdatedParams,
  TurnCompletedParams,
  TurnUsage,
  InboxCancelledParams,
  NotificationParamsMap,
  CommandParamsBase,
  CommandResultBase,
  ModelInfo,
  CommandMap,
  CommandParams,
  CommandResult,
  RejectionData,
  ApprovalState,
  ApprovalDecision,
  ApprovalOffer,
  ApprovalGrantRule,
  ApprovalGrant,
  ToolApproveParams,
  ToolApproveResult,
  HostRequestMap,
  SubagentLink,
  ParentTurnLink,
  ChildCursors,
} from "./types.js";
export { formatViewCursor, parseViewCursor } from "./cursor.js";
export { foldItem } from "./itemFold.js";
export { uuidv7 } from "./uuidv7.js";
export {
  isObject,
  problemWithItem,
  problemWithNotification,
  problemWithToolApprove,
  problemWithApprovalAnswer,
  problemWithSubagentLinks,
  isNotification,
  isTurnCompleted,
  isItem,
  isCompatibleProtocol,
} from "./guards.js";
export { MSP_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX, bearerSubprotocol, bearerTokenOf } from "./webSocketSubprotocols.js";
export { ClientCloseCodes, HostCloseCodes } from "./webSocketCloseCodes.js";
export { TurnReasons, HOST_RESTARTED_REASON, TOOL_DENIED_REASON, TOOL_ABORTED_BEFORE_DISPATCH } from "./reasons.js";
export type { TurnReason } from "./reasons.js";
