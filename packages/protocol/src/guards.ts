/**
 * Runtime guards for what a client reads off the wire. Each `problemWith…` function
 * returns `undefined` for a well-formed value, or one sentence saying what is wrong.
 */
import { Notifications, PROTOCOL_VERSION } from "./methods.js";
import {
  ApprovalDecisions,
  CancelCauseKinds,
  ItemKinds,
  ItemStatuses,
  Terminals,
  type ApprovalDecision,
  type Item,
  type NotificationParamsMap,
  type ToolApproveParams,
  type TurnCompletedParams,
} from "./types.js";

const terminals: ReadonlySet<string> = new Set(Object.values(Terminals));
const itemKinds: ReadonlySet<string> = new Set(Object.values(ItemKinds));
const itemStatuses: ReadonlySet<string> = new Set(Object.values(ItemStatuses));
const causeKinds: ReadonlySet<string> = new Set(Object.values(CancelCauseKinds));

/** True when `value` is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `<name> <value> is not one of <allowed>`, or `undefined` when `value` is one of them. */
function notOneOf(name: string, value: unknown, allowed: ReadonlySet<string>): string | undefined {
  return allowed.has(value as string) ? undefined : `${name} ${JSON.stringify(value)} is not one of ${[...allowed].join(", ")}`;
}

function field(o: Record<string, unknown>, name: string, type: "string" | "number" | "boolean"): string | undefined {
  return typeof o[name] === type ? undefined : `${name} must be a ${type}`;
}

/** What is wrong with an item, or `undefined` when it is well-formed. */
export function problemWithItem(item: unknown): string | undefined {
  if (!isObject(item)) return "item must be an object";
  // The first problem, in field order (`??` stops at it: no array of problems per check).
  const basic =
    field(item, "itemId", "string") ??
    field(item, "kind", "string") ??
    field(item, "turnId", "string") ??
    field(item, "revision", "number") ??
    field(item, "status", "string");
  if (basic !== undefined) return `item.${basic}`;
  return notOneOf("item.kind", item["kind"], itemKinds) ?? notOneOf("item.status", item["status"], itemStatuses);
}

const deltaFields: ReadonlySet<string> = new Set(["text", "visibleOutput"]);

/** The names every delta and patch carries: `itemId`, `turnId` (strings) and `revision` (a number). */
function problemWithIds(o: Record<string, unknown>, prefix: string): string | undefined {
  const problem = field(o, "itemId", "string") ?? field(o, "turnId", "string") ?? field(o, "revision", "number");
  return problem === undefined ? undefined : prefix + problem;
}

function problemWithBase(params: Record<string, unknown>): string | undefined {
  return field(params, "sessionId", "string") ?? field(params, "viewCursor", "string");
}

/**
 * What is wrong with the params of an MSP notification, or `undefined` when they are
 * well-formed. Methods MSP does not define are not checked (hosts may add their own).
 */
