/**
 * MSP wire types: every command's params and result, every notification's params,
 * items, terminals, rejection reasons and cancel causes, exactly as ARCHITECTURE.md
 * and docs/protocol.md define them.
 */

/**
 * A JSON value as it appears on the wire.
 *
 * @example
 * ```ts
 * if (MspError.is(e) && e.kind === "rpcError") {
 *   const details: JsonValue = e.data["data"] ?? null;
 *   console.log(JSON.stringify(details));
 * }
 * ```
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A JSON object as it appears on the wire.
 *
 * @example
 * ```ts
 * const info = await client.command("host/info", {});
 * const capabilities: JsonObject = info.capabilities;
 * ```
 */
export type JsonObject = { [key: string]: JsonValue };

/**
 * How a turn ended. Every accepted turn gets exactly one `turn/completed` carrying one of these.
 *
 * @example
 * ```ts
 * if (params.terminal === Terminals.cancelled) status.textContent = "Stopped";
 * ```
 */
export const Terminals = {
  completed: "completed",
  cancelled: "cancelled",
  failed: "failed",
} as const;

/**
 * One of {@link Terminals}: `"completed" | "cancelled" | "failed"`.
 *
 * @example
 * ```ts
 * const labels: Record<Terminal, string> = { completed: "Done", cancelled: "Stopped", failed: "Failed" };
 * status.textContent = labels[(await turn.completed).terminal];
 * ```
 */
export type Terminal = (typeof Terminals)[keyof typeof Terminals];

/**
 * Why a host refused a command (`error.data.reason` of a -32001 rejection).
 * Only `already_terminal` means "what you wanted is already true".
 *
 * @example
 * ```ts
 * if (error instanceof MspError && error.kind === "commandRejected" && error.data.reason === RejectionReasons.alreadyTerminal) return;
 * ```
 */
export const RejectionReasons = {
  alreadyTerminal: "already_terminal",
  unknownTurn: "unknown_turn",
  unknownSession: "unknown_session",
  unknownModel: "unknown_model",
  shuttingDown: "shutting_down",
  turnNotRunning: "turn_not_running",
  inboxFull: "inbox_full",
  tooManySessions: "too_many_sessions",
} as const;

/**
 * One of {@link RejectionReasons}, e.g. `"already_terminal"`.
 *
 * @example
 * ```ts
 * if (MspError.is(e) && e.kind === "commandRejected") {
 *   const reason = e.data["reason"] as RejectionReason;
 *   if (reason === RejectionReasons.unknownSession) console.log("the host forgot the session");
 * }
 * ```
 */
export type RejectionReason = (typeof RejectionReasons)[keyof typeof RejectionReasons];

/**
 * Who or what cancelled a turn, reported in `turn/completed.cause`.
 *
 * @example
 * ```ts
 * if (params.cause?.kind === CancelCauseKinds.user) status.textContent = "Stopped by you";
 * ```
 */
export const CancelCauseKinds = {
  user: "user",
  parent: "parent",
  hook: "hook",
  disposed: "disposed",
} as const;

/**
 * One of {@link CancelCauseKinds}.
 *
 * @example
 * ```ts
 * const who: Record<CancelCauseKind, string> = { user: "you", parent: "the parent turn", hook: "a hook", disposed: "shutdown" };
 * const { cause } = await turn.completed;
 * if (cause !== undefined) console.log(`stopped by ${who[cause.kind]}`);
 * ```
 */
export type CancelCauseKind = (typeof CancelCauseKinds)[keyof typeof CancelCauseKinds];

/**
 * The typed cause of a cancellation; `reason` is set for `hook` causes.
 *
 * @example
 * ```ts
 * const { terminal, cause } = await turn.completed;
 * if (terminal === "cancelled" && cause?.kind === "hook") console.log(`a hook cancelled it: ${cause.reason}`);
 * ```
 */
export interface CancelCause {
  kind: CancelCauseKind;
  reason?: string;
}

/**
 * Item kinds in a turn.
 *
 * @example
 * ```ts
 * const tools = client.items.itemsOf(turnId).filter((i) => i.kind === ItemKinds.toolCall);
 * ```
 */
