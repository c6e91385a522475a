/**
 * @muse-code/sdk: the browser-safe core, and the client API only: connect and MspClient,
 * MspError and its kinds, cancelTurn and TurnHandle, the protocol's wire types and constants, and
 * the types those mention. Transport authors find the framing readers and writers in
 * `@muse-code/sdk/framing`, and construct an `MspClient` over them; the Stop button's
 * `StopController` is in `@muse-code/sdk/ui`.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards.
 * Nothing under this entry may import `node:*`.
 *
 * @packageDocumentation
 */
export { connect } from "./client/connect.js";
export type { ConnectOptions } from "./client/connect.js";
export { MspClient } from "./client/mspClient.js";
export type { MspClientOptions } from "./client/mspClient.js";
export type { CancelOutcome, CancelTurnParams, TurnClient, TurnCanceller } from "./client/turnClient.js";
export type { Framing } from "./framing/createFraming.js";
export type { CloseInfo } from "./types/closeInfo.js";
export type { ItemDeltaEvent, MspEventEmitter, MspEvents, MspNotification, NotificationHandler } from "./turns/mspEvents.js";
export type { TableCapacities } from "./turns/mspDispatcher.js";
export type { EventArgsMap, TypedEventEmitter } from "./types/typedEventEmitter.js";
export { MspError, MspErrorKinds } from "./errors.js";
export type {
  AbortedData,
  AnyMspError,
  CommandRejectedData,
  ConnectionClosedData,
  MspErrorDataMap,
  MspErrorKind,
  ProtocolData,
  RpcErrorData,
  TimeoutData,
} from "./errors.js";
export type { WaitOptions } from "./types/waitOptions.js";
export type { RecordedTurns } from "./turns/turnRecorder.js";
export type { LedgerItem, TurnItems } from "./turns/itemLedger.js";
export type { ApprovalContext, ApprovalHandler, ApprovalQuestion, TurnApprovals } from "./turns/approvals.js";
export { cancelTurn } from "./client/cancelTurn.js";
export { TurnHandle } from "./client/turnHandle.js";
export type { StartTurnParams, TurnStartResult, TurnCancelOptions } from "./client/turnHandle.js";
export type { ByteChannel, EndDetails, Unsubscribe } from "./framing/byteChannel.js";
export {
  Commands,
  Notifications,
  HostRequests,
  COMMAND_REJECTED_CODE,
  PROTOCOL_VERSION,
  Terminals,
  RejectionReasons,
  CancelCauseKinds,
  ItemKinds,
  ItemStatuses,
  ApprovalStates,
  ApprovalDecisions,
  ClientCloseCodes,
  HostCloseCodes,
  TurnReasons,
  HOST_RESTARTED_REASON,
  TOOL_DENIED_REASON,
  TOOL_ABORTED_BEFORE_DISPATCH,
  isTurnCompleted,
  isItem,
  isNotification,
  isCompatibleProtocol,
  uuidv7,
  foldItem,
} from "@muse-code/protocol";
export type {
  CommandMethod,
  NotificationMethod,
  HostRequestMethod,
  JsonValue,
  JsonObject,
  Terminal,
  RejectionReason,
  TurnReason,
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
} from "@muse-code/protocol";
