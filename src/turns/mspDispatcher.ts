/**
 * MspDispatcher: what MSP makes of the messages the JSON-RPC endpoint hands on. It owns the
 * connection's state (the turn recorder, the item ledger, the open approvals, the session tracker)
 * and feeds each notification, in wire order, to the recorder, the ledger, the typed events and
 * last the user's one replace-only handler.
 */
import type { NotificationMessage, RequestMessage, ResponseMessage } from "vscode-jsonrpc";
import { MspError, MspErrorKinds, type ProtocolData } from "../errors.js";
import type { AcceptedHook } from "../internal/pendingCommands.js";
import { SafeEmitter } from "../internal/safeEmitter.js";
import {
  Commands,
  HostRequests,
  Notifications,
  PROTOCOL_VERSION,
  isCompatibleProtocol,
  isItem,
  problemWithNotification,
  problemWithToolApprove,
  type NotificationMethod,
  type NotificationParamsMap,
  type JsonValue,
  type ToolApproveParams,
  type ToolApproveResult,
  type TurnCompletedParams,
  type TurnStartedParams,
} from "@muse-code/protocol";
import { copyWith } from "@muse-code/protocol/itemFold.js";
import type { EndpointSink } from "../rpc/jsonRpcEndpoint.js";
import type { CloseInfo } from "../types/closeInfo.js";
import { Approvals, type ApprovalHandler, type TurnApprovals } from "./approvals.js";
import { DEFAULT_ITEMS_PER_TURN_CAPACITY, DEFAULT_ITEM_TURN_CAPACITY, ItemLedger, type TurnItems } from "./itemLedger.js";
import type { MspEventEmitter, MspEvents, MspNotification, NotificationHandler } from "./mspEvents.js";
import { DEFAULT_SESSION_CAPACITY, SessionTracker } from "./sessionTracker.js";
import { DEFAULT_TERMINAL_CAPACITY, TurnRecorder, type RecordedTurns } from "./turnRecorder.js";

/**
 * The capacities of the tables a client keeps: its memory is a function of these, not of what the
 * host sends. Each is at least 1.
 *
 * @example
 * ```ts
 * const capacities: TableCapacities = { terminalCapacity: 1_000, itemTurnCapacity: 100, sessionCapacity: 500 };
 * const client = connect(channel, capacities);
 * ```
 */
export interface TableCapacities {
  /**
   * How many turn terminals to retain, oldest recorded forgotten first; it also bounds the turns
   * the client remembers as its own (started, cancelled or seen), for the stray-terminal check.
   * @unit turns
   * @defaultValue 10 000
   * @example
   * ```ts
   * const client = connect(channel, { terminalCapacity: 100_000 }); // a long-lived client that looks terminals up late
   * ```
   */
  terminalCapacity?: number;
  /**
   * How many turns' items the ledger (`client.items`) retains, least recently touched forgotten first.
   * @unit turns
   * @defaultValue 1 000
   * @example
   * ```ts
   * const client = connect(channel, { itemTurnCapacity: 50 }); // a UI that shows the last 50 turns
   * ```
   */
  itemTurnCapacity?: number;
  /**
   * How many items the ledger retains per turn. Past it, the turn's earliest-finished item
   * (completed, failed or cancelled) is forgotten: like a terminal's scrollback, a long turn shows
   * its latest items. An item in progress is never forgotten; in the case no honest host makes,
   * every retained item in progress, a new item is not retained and a `protocolError` says so (its
   * notification is still delivered).
   * @unit items
   * @defaultValue 1 000
   * @example
   * ```ts
   * const client = connect(channel, { itemsPerTurnCapacity: 10_000 }); // agents whose turns run thousands of tool calls
   * ```
   */
  itemsPerTurnCapacity?: number;
  /**
   * How many sessions the client remembers: each one's last `viewCursor` (for the order check and
   * `lastViewCursor`) and whether it follows it. The least recently active is forgotten first: its
   * next notification is then taken as its first, and `lastViewCursor` returns `undefined` for it.
   * @unit sessions
   * @defaultValue 10 000 (about 1.3 MB at most)
   * @example
   * ```ts
   * const client = connect(channel, { sessionCapacity: 100_000 }); // one client multiplexing many sessions
   * ```
   */
  sessionCapacity?: number;
}

const CAPACITIES = ["terminalCapacity", "itemTurnCapacity", "itemsPerTurnCapacity", "sessionCapacity"] as const;

/** Throws the RangeError a capacity below 1 (or not a number) gets: callers check before they start anything. */
export function assertCapacities(options: TableCapacities): void {
  for (const name of CAPACITIES) {
    const value: unknown = options[name];
    if (value !== undefined && !(typeof value === "number" && value >= 1)) throw new RangeError(`${name} must be a number at least 1, got ${String(value)}`);
  }
}

/** What the dispatcher needs of the endpoint: answering the host's requests. */
export type ReplyTo = (id: number | string, body: { result: ToolApproveResult } | { error: { code: number; message: string } }) => void;

