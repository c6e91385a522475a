/**
 * MSP wire types: every command's params and result, every notification's params,
 * items, terminals, rejection reasons and cancel causes, exactly as ARCHITECTURE.md
 * and docs/protocol.md define them.
 */

/** A JSON value as it appears on the wire. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object as it appears on the wire. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * How a turn ended. Every accepted turn gets exactly one `turn/completed` carrying one of these.
 *
 * @example
 * ```ts
 * if (params.terminal === Terminals.cancelled) showStopped();
 * ```
 */
export const Terminals = {
  completed: "completed",
  cancelled: "cancelled",
  failed: "failed",
} as const;

/** One of {@link Terminals}: `"completed" | "cancelled" | "failed"`. */
export type Terminal = (typeof Terminals)[keyof typeof Terminals];

/**
 * Why a host refused a command (`error.data.reason` of a -32001 rejection).
 * Only `already_terminal` means "what you wanted is already true".
 *
 * @example
 * ```ts
 * if (error.data["reason"] === RejectionReasons.alreadyTerminal) return;
 * ```
 */
export const RejectionReasons = {
  alreadyTerminal: "already_terminal",
  unknownTurn: "unknown_turn",
  unknownSession: "unknown_session",
  unknownModel: "unknown_model",
  shuttingDown: "shutting_down",
} as const;

/** One of {@link RejectionReasons}, e.g. `"already_terminal"`. */
export type RejectionReason = (typeof RejectionReasons)[keyof typeof RejectionReasons];

/**
 * Who or what cancelled a turn, reported in `turn/completed.cause`.
 *
 * @example
 * ```ts
 * if (params.cause?.kind === CancelCauseKinds.user) label = "Stopped by you";
 * ```
 */
export const CancelCauseKinds = {
  user: "user",
  parent: "parent",
  hook: "hook",
  disposed: "disposed",
} as const;

/** One of {@link CancelCauseKinds}. */
export type CancelCauseKind = (typeof CancelCauseKinds)[keyof typeof CancelCauseKinds];

/** The typed cause of a cancellation; `reason` is set for `hook` causes. */
export interface CancelCause {
  kind: CancelCauseKind;
  reason?: string;
}

/**
 * Item kinds in a turn.
 *
 * @example
 * ```ts
 * const tools = items.filter((i) => i.kind === ItemKinds.toolCall);
 * ```
 */
export const ItemKinds = {
  message: "message",
  reasoning: "reasoning",
  toolCall: "toolCall",
} as const;

/** One of {@link ItemKinds}. */
export type ItemKind = (typeof ItemKinds)[keyof typeof ItemKinds];

/**
 * Item statuses. Only `inProgress` is open; the other three are final.
 *
 * @example
 * ```ts
 * const open = items.filter((i) => i.status === ItemStatuses.inProgress);
 * ```
 */
export const ItemStatuses = {
  inProgress: "inProgress",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
} as const;

/** One of {@link ItemStatuses}. */
export type ItemStatus = (typeof ItemStatuses)[keyof typeof ItemStatuses];

/** Fields every item carries. `recordedAt` is an ISO-8601 timestamp. */
export interface ItemBase {
  itemId: string;
  kind: ItemKind;
  turnId: string;
  /** Increases by one with every update of this item. */
  revision: number;
  status: ItemStatus;
  recordedAt: string;
}

/** Assistant text. `interrupted` marks a prefix salvaged from a cancelled stream. */
export interface MessageItem extends ItemBase {
  kind: "message";
  text: string;
  interrupted?: boolean;
}

/** Model reasoning text. */
export interface ReasoningItem extends ItemBase {
  kind: "reasoning";
  text: string;
  interrupted?: boolean;
}

/** A tool call. `args` is the JSON-encoded arguments string, as the model produced it. */
export interface ToolCallItem extends ItemBase {
  kind: "toolCall";
  tool: string;
  callId: string;
  args: string;
  /** The output seen so far (capped; see `truncated`). */
  visibleOutput: string;
  truncated: boolean;
  failureReason?: string;
  error?: JsonObject;
}

