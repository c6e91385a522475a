/**
 * Where a session is kept across reloads: any Web-Storage-like object (`sessionStorage`,
 * `localStorage`, `fileStorage(path)` from `@muse-code/sdk/node`, or memory by default), and what
 * is kept: the session id, the last cursor, the turns shown at that cursor and the pending Stops,
 * which describe one moment. How it is laid out over the storage's keys is `SessionKeeper`'s.
 */
import {
  isItem,
  isTurnCompleted,
  problemWithToolApprove,
  type ApprovalDecision,
  type ChildCursors,
  type Item,
  type ToolApproveParams,
  type TurnCompletedParams,
  type TurnInput,
} from "@muse-code/protocol";
import { isObject } from "@muse-code/protocol/guards.js";
import type { KeptModel } from "./sessionModelChoice.js";
import type { KeptTreeTurn } from "./sessionTree.js";

/**
 * The part of the Web Storage API a session uses. `sessionStorage` and `localStorage` are one;
 * `fileStorage(path)` from `@muse-code/sdk/node` is one backed by a file.
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 * const storage: KeyValueStorage = window.sessionStorage;
 * const chat = await openSession({ connect: () => connectWebSocket(url, { token }), storage });
 * ```
 */
export interface KeyValueStorage {
  /** The value kept under `key`, or null when there is none. */
  getItem(key: string): string | null;
  /** Keep `value` under `key`; may throw (a full quota): the session then goes on in memory. */
  setItem(key: string, value: string): void;
  /** Forget `key`. */
  removeItem(key: string): void;
}

/**
 * A {@link KeyValueStorage} in memory: the default, gone with the process or page.
 *
 * @example
 * ```ts
 * const storage = memoryStorage();
 * storage.setItem("k", "v");
 * console.log(storage.getItem("k")); // "v"
 * ```
 */
export function memoryStorage(): KeyValueStorage {
  const values = new Map<string, string>();
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, String(value)),
    removeItem: (key) => void values.delete(key),
  };
}

/** A turn as kept across a reload. */
export interface KeptTurn {
  turnId: string;
  input?: TurnInput[];
  /** Phase before the reload: `starting`, `queued`, `running`, `ended` or `unknown`. */
  phase: KeptPhase;
  items: Item[];
  droppedItems: number;
  terminal?: TurnCompletedParams;
  stopRequested: boolean;
  /** The commandId of the turn's `turn/cancel`, once one was made: a retry after a drop reuses it, so the host sees one cancel. */
  cancelCommandId?: string;
  unknownReason?: string;
  /** Questions open when it was written: shown again after a reload until the host asks again or withdraws them. */
  approvals?: KeptApproval[];
}

/** An open question as kept across a reload, with the answer given while it was not live. */
export interface KeptApproval {
  request: ToolApproveParams;
  answered?: ApprovalDecision;
  reason?: string;
  subagent?: { sessionId: string; depth: number };
}

const DECISIONS: readonly unknown[] = ["approve", "approveForSession", "deny", "denyAndStop", "cancelled"];

/** The phases a kept turn can have (the shown ones `stopping` and `reconnecting` are derived). */
export type KeptPhase = "starting" | "queued" | "running" | "ended" | "unknown";

/** Everything kept: one moment of the session. */
export interface KeptSession {
  sessionId?: string;
  /** The last `viewCursor` seen when `turns` were written; absent: resume replays the whole session. */
  cursor?: string;
  turns: KeptTurn[];
  /** The last `viewCursor` seen of each subagent session below, written with `cursor`. */
  childCursors?: ChildCursors;
  /** The subagent turns below the turns, parents first. */
  tree?: KeptTreeTurn[];
  /** The session's model, and a `setModel` not yet accepted. */
  model?: KeptModel;
}

const PHASES: readonly string[] = ["starting", "queued", "running", "ended", "unknown"];

/**
 * A kept session as stored (either layout's document, its turns' items put back), checked shape by shape: anything unexpected is dropped, not trusted.
 *
 * @example
 * ```ts
 * const kept = parseKept(JSON.parse(storage.getItem("msp:chat") ?? "{}"));
 * ```
 */