export const ItemKinds = {
  message: "message",
  reasoning: "reasoning",
  toolCall: "toolCall",
} as const;

/**
 * One of {@link ItemKinds}.
 *
 * @example
 * ```ts
 * const icons: Record<ItemKind, string> = { message: "say", reasoning: "think", toolCall: "run" };
 * for (const item of client.items.itemsOf(turnId)) console.log(icons[item.kind], item.itemId);
 * ```
 */
export type ItemKind = (typeof ItemKinds)[keyof typeof ItemKinds];

/**
 * Item statuses. Only `inProgress` is open; the other three are final.
 *
 * @example
 * ```ts
 * const open = client.items.itemsOf(turnId).filter((i) => i.status === ItemStatuses.inProgress);
 * ```
 */
export const ItemStatuses = {
  inProgress: "inProgress",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
} as const;

/**
 * One of {@link ItemStatuses}.
 *
 * @example
 * ```ts
 * const isFinal = (status: ItemStatus) => status !== ItemStatuses.inProgress;
 * ```
 */
export type ItemStatus = (typeof ItemStatuses)[keyof typeof ItemStatuses];

/**
 * Fields every item carries. `recordedAt` is an ISO-8601 timestamp.
 *
 * @example
 * ```ts
 * const row = (item: ItemBase) => `${item.kind} ${item.itemId} r${item.revision} ${item.status}`;
 * client.events.on("item/updated", ({ item }) => console.log(row(item)));
 * ```
 */
export interface ItemBase {
  itemId: string;
  kind: ItemKind;
  turnId: string;
  /** Increases by one with every update of this item. */
  revision: number;
  status: ItemStatus;
  recordedAt: string;
}

/**
 * Assistant text. `interrupted` marks a prefix salvaged from a cancelled stream.
 *
 * @example
 * ```ts
 * const show = (item: MessageItem) => console.log(item.interrupted ? `${item.text} [interrupted]` : item.text);
 * client.events.on("item/completed", ({ item }) => {
 *   if (item.kind === "message") show(item);
 * });
 * ```
 */
export interface MessageItem extends ItemBase {
  kind: "message";
  text: string;
  interrupted?: boolean;
  /** `"user"` on steering input (MSP 2.1, `turn/steer`); absent on the model's own text. */
  author?: "user";
  /** The `turn/steer` this message carries (its commandId); set together with `author: "user"`. */
  steerId?: string;
  /** A steering message a `keepInbox` cancel (or a policy stop) carried over into the session's next turn. */
  carriedOver?: boolean;
  /** Why a steering message completed `cancelled` or `failed`, e.g. `"discarded from inbox"`. */
  failureReason?: string;
}

/**
 * Model reasoning text.
 *
 * @example
 * ```ts
 * const show = (item: ReasoningItem) => console.log(`(thinking) ${item.text}`);
 * client.events.on("item/updated", ({ item }) => {
 *   if (item.kind === "reasoning") show(item);
 * });
 * ```
 */
export interface ReasoningItem extends ItemBase {
  kind: "reasoning";
  text: string;
  interrupted?: boolean;
}

/**
 * A tool call. `args` is the JSON-encoded arguments string, as the model produced it.
 *
 * @example
 * ```ts
 * const show = (call: ToolCallItem) => console.log(`$ ${call.tool} ${call.args}`, call.status, call.visibleOutput, call.truncated ? "[truncated]" : "");
 * client.events.on("item/completed", ({ item }) => {
 *   if (item.kind === "toolCall") show(item);
 * });
 * ```
 */
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
  /**
   * Where the host's question about this call stands, when it asked one (absent when it did not
   * ask). The host sets `"pending"` in an `item/updated` before it sends `tool/approve`, and one of
   * the other three after the answer or a cancel. The call runs only after `"approved"`; a
   * `"denied"` call completes `failed` with `failureReason: "denied by the user"`; a
   * `"cancelled"` one was never dispatched.
   */
  approval?: ApprovalState;
  /**
   * The session grant that approved this call (MSP 2.1): set with `approval: "approved"` on the
   * call whose `approveForSession` answer created the grant, and on every later call the grant
   * covered, which the host then ran without asking.
   */
  grant?: ApprovalGrant;
  /**
   * The child session and turn this call delegated to, set by an
   * `item/updated` patch before anything of the child session is sent. Absent on a call that
   * does not delegate.
   */
  subagent?: SubagentLink;
}