export function problemWithNotification(method: string, params: unknown): string | undefined {
  switch (method) {
    case Notifications.turnStarted:
      if (!isObject(params)) return "params must be an object";
      return problemWithBase(params) ?? field(params, "turnId", "string");
    case Notifications.inboxCancelled:
      // MSP 2.1's splice: a turn's fields and `discarded` (its lists are checkTranscript's to read).
      return (
        problemWithNotification(Notifications.turnStarted, params) ??
        (isObject((params as Record<string, unknown>)["discarded"]) ? undefined : "discarded must be an object")
      );
    case Notifications.itemStarted:
    case Notifications.itemCompleted:
      if (!isObject(params)) return "params must be an object";
      return problemWithBase(params) ?? problemWithItem(params["item"]);
    case Notifications.itemUpdated: {
      if (!isObject(params)) return "params must be an object";
      const patch = params["item"];
      if (!isObject(patch)) return problemWithBase(params) ?? "item must be an object";
      // A patch: the item's names and revision, and only the fields that changed.
      const basic = problemWithBase(params) ?? problemWithIds(patch, "item.") ?? field(patch, "kind", "string");
      return (
        basic ??
        notOneOf("item.kind", patch["kind"], itemKinds) ??
        (patch["status"] === undefined ? undefined : notOneOf("item.status", patch["status"], itemStatuses))
      );
    }
    case Notifications.itemDelta: {
      if (!isObject(params)) return "params must be an object";
      const basic = problemWithBase(params) ?? problemWithIds(params, "") ?? field(params, "append", "string");
      return basic ?? notOneOf("field", params["field"], deltaFields);
    }
    case Notifications.turnCompleted: {
      if (!isObject(params)) return "params must be an object";
      const basic = problemWithBase(params) ?? field(params, "turnId", "string") ?? field(params, "terminal", "string");
      const problem = basic ?? notOneOf("terminal", params["terminal"], terminals);
      if (problem !== undefined) return problem;
      const cause = params["cause"];
      if (cause !== undefined && (!isObject(cause) || !causeKinds.has(cause["kind"] as string))) {
        return `cause must be {kind: ${[...causeKinds].join(" | ")}}`;
      }
      const usage = params["usage"];
      // MSP 2.1: each count a non-negative integer (invariant U).
      if (
        usage !== undefined &&
        !(
          isObject(usage) && [usage["inputTokens"], usage["outputTokens"], usage["reasoningTokens"]].every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
        )
      ) {
        return "usage must be {inputTokens, outputTokens, reasoningTokens}, each a non-negative integer";
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * What is wrong with the params of a `tool/approve` request, or `undefined` when they are
 * well-formed (every field of {@link ToolApproveParams} a string).
 */
export function problemWithToolApprove(params: unknown): string | undefined {
  if (!isObject(params)) return "params must be an object";
  return TOOL_APPROVE_FIELDS.map((name) => field(params, name, "string")).find(Boolean);
}

const TOOL_APPROVE_FIELDS: ReadonlyArray<keyof ToolApproveParams> = ["sessionId", "turnId", "itemId", "callId", "tool", "args"];
const decisions: ReadonlySet<string> = new Set<ApprovalDecision>(Object.values(ApprovalDecisions));

/**
 * What is wrong with an answer to `tool/approve`, or `undefined` when it is a well-formed
 * `ToolApproveResult`: `decision` one of `approve`, `approveForSession`, `deny`, `denyAndStop`,
 * `cancelled` (the values of `ApprovalDecisions`), and `reason`, if present, a string. Whether
 * the question offered that decision is not checked here (see `offeredDecisions` in
 * `@muse-code/sdk/ui`): a host refuses an answer it did not offer, and runs nothing.
 */
export function problemWithApprovalAnswer(result: unknown): string | undefined {
  if (!isObject(result)) return "the answer must be an object";
  return notOneOf("decision", result["decision"], decisions) ?? (result["reason"] === undefined ? undefined : field(result, "reason", "string"));
}

/**
 * True when `method` is one of MSP's notifications and `params` are well-formed for it.
 *
 * @example
 * ```ts
 * client.onNotification((n) => {
 *   if (n.method === "turn/completed" && isNotification("turn/completed", n.params)) console.log(n.params.terminal);
 * });
 * ```
 */
export function isNotification<M extends keyof NotificationParamsMap>(method: M, params: unknown): params is NotificationParamsMap[M] {
  return problemWithNotification(method, params) === undefined && isObject(params);
}

/**
 * True when `params` are a well-formed `turn/completed`.
 *
 * @example
 * ```ts
 * client.events.on("notification", (n) => {
 *   if (n.method === "turn/completed" && isTurnCompleted(n.params)) console.log(n.params.turnId, n.params.terminal);
 * });
 * ```
 */
export function isTurnCompleted(params: unknown): params is TurnCompletedParams {
  return isNotification(Notifications.turnCompleted, params);
}

/**
 * True when `value` is a well-formed item.
 *
 * @example
 * ```ts
 * client.events.on("notification", (n) => {
 *   const item = n.params?.["item"];
 *   if (isItem(item)) console.log(item.itemId, item.kind, item.status);
 * });
 * ```
 */
export function isItem(value: unknown): value is Item {
  return problemWithItem(value) === undefined;
}

/**
 * True when a host's `protocolVersion` is compatible with this package's (same major).
 *
 * @example
 * ```ts
 * isCompatibleProtocol("2.3"); // true
 * isCompatibleProtocol("1.0"); // false: MSP 1.0 sent whole items where 2.0 sends deltas
 * ```
 */
export function isCompatibleProtocol(hostVersion: string, ours: string = PROTOCOL_VERSION): boolean {
  const major = (v: string) => v.split(".")[0];
  return major(hostVersion) === major(ours);
}

/**
 * What is wrong with the subagent links of an MSP notification, or `undefined` when
 * they are well-formed or absent: a `turn/started`'s `parent` is `{sessionId, turnId, itemId}`
 * (non-empty strings) and comes with `depth`, a positive integer (and `depth` only with it); an
 * item's `subagent` (in `item/started`, `item/updated` or `item/completed`) is `{sessionId,
 * turnId}` (non-empty strings), on a `toolCall` only. Separate from
 * {@link problemWithNotification}, which the client's core runs on every notification, so the
 * core's bundle does not carry it; `checkTranscript` runs both.
 */
export function problemWithSubagentLinks(method: string, params: unknown): string | undefined {
  if (!isObject(params)) return undefined;
  if (method === Notifications.turnStarted) {
    const { parent, depth } = params;
    if (parent === undefined) return depth === undefined ? undefined : "depth is only for a child turn, with parent";
    const problem = problemWithLink("parent", parent, ["sessionId", "turnId", "itemId"]);
    if (problem !== undefined) return problem;
    return Number.isSafeInteger(depth) && (depth as number) >= 1 ? undefined : "a child turn's depth must be a positive integer (1 below a top-level turn)";
  }
  if (method !== Notifications.itemStarted && method !== Notifications.itemUpdated && method !== Notifications.itemCompleted) return undefined;
  const item = params["item"];
  if (!isObject(item) || item["subagent"] === undefined) return undefined;
  if (item["kind"] !== ItemKinds.toolCall) return `item.subagent is only for a toolCall, not a ${JSON.stringify(item["kind"])}`;
  return problemWithLink("item.subagent", item["subagent"], ["sessionId", "turnId"]);
}

/** `<name>` must be an object whose `names` are non-empty strings. */
function problemWithLink(name: string, link: unknown, names: readonly string[]): string | undefined {
  if (!isObject(link)) return `${name} must be {${names.join(", ")}}`;
  const missing = names.find((n) => typeof link[n] !== "string" || link[n] === "");
  return missing === undefined ? undefined : `${name}.${missing} must be a non-empty string`;
}
