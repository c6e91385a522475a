/**
 * @muse-code/sdk: the browser-safe core.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards.
 * Nothing under this entry may import `node:*`.
 *
 * @packageDocumentation
 */
export { connect, MspClient } from "./client.js";
export type { ConnectOptions } from "./client.js";
export type { Framing } from "./framing/createFraming.js";
export { MspConnection } from "./connection.js";
export type { CloseInfo, CommandOptions, MspConnectionOptions, MspEvents, MspNotification, NotificationHandler } from "./connection.js";
export { MspError, MspErrorKinds } from "./errors.js";
export type { AbortedData, AnyMspError, CommandRejectedData, ConnectionClosedData, MspErrorDataMap, MspErrorKind, ProtocolData, RpcErrorData, TimeoutData } from "./errors.js";
export type { WaitOptions } from "./internal/boundedWait.js";
export { TurnRecorder, DEFAULT_TERMINAL_CAPACITY } from "./turns/turnRecorder.js";
export type { TurnRecorderOptions } from "./turns/turnRecorder.js";
export { ItemLedger } from "./turns/itemLedger.js";
export type { ItemLedgerOptions, LedgerItem } from "./turns/itemLedger.js";
export { cancelTurn } from "./turns/cancelTurn.js";
export type { CancelOutcome, CancelTurnParams, HasConnection } from "./turns/cancelTurn.js";
export { TurnHandle } from "./turns/turnHandle.js";
export type { StartTurnParams, TurnStartResult, TurnCancelOptions } from "./turns/turnHandle.js";
export { StopController, StopStates } from "./ui/stopController.js";
export type { StopControllerOptions, StopSnapshot, StopState } from "./ui/stopController.js";
export { NdjsonMessageReader, NdjsonMessageWriter } from "./framing/ndjson.js";
export { ContentLengthMessageReader, ContentLengthMessageWriter } from "./framing/contentLength.js";
export { FramedMessageReader } from "./framing/framedReader.js";
export { FramedMessageWriter, MessageEncodingError } from "./framing/framedWriter.js";
export type { ReaderOptions } from "./framing/framedReader.js";
export { DEFAULT_MAX_MESSAGE_BYTES } from "./framing/limits.js";
export type { FramingProblem } from "./framing/limits.js";
export type { ByteChannel, EndDetails, Unsubscribe } from "./framing/byteChannel.js";
export {
  Commands,
  Notifications,
  COMMAND_REJECTED_CODE,
  PROTOCOL_VERSION,
  Terminals,
  RejectionReasons,
  CancelCauseKinds,
  ItemKinds,
  ItemStatuses,
  isTurnCompleted,
  isItem,
  isNotification,
  problemWithNotification,
  isCompatibleProtocol,
} from "./protocol/index.js";
export type {
  CommandMethod,
  NotificationMethod,
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
  TurnCompletedParams,
  NotificationParamsMap,
  CommandParamsBase,
  CommandResultBase,
  ModelInfo,
  CommandMap,
  CommandParams,
  CommandResult,
  RejectionData,
} from "./protocol/index.js";