/**
 * The link from a delegating tool call to the subagent it started: the child session
 * the host created for it, and the one turn it runs there. It arrives as an `item/updated` patch
 * of the tool call, before any notification of the child session.
 *
 * @example
 * ```ts
 * client.events.on("item/updated", ({ item }) => {
 *   const link: SubagentLink | undefined = item.kind === "toolCall" ? item.subagent : undefined;
 *   if (link !== undefined) console.log(`${item.itemId} delegated to turn ${link.turnId} of session ${link.sessionId}`);
 * });
 * ```
 */
export interface SubagentLink {
  sessionId: string;
  turnId: string;
}

/**
 * The states of a tool call's approval question, as its item's `approval` field carries them.
 *
 * @example
 * ```ts
 * client.events.on("item/updated", ({ item }) => {
 *   if (item.kind === "toolCall" && item.approval === ApprovalStates.pending) console.log(`asking to run ${item.tool}`);
 * });
 * ```
 */
export const ApprovalStates = {
  pending: "pending",
  approved: "approved",
  denied: "denied",
  cancelled: "cancelled",
} as const satisfies Record<string, ApprovalState>;

/**
 * One of the approval states (the values of `ApprovalStates` in the protocol module): `"pending" | "approved" | "denied" | "cancelled"`.
 *
 * @example
 * ```ts
 * const badges: Record<ApprovalState, string> = { pending: "Waiting for you", approved: "Allowed", denied: "Denied", cancelled: "Withdrawn" };
 * for (const item of client.items.itemsOf(turnId)) if (item.kind === "toolCall" && item.approval !== undefined) console.log(badges[item.approval]);
 * ```
 */
export type ApprovalState = "pending" | "approved" | "denied" | "cancelled";

/**
 * How a client answers `tool/approve`. `cancelled` means the question was withdrawn (the turn was
 * stopped or ended, or the connection closed) rather than decided; the SDK sends it itself.
 *
 * @example
 * ```ts
 * const answer: ToolApproveResult = { decision: "deny", reason: "not in this repo" };
 * ```
 */
export const ApprovalDecisions = {
  approve: "approve",
  deny: "deny",
  cancelled: "cancelled",
  approveForSession: "approveForSession",
  denyAndStop: "denyAndStop",
} as const satisfies Record<string, ApprovalDecision>;

/**
 * One of the answers to `tool/approve` (the values of `ApprovalDecisions` in the protocol module):
 * an {@link ApprovalOffer} or `"cancelled"`. A host of MSP 2.0 offers only `approve` and `deny`;
 * a 2.1 host lists what it offers in `ToolApproveParams.decisions`.
 *
 * @example
 * ```ts
 * const labels: Record<ApprovalDecision, string> = {
 *   approve: "Allowed once",
 *   approveForSession: "Allowed for this session",
 *   deny: "Denied",
 *   denyAndStop: "Denied, turn stopped",
 *   cancelled: "Withdrawn",
 * };
 * console.log(labels["deny"]);
 * ```
 */
export type ApprovalDecision = ApprovalOffer | "cancelled";

/**
 * A decision a host may offer in `ToolApproveParams.decisions` (MSP 2.1): `approve` (this call
 * once), `approveForSession` (this call, and record a session grant, `ToolApproveParams.grant`),
 * `deny` (the turn goes on) and `denyAndStop` (deny, then the turn is cancelled with cause
 * `user`, as a Stop).
 *
 * @example
 * ```ts
 * client.onApproval((request) => {
 *   const offered: ApprovalOffer[] = request.decisions ?? ["approve", "deny"];
 *   return { decision: offered.includes("approveForSession") ? "approveForSession" : "approve" };
 * });
 * ```
 */