/** Any item. Discriminate on `kind`. */
export type Item = MessageItem | ReasoningItem | ToolCallItem;

/** One input element of `turn/start`. */
export interface TextInput {
  type: "text";
  text: string;
}

/** What `turn/start.input` holds. */
export type TurnInput = TextInput;

/** Where a notification came from in the host's own logs (opaque to clients). */
export interface SourceRange {
  stream: { kind: string; id: string };
  first: { id: string; sequence: number };
  last: { id: string; sequence: number };
}

/** Fields every MSP notification carries. */
export interface NotificationBase {
  sessionId: string;
  /** Strictly increasing per session; pass the last one seen to `session/resume`. */
  viewCursor: string;
  sourceRange?: SourceRange;
  /**
   * When the host emitted it. The seed's wire puts `emittedAtMs` on the message envelope,
   * beside `params`; hosts may also repeat it here.
   * @unit milliseconds since the Unix epoch
   */
  emittedAtMs?: number;
}

/** `turn/started` params. `model` names the model running this turn (hosts may omit it). */
export interface TurnStartedParams extends NotificationBase {
  turnId: string;
  model?: string;
}

/** `item/started`, `item/updated`, `item/completed` params. */
export interface ItemNotificationParams extends NotificationBase {
  item: Item;
}

/** `turn/completed` params: the turn's one and only terminal. */
export interface TurnCompletedParams extends NotificationBase {
  turnId: string;
  terminal: Terminal;
  reason: string;
  cause?: CancelCause;
  /** @unit milliseconds */
  durationMs: number;
}

/** Maps each notification method to its params type. */
export interface NotificationParamsMap {
  "turn/started": TurnStartedParams;
  "item/started": ItemNotificationParams;
  "item/updated": ItemNotificationParams;
  "item/completed": ItemNotificationParams;
  "turn/completed": TurnCompletedParams;
}

/** Fields every command's params carry (the client fills `commandId` in). */
export interface CommandParamsBase {
  commandId?: string;
}

/** Fields every command's result carries. */
export interface CommandResultBase {
  commandId: string;
  status: "accepted";
}

/** A model a host offers. */
export interface ModelInfo {
  id: string;
  description?: string;
}

/** Maps each command method to its params and result. */
export interface CommandMap {
  "host/info": {
    params: CommandParamsBase;
    result: CommandResultBase & {
      name: string;
      version: string;
      protocolVersion: string;
      fingerprint: string;
      capabilities: JsonObject;
      models: ModelInfo[];
    };
  };
  "session/create": {
    params: CommandParamsBase & { model?: string };
    result: CommandResultBase & { sessionId: string; model: string };
  };
  "session/resume": {
    params: CommandParamsBase & { sessionId: string; afterCursor?: string };
    result: CommandResultBase & { sessionId: string; replayed: number };
  };
  "session/setModel": {
    params: CommandParamsBase & { sessionId: string; model: string };
    result: CommandResultBase & { model: string; previousModel: string };
  };
  "turn/start": {
    params: CommandParamsBase & { sessionId: string; input: TurnInput[] };
    result: CommandResultBase & { turnId: string; startedNewTurn: boolean; disposition: "started" | "queued" };
  };
  "turn/cancel": {
    params: CommandParamsBase & { sessionId: string; turnId: string; keepInbox?: boolean };
    result: CommandResultBase & { turnId: string };
  };
}

/** The params type of command `M`. */
export type CommandParams<M extends keyof CommandMap> = CommandMap[M]["params"];
/** The result type of command `M`. */
export type CommandResult<M extends keyof CommandMap> = CommandMap[M]["result"];

/** `error.data` of a -32001 rejection. `terminal` and `turnId` accompany `already_terminal`. */
export interface RejectionData {
  commandId: string;
  reason: RejectionReason | string;
  turnId?: string;
  terminal?: Terminal;
  [detail: string]: JsonValue | undefined;
}