/** MSP's meaning of the endpoint's messages; see the module header. */
export class MspDispatcher implements EndpointSink {
  /** Typed events; subscribe with `events.on(name, listener)`. */
  readonly events: MspEventEmitter;
  /** Read-only views of the tables, frozen: they hold no way to the writers. */
  readonly turns: RecordedTurns;
  readonly items: TurnItems;
  readonly approvals: TurnApprovals;

  readonly #emitter: SafeEmitter<MspEvents>;
  readonly #turns: TurnRecorder;
  readonly #items: ItemLedger;
  readonly #approvals: Approvals;
  readonly #sessions: SessionTracker;
  readonly #reply: ReplyTo;
  #handler: NotificationHandler | undefined;
  #reportingHandlerError = false;

  constructor(options: TableCapacities & { defaultTimeoutMs: number }, reply: ReplyTo) {
    assertCapacities(options);
    this.#reply = reply;
    this.#emitter = new SafeEmitter<MspEvents>((error) => this.#reportHandlerError(error));
    this.events = this.#emitter;
    const terminalCapacity = options.terminalCapacity ?? DEFAULT_TERMINAL_CAPACITY;
    const turns = (this.#turns = new TurnRecorder({ capacity: terminalCapacity, defaultTimeoutMs: options.defaultTimeoutMs }));
    this.#sessions = new SessionTracker(turns, { knownTurnCapacity: terminalCapacity, sessionCapacity: options.sessionCapacity ?? DEFAULT_SESSION_CAPACITY });
    const items = (this.#items = new ItemLedger({
      turnCapacity: options.itemTurnCapacity ?? DEFAULT_ITEM_TURN_CAPACITY,
      itemsPerTurnCapacity: options.itemsPerTurnCapacity ?? DEFAULT_ITEMS_PER_TURN_CAPACITY,
    }));
    const approvals = (this.#approvals = new Approvals({
      answer: (id, result) => this.#reply(id, { result }),
      emit: (event, question, answer) => this.#emit(event, question, answer as ToolApproveResult),
    }));
    this.turns = Object.freeze({
      get: (turnId: string) => turns.get(turnId),
      terminalOf: (turnId: string, waitOptions?: Parameters<RecordedTurns["terminalOf"]>[1]) => turns.terminalOf(turnId, waitOptions),
      get waiterCount() {
        return turns.waiterCount;
      },
      get size() {
        return turns.size;
      },
    });
    this.items = Object.freeze({
      itemsOf: (turnId: string) => items.itemsOf(turnId),
      get: (turnId: string, itemId: string) => items.get(turnId, itemId),
      get turnCount() {
        return items.turnCount;
      },
    });
    this.approvals = Object.freeze({
      openOf: (turnId: string) => approvals.openOf(turnId),
      get size() {
        return approvals.size;
      },
    });
  }

  /** The user's single, replace-only notification handler. */
  set handler(handler: NotificationHandler | undefined) {
    this.#handler = handler;
  }

  /** The single, replace-only answerer of `tool/approve`. */
  set approvalHandler(handler: ApprovalHandler | undefined) {
    this.#approvals.handler = handler;
  }

  /** The last `viewCursor` seen for a session. */
  lastViewCursor(sessionId: string): string | undefined {
    return this.#sessions.lastViewCursor(sessionId);
  }

  /**
   * A command is about to go out: the sessions and turns it names are followed, and what must
   * run when the host accepts it is returned (a resume's replay point).
   */
  noteCommand(method: string, params: Record<string, unknown>, commandId: string): AcceptedHook | undefined {
    const accepted = this.#sessions.noteCommand(method, params, commandId);
    if (method === Commands.hostInfo) return (result) => refuseVersion(result["protocolVersion"]);
    if (method !== Commands.sessionResume) return accepted;
    return (result) => {
      accepted?.(result);
      // The items in progress at the resume point, whole: the base of the replay's deltas.
      const items = result["items"];
      if (Array.isArray(items)) for (const item of items) if (isItem(item)) this.#items.apply(Notifications.itemStarted, { item });
    };
  }

  /**
   * A command is being written: a Stop answers its turn's open questions `cancelled` before the
   * host reads the cancel, and every later question of that turn too (a Stop is final).
   */
  beforeWrite(method: string, params: Record<string, unknown>): void {
    if (method === Commands.turnCancel) this.#approvals.closeTurn(String(params["turnId"]), false);
  }

  onRequest(message: RequestMessage): boolean {
    if (message.method !== HostRequests.toolApprove) return false;
    const id = message.id as number | string;
    const request = message.params as ToolApproveParams;
    const invalid = problemWithToolApprove(request);
    const problem = invalid === undefined ? this.#approvals.ask(id, request, this.#turns.get(request.turnId) !== undefined) : `tool/approve: ${invalid}`;
    if (invalid !== undefined) this.#reply(id, { error: { code: -32602, message: `Invalid params: ${invalid}` } });
    if (problem !== undefined) this.onProblem(problem, message);
    return true;
  }

  onNotification(message: NotificationMessage): void {
    const { method } = message;
    const params = message.params as Record<string, unknown> | undefined;
    const problem = problemWithNotification(method, params);
    if (problem !== undefined) return this.onProblem(`${method}: ${problem}`, message);
    const admission = this.#sessions.admit(method, params);
    // A stray terminal is reported, but still recorded: a waiter must never miss a terminal.
    if (admission.problem !== undefined) this.onProblem(admission.problem, message);
    if (!admission.deliver) return;
    // The params were checked above: each cast below names the shape that check proved.
    if (method === Notifications.turnCompleted) {
      const terminal = params as unknown as TurnCompletedParams;
      if (!this.#turns.record(terminal)) return this.onProblem(`a second turn/completed for turn ${terminal.turnId}`, message);
      const synthesized = this.#items.closeTurn(terminal.turnId);
      this.#approvals.closeTurn(terminal.turnId, true);
      for (const item of synthesized) this.#emit("itemSynthesized", item);
      this.#emit(method, terminal);
    } else if (method === Notifications.turnStarted) this.#emit(method, params as unknown as TurnStartedParams);
    else if (ITEM_METHODS.has(method)) {
      // Folded into the whole item: the typed events give it whole; the raw notification (below)
      // is what the wire carried. What cannot be applied is reported, never applied wrong.
      const { item, problem } = this.#items.apply(method, params as Record<string, unknown>);
      if (problem !== undefined) this.onProblem(problem, message);
      if (item !== undefined) {
        this.#approvals.noteItem(item);
        this.#emit(method, copyWith<NotificationParamsMap[ItemMethod] & { item: typeof item }>(params as Record<string, unknown>, { item }));
      }
    }
    const emittedAtMs = (message as { emittedAtMs?: unknown }).emittedAtMs;
    const notification: MspNotification = typeof emittedAtMs === "number" ? { method, params, emittedAtMs } : { method, params };
    this.#emit("notification", notification);
    const handler = this.#handler;
    if (handler !== undefined)
      try {
        handler(notification);
      } catch (error) {
        this.#reportHandlerError(error);
      }
  }

  onProblem(problem: string, offending?: unknown): void {
    const data: ProtocolData = { problem };
    if (offending !== undefined) data.message = offending as JsonValue;
    this.#emit("protocolError", new MspError(MspErrorKinds.protocol, `protocol error: ${problem}`, data));
  }

  onLateResponse(id: number, method: string, response: ResponseMessage): void {
    this.#emit("lateResponse", { id, method, response: response as unknown as JsonValue });
  }

  onClosing(): void {
    this.#approvals.withdraw(undefined, "connection closed");
  }

  onRequestsClosed(error: MspError<"connectionClosed">): void {
    this.#turns.closeAll(error);
    // Forget what only serves a live connection. Recorded terminals and the last cursors stay
    // readable (each bounded by its capacity): recovery after a crash reads them.
    this.#items.clear();
    this.#sessions.close();
  }

  onClosed(info: CloseInfo): void {
    this.#emit("close", info);
    this.#emitter.removeAllListeners();
    this.#handler = undefined;
  }

  /** Emit an event: the emitter reports whatever a listener throws (to `#reportHandlerError`), never throws it. */
  #emit<E extends keyof MspEvents>(event: E, ...args: MspEvents[E]): void {
    this.#emitter.emit(event, ...args);
  }

  /** A listener or the user's handler threw: tell `handlerError` listeners, else the console. */
  #reportHandlerError(error: unknown): void {
    if (!this.#reportingHandlerError && this.#emitter.listenerCount("handlerError") > 0) {
      this.#reportingHandlerError = true;
      try {
        this.#emitter.emit("handlerError", error);
        return;
      } finally {
        this.#reportingHandlerError = false;
      }
    }
    console.error("@muse-code/sdk: a notification handler threw", error);
  }
}