export type ApprovalOffer = "approve" | "approveForSession" | "deny" | "denyAndStop";

/**
 * The rule an `approveForSession` answer creates (MSP 2.1): calls of `tool` whose `args` match.
 * `match: "exact"` (the only rule the reference host offers) covers the same tool with
 * byte-equal `args` (the JSON-encoded arguments string). A host that offers a wider rule states
 * it here (e.g. `{tool: "shell", match: "anyArgs"}`, without `args`), and a UI must show it.
 *
 * @example
 * ```ts
 * const rule: ApprovalGrantRule = { tool: "shell", args: '{"command":"npm test"}', match: "exact" };
 * console.log(`always allow ${rule.tool} ${rule.args ?? "(any arguments)"} (${rule.match})`);
 * ```
 */
export interface ApprovalGrantRule {
  tool: string;
  /** The JSON-encoded arguments the rule matches; absent for a rule over any arguments. */
  args?: string;
  /** `"exact"`, or the name of a wider rule the host states. */
  match: string;
}

/**
 * A session grant (MSP 2.1): the rule of an `approveForSession` answer, with the id the host gave
 * it. It is durable in the host's session log; a toolCall item the grant approved names it in its
 * `grant` field.
 *
 * @example
 * ```ts
 * const grant: ApprovalGrant = { grantId: "g1", tool: "shell", args: '{"command":"npm test"}', match: "exact" };
 * console.log(`approved by grant ${grant.grantId}`);
 * ```
 */
export interface ApprovalGrant extends ApprovalGrantRule {
  grantId: string;
}

/**
 * `tool/approve` params: the host asks whether it may run one tool call. `itemId` and `callId`
 * name the toolCall item (already `approval: "pending"` on the stream); `tool` and `args` repeat
 * what it will run (`args` is the JSON-encoded arguments string, as on the item).
 *
 * @example
 * ```ts
 * const question: ToolApproveParams = { sessionId, turnId, itemId: "i1", callId: "c1", tool: "shell", args: '{"command":"rm -rf build"}' };
 * console.log(`Allow ${question.tool} ${question.args}?`);
 * ```
 */
export interface ToolApproveParams {
  sessionId: string;
  turnId: string;
  itemId: string;
  callId: string;
  tool: string;
  args: string;
  /**
   * The decisions this question offers (MSP 2.1); `cancelled` is always allowed besides. Absent
   * from a 2.0 host, which takes only `approve`, `deny` and `cancelled`. An answer not offered is
   * refused by the host and runs nothing.
   */
  decisions?: ApprovalOffer[];
  /** The grant an `approveForSession` answer would create (MSP 2.1); shown to the user before they pick it. */
  grant?: ApprovalGrantRule;
}

/**
 * `tool/approve` result: the client's answer. `reason` is free text for the host's log and the
 * item's `failureReason` context (e.g. why it was denied).
 *
 * @example
 * ```ts
 * const yes: ToolApproveResult = { decision: "approve" };
 * const no: ToolApproveResult = { decision: "deny", reason: "no network access from this app" };
 * console.log(yes.decision, no.reason);
 * ```
 */
export interface ToolApproveResult {
  decision: ApprovalDecision;
  reason?: string;
}

/**
 * Maps each host → client request method to its params and result.
 *
 * @example
 * ```ts
 * type Answer = HostRequestMap["tool/approve"]["result"]; // { decision, reason? }
 * const answer: Answer = { decision: "cancelled" };
 * ```
 */
export interface HostRequestMap {
  "tool/approve": { params: ToolApproveParams; result: ToolApproveResult };
}

/**
 * Any item. Discriminate on `kind`.
 *
 * @example
 * ```ts
 * function render(item: Item): string {
 *   switch (item.kind) {
 *     case "message": return item.text;
 *     case "reasoning": return `(thinking) ${item.text}`;
 *     case "toolCall": return `$ ${item.tool} ${item.args}`;
 *   }
 * }
 * ```
 */
export type Item = MessageItem | ReasoningItem | ToolCallItem;