export function parseKept(raw: unknown): KeptSession {
  if (typeof raw !== "object" || raw === null) return { turns: [] };
  const { sessionId, cursor, turns } = raw as Record<string, unknown>;
  const kept: KeptSession = { turns: [] };
  if (typeof sessionId === "string" && sessionId !== "") kept.sessionId = sessionId;
  if (typeof cursor === "string" && cursor !== "") kept.cursor = cursor;
  const { childCursors, tree } = raw as Record<string, unknown>;
  if (isObject(childCursors)) {
    const cursors = Object.entries(childCursors).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "");
    if (cursors.length > 0) kept.childCursors = Object.fromEntries(cursors);
  }
  if (Array.isArray(tree)) kept.tree = tree.filter(isKeptTreeTurn);
  const model = parseKeptModel((raw as Record<string, unknown>)["model"]);
  if (model !== undefined) kept.model = model;
  if (!Array.isArray(turns)) return kept;
  for (const turn of turns) {
    if (typeof turn !== "object" || turn === null) continue;
    const t = turn as Record<string, unknown>;
    if (typeof t["turnId"] !== "string" || typeof t["phase"] !== "string" || !PHASES.includes(t["phase"]) || !Array.isArray(t["items"])) continue;
    const one: KeptTurn = {
      turnId: t["turnId"],
      phase: t["phase"] as KeptPhase,
      items: (t["items"] as unknown[]).filter(isItem),
      droppedItems: typeof t["droppedItems"] === "number" && t["droppedItems"] >= 0 ? t["droppedItems"] : 0,
      stopRequested: t["stopRequested"] === true,
    };
    if (Array.isArray(t["input"])) one.input = (t["input"] as unknown[]).filter(isTextInput);
    if (isTurnCompleted(t["terminal"])) one.terminal = t["terminal"];
    if (typeof t["cancelCommandId"] === "string") one.cancelCommandId = t["cancelCommandId"];
    if (typeof t["unknownReason"] === "string") one.unknownReason = t["unknownReason"];
    if (Array.isArray(t["approvals"])) {
      const approvals = (t["approvals"] as unknown[]).filter((a): a is KeptApproval => isKeptApproval(a, one.turnId));
      if (approvals.length > 0) one.approvals = approvals;
    }
    kept.turns.push(one);
  }
  return kept;
}

function parseKeptModel(raw: unknown): KeptModel | undefined {
  if (!isObject(raw)) return undefined;
  const model: KeptModel = {};
  if (typeof raw["current"] === "string" && raw["current"] !== "") model.current = raw["current"];
  if (typeof raw["requested"] === "string" && raw["requested"] !== "" && typeof raw["commandId"] === "string") {
    model.requested = raw["requested"];
    model.commandId = raw["commandId"];
  }
  return Object.keys(model).length === 0 ? undefined : model;
}

function isKeptApproval(value: unknown, turnId: string): boolean {
  if (!isObject(value) || problemWithToolApprove(value["request"]) !== undefined) return false;
  if (value["answered"] !== undefined && !DECISIONS.includes(value["answered"])) return false;
  if (value["reason"] !== undefined && typeof value["reason"] !== "string") return false;
  const subagent = value["subagent"];
  if (subagent === undefined) return (value["request"] as ToolApproveParams).turnId === turnId;
  return isObject(subagent) && typeof subagent["sessionId"] === "string" && Number.isSafeInteger(subagent["depth"]) && (subagent["depth"] as number) >= 1;
}

const TREE_STATES: readonly unknown[] = ["linked", "running", "ended"];

function isKeptTreeTurn(value: unknown): value is KeptTreeTurn {
  if (!isObject(value) || !isObject(value["parent"])) return false;
  const parent = value["parent"];
  const strings = [value["turnId"], value["sessionId"], parent["sessionId"], parent["turnId"], parent["itemId"]];
  if (!strings.every((s) => typeof s === "string" && s !== "")) return false;
  if (!Number.isSafeInteger(value["depth"]) || (value["depth"] as number) < 1 || !TREE_STATES.includes(value["state"])) return false;
  const terminal = value["terminal"];
  // An ended turn without its terminal would come back running forever: not trusted.
  if (terminal === undefined) return value["state"] !== "ended";
  return isObject(terminal) && typeof terminal["terminal"] === "string" && typeof terminal["reason"] === "string";
}

function isTextInput(value: unknown): value is TurnInput {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<string, unknown>)["type"] === "text" &&
    typeof (value as Record<string, unknown>)["text"] === "string"
  );
}