/**
 * The error that refuses a host whose `protocolVersion` this SDK cannot follow (another major),
 * naming both versions; `undefined` for one it can, or for a result that states no version.
 */
function refuseVersion(version: unknown): MspError<"protocol"> | undefined {
  if (typeof version !== "string" || isCompatibleProtocol(version)) return undefined;
  const hostVersion = version;
  const problem = `the host speaks MSP ${hostVersion}; this SDK speaks MSP ${PROTOCOL_VERSION}`;
  return new MspError(MspErrorKinds.protocol, `protocol error: ${problem}`, { problem, hostVersion, sdkVersion: PROTOCOL_VERSION });
}

/** The notifications folded into the ledger, whose typed events give the whole item. */
type ItemMethod = Extract<NotificationMethod, `item/${string}`>;

/** A set of method names whose `has` narrows a name to them. */
interface MethodSet<M extends string> extends ReadonlySet<string> {
  has(method: string): method is M;
}

// A Set: `in` on an object with a method name fresh from JSON.parse costs a string-table lookup a notification.
const ITEM_METHODS = new Set<string>([
  Notifications.itemStarted,
  Notifications.itemDelta,
  Notifications.itemUpdated,
  Notifications.itemCompleted,
]) as ReadonlySet<string> as MethodSet<ItemMethod>;