/**
 * One input element of `turn/start`.
 *
 * @example
 * ```ts
 * const input: TextInput = { type: "text", text: "Run the tests" };
 * const turn = client.startTurn({ sessionId, input: [input] });
 * ```
 */
export interface TextInput {
  type: "text";
  text: string;
}

/**
 * What `turn/start.input` holds.
 *
 * @example
 * ```ts
 * const input: TurnInput[] = [{ type: "text", text: "Fix the failing test" }];
 * const ack = await client.command("turn/start", { sessionId, input });
 * ```
 */
export type TurnInput = TextInput;

/**
 * Where a notification came from in the host's own logs (opaque to clients).
 *
 * @example
 * ```ts
 * client.events.on("turn/completed", ({ sourceRange }) => {
 *   if (sourceRange !== undefined) console.debug(sourceRange.stream.id, sourceRange.first.sequence, sourceRange.last.sequence);
 * });
 * ```
 */
export interface SourceRange {
  stream: { kind: string; id: string };
  first: { id: string; sequence: number };
  last: { id: string; sequence: number };
}

/**
 * Fields every MSP notification carries.
 *
 * @example
 * ```ts
 * const seen = (params: NotificationBase) => console.debug(params.sessionId, params.viewCursor);
 * client.events.on("turn/started", seen);
 * client.events.on("turn/completed", seen);
 * ```
 */
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

/**
 * `turn/started` params. `model` names the model running this turn (hosts may omit it).
 *
 * @example
 * ```ts
 * client.events.on("turn/started", (params: TurnStartedParams) => {
 *   console.log(`turn ${params.turnId} on ${params.model ?? "the session's model"}`);
 * });
 * ```
 */
export interface TurnStartedParams extends NotificationBase {
  turnId: string;
  model?: string;
  /** On a child turn only: the turn and tool-call item that delegated to it. */
  parent?: ParentTurnLink;
  /**
   * On a child turn only, with `parent`: how deep it is below a top-level turn.
   * @unit levels: 1 for a child of a top-level turn, 2 for a grandchild, …
   */
  depth?: number;
}

/**
 * The link from a child turn to the turn that delegated to it: `turn/started.parent`
 * of a subagent's turn names the parent session, its turn, and the delegating tool call's item,
 * whose `subagent` patch named this turn before.
 *
 * @example
 * ```ts
 * client.events.on("turn/started", ({ turnId, parent, depth }) => {
 *   const link: ParentTurnLink | undefined = parent;
 *   if (link !== undefined) console.log(`${turnId} runs for item ${link.itemId} of turn ${link.turnId}, depth ${depth ?? "?"}`);
 * });
 * ```
 */
export interface ParentTurnLink {
  sessionId: string;
  turnId: string;
  itemId: string;
}

/**
 * `item/started`, `item/updated`, `item/completed` params.
 *
 * @example
 * ```ts
 * client.events.on("item/completed", ({ item }: ItemNotificationParams) => console.log(item.kind, item.status));
 * ```
 */
export interface ItemNotificationParams extends NotificationBase {
  item: Item;
}

/**
 * The field of an item that `item/delta` appends to: `text` (a message or reasoning) or
 * `visibleOutput` (a tool call).
 *
 * @example
 * ```ts
 * const fieldOf = (item: Item): ItemDeltaField => (item.kind === "toolCall" ? "visibleOutput" : "text");
 * ```
 */
export type ItemDeltaField = "text" | "visibleOutput";

/**
 * `item/delta` params (MSP 2.0): `append` was added at the end of the item's `field`. The item
 * becomes the previous one with `append` added, and `revision` and `recordedAt` set to these;
 * nothing else changes. `revision` is exactly one more than the item's previous notification.
 * `append` is a non-empty string of UTF-16 code units (it may end or begin with half of a
 * surrogate pair: only the joined text is whole).
 *
 * @example
 * ```ts
 * client.events.on("item/delta", ({ item, field, append }) => {
 *   if (field === "text") document.getElementById(item.itemId)?.append(append); // append, do not re-render
 * });
 * ```
 */
export interface ItemDeltaParams extends NotificationBase {
  turnId: string;
  itemId: string;
  revision: number;
  field: ItemDeltaField;
  append: string;
  recordedAt: string;
}

/**
 * The `item` of an `item/updated` (MSP 2.0): a patch. It names the item (`itemId`, `turnId`,
 * `kind`), carries its new `revision` and `recordedAt`, and the fields that changed at their new
 * values (`status`, `approval`, `truncated`, `failureReason`, `error`, `interrupted`, or any other;
 * a whole item is a valid patch). Fields it does not carry keep their values.
 *
 * @example
 * ```ts
 * const patch: ItemPatch = { itemId: "i1", turnId, kind: "message", revision: 3, recordedAt: new Date().toISOString(), status: "cancelled", interrupted: true };
 * ```
 */
export type ItemPatch = Pick<ItemBase, "itemId" | "turnId" | "kind" | "revision" | "recordedAt"> &
  Partial<Omit<MessageItem, "kind">> &
  Partial<Omit<ToolCallItem, "kind">>;

/**
 * `item/updated` params on the wire (MSP 2.0): `item` is a patch. The SDK's `item/updated`
 * event and `client.items` give the whole item instead.
 *
 * @example
 * ```ts
 * client.onNotification(({ method, params }) => {
 *   if (method === "item/updated" && isNotification("item/updated", params)) console.log(Object.keys(params.item));
 * });
 * ```
 */
export interface ItemUpdatedParams extends NotificationBase {
  item: ItemPatch;
}

/**
 * `turn/completed` params: the turn's one and only terminal.
 *
 * @example
 * ```ts
 * const t: TurnCompletedParams = await client.turns.terminalOf(turnId, { timeoutMs: 10_000 });
 * console.log(t.terminal, t.reason, `${t.durationMs} ms`);
 * ```
 */
export interface TurnCompletedParams extends NotificationBase {
  turnId: string;
  terminal: Terminal;
  reason: string;
  cause?: CancelCause;
  /** @unit milliseconds */
  durationMs: number;
  /** What the turn's model produced, counted up to its end (MSP 2.1; also on cancelled and failed turns). */
  usage?: TurnUsage;
}

/**
 * Token counts of one turn, on its `turn/completed` (MSP 2.1): each a non-negative integer,
 * counting what the model produced before the turn ended, however it ended.
 *
 * @example
 * ```ts
 * const { usage } = await turn.completed;
 * if (usage !== undefined) console.log(`${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.reasoningTokens} reasoning`);
 * ```
 */
export interface TurnUsage {
  /** Tokens the model read (prompt and context). @unit tokens */
  inputTokens: number;
  /** Tokens the model wrote (text and tool calls). @unit tokens */
  outputTokens: number;
  /** Tokens the model spent reasoning. @unit tokens */
  reasoningTokens: number;
}

/**
 * Maps each notification method to its params type.
 *
 * @example
 * ```ts
 * function handle<M extends keyof NotificationParamsMap>(method: M, params: unknown, use: (p: NotificationParamsMap[M]) => void): void {
 *   if (isNotification(method, params)) use(params);
 * }
 * ```
 */
export interface NotificationParamsMap {
  "turn/started": TurnStartedParams;
  "item/started": ItemNotificationParams;
  "item/delta": ItemDeltaParams;
  "item/updated": ItemUpdatedParams;
  "item/completed": ItemNotificationParams;
  "turn/completed": TurnCompletedParams;
  "inbox/cancelled": InboxCancelledParams;
}

/**
 * `inbox/cancelled` params (MSP 2.1): the one splice a default `turn/cancel` of a running turn
 * records, before that turn's `turn/completed`. `discarded` names the steering input (by
 * `steerId`) and the queued turns (by `turnId`) the cancel discarded; both lists may be empty.
 *
 * @example
 * ```ts
 * client.onNotification(({ method, params }) => {
 *   if (method === "inbox/cancelled" && isNotification("inbox/cancelled", params)) console.log(`dropped ${params.discarded.steerIds.length} steering input(s)`);
 * });
 * ```
 */
export interface InboxCancelledParams extends NotificationBase {
  turnId: string;
  discarded: { steerIds: string[]; turnIds: string[] };
}

/**
 * Fields every command's params carry (the client fills `commandId` in).
 *
 * @example
 * ```ts
 * // Reusing a commandId when retrying lets the host answer the retry with the first outcome.
 * const commandId = "0198f0aa-1111-7000-8000-000000000001";
 * const session = await client.command("session/create", { commandId, model: "default" });
 * ```
 */
export interface CommandParamsBase {
  commandId?: string;
}

/**
 * Fields every command's result carries.
 *
 * @example
 * ```ts
 * const { commandId, status } = await client.command("host/info", {});
 * // status is always "accepted"; a refusal rejects with an MspError of kind "commandRejected"
 * ```
 */
export interface CommandResultBase {
  commandId: string;
  status: "accepted";
}

/**
 * A model a host offers.
 *
 * @example
 * ```ts
 * const { models } = await client.command("host/info", {});
 * const ids = models.map((m: ModelInfo) => m.id);
 * ```
 */
export interface ModelInfo {
  id: string;
  description?: string;
}

/**
 * Maps each command method to its params and result.
 *
 * @example
 * ```ts
 * type SessionCreateResult = CommandMap["session/create"]["result"]; // { commandId, status, sessionId, model }
 * ```
 */
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
    params: CommandParamsBase & { sessionId: string; afterCursor?: string; childCursors?: ChildCursors };
    /**
     * `replayed` notifications follow the answer. With `afterCursor`, `items` holds every item
     * in progress at that cursor, whole, at its revision there: the base the replay's deltas and
     * patches apply to (the SDK puts them in `client.items` before the replay).
     */
    result: CommandResultBase & { sessionId: string; replayed: number; items?: Item[] };
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
  "turn/steer": {
    params: CommandParamsBase & { sessionId: string; turnId: string; input: TurnInput[] };
    /** `steerId` is this command's commandId: the `steerId` of the steering `message` item. */
    result: CommandResultBase & { turnId: string; steerId: string };
  };
}

/**
 * The params type of command `M`.
 *
 * @example
 * ```ts
 * const params: CommandParams<"turn/cancel"> = { sessionId, turnId, keepInbox: true };
 * await client.command("turn/cancel", params);
 * ```
 */
export type CommandParams<M extends keyof CommandMap> = CommandMap[M]["params"];
/**
 * The result type of command `M`.
 *
 * @example
 * ```ts
 * const info: CommandResult<"host/info"> = await client.command("host/info", {});
 * console.log(info.name, info.version, info.protocolVersion);
 * ```
 */
export type CommandResult<M extends keyof CommandMap> = CommandMap[M]["result"];

/**
 * `error.data` of a -32001 rejection. `terminal` and `turnId` accompany `already_terminal`.
 *
 * @example
 * ```ts
 * if (MspError.is(e) && e.kind === "commandRejected") {
 *   const data = e.data as RejectionData;
 *   if (data.reason === "already_terminal") console.log(`turn ${data.turnId} already ended: ${data.terminal}`);
 * }
 * ```
 */
export interface RejectionData {
  commandId: string;
  reason: RejectionReason | string;
  turnId?: string;
  terminal?: Terminal;
  [detail: string]: JsonValue | undefined;
}

/**
 * `session/resume.childCursors`: for each session below the resumed one, the last
 * `viewCursor` the client holds of it. The host replays each child session after its own cursor,
 * and all of a child session the client names none for.
 *
 * @example
 * ```ts
 * const lastCursors = new Map<string, string>(); // sessionId -> the last viewCursor seen of it
 * client.onNotification(({ params }) => {
 *   if (typeof params?.["sessionId"] === "string" && typeof params["viewCursor"] === "string") lastCursors.set(params["sessionId"], params["viewCursor"]);
 * });
 * const childCursors: ChildCursors = Object.fromEntries([...lastCursors].filter(([id]) => id !== sessionId));
 * await client.command("session/resume", { sessionId, afterCursor: lastCursors.get(sessionId), childCursors });
 * ```
 */
export type ChildCursors = { [sessionId: string]: string };
