/**
 * The session's turns, in order: each with its items at their latest revision, its phase, its
 * terminal and its open questions. Notifications and acks only move a turn forward; only a
 * `turn/completed` ends it. Bounded: at most `maxTurns` turns (ended ones are dropped first) and
 * `maxItems` items per turn (the oldest finished ones are dropped, and counted). Each turn's
 * frozen view is rebuilt only when that turn changed.
 */
import type { ApprovalDecision, Item, ToolApproveParams, TurnCompletedParams, TurnInput } from "@muse-code/protocol";
import { offeredDecisions } from "@muse-code/protocol/approvalOffer.js";
import type { SessionApproval, SessionConnectionState, SessionStopState, SessionTurn, SessionTurnPhase } from "./sessionSnapshot.js";
import type { KeptApproval, KeptPhase, KeptTurn } from "./sessionStorage.js";
import type { TreeProgress, TreeTurn } from "../ui/turnTree.js";

/** The subagent turns below a turn, and their counts (from the session's tree). */
export type TurnsBelow = (turnId: string) => { turns: readonly TreeTurn[]; progress: TreeProgress };

/** One open question of a turn as the session holds it (its view is {@link SessionApproval}). */
export interface TurnQuestion {
  request: ToolApproveParams;
  /** Asked on the current connection, with `reply` its answerer. */
  live: boolean;
  /** The answer given while it was not live: sent when the host asks again. */
  answered?: ApprovalDecision;
  reason?: string;
  reply?: (decision: ApprovalDecision, reason?: string) => void;
  /** Asked by a subagent below the turn: its session, and how deep. */
  subagent?: { sessionId: string; depth: number };
}

/** One turn as the session holds it (mutable; its view is {@link SessionTurn}). */
export interface TurnState {
  readonly turnId: string;
  input: TurnInput[] | undefined;
  phase: KeptPhase;
  readonly items: Map<string, Item>;
  droppedItems: number;
  terminal: TurnCompletedParams | undefined;
  /** Open questions by itemId. */
  readonly approvals: Map<string, TurnQuestion>;
  /** Items whose question a Stop of this turn answered `cancelled` (an answer the app gives later does not stand). */
  readonly stoppedQuestions: Set<string>;
  stopRequested: boolean;
  cancelCommandId: string | undefined;
  /** The host accepted this turn's `turn/cancel` (no retry needed). */
  cancelAccepted: boolean;
  /** The client a `turn/start` of this turn is in flight on (a Stop waits for its ack). */
  startPendingOn: object | undefined;
  /** The client a `turn/cancel` of this turn is in flight on (one at a time). */
  cancelPendingOn: object | undefined;
  unknownReason: string | undefined;
  /** The view last built, and whether it is stale. */
  view: SessionTurn | undefined;
  viewConnection: SessionConnectionState | undefined;
}

const ORDER: Record<KeptPhase, number> = { starting: 0, queued: 1, running: 2, ended: 3, unknown: 3 };

/** The turns of one session, oldest first. */
export class SessionTurns {
  readonly #turns = new Map<string, TurnState>();
  readonly #maxTurns: number;
  readonly #maxItems: number;
  readonly #below: TurnsBelow;

  /** `below` gives a turn's subagent turns (none by default). */
  constructor(maxTurns: number, maxItems: number, below: TurnsBelow = () => ({ turns: [], progress: { started: 0, ended: 0, running: 0 } })) {
    this.#maxTurns = maxTurns;
    this.#maxItems = maxItems;
    this.#below = below;
  }

  get(turnId: string): TurnState | undefined {
    return this.#turns.get(turnId);
  }

  all(): TurnState[] {
    return [...this.#turns.values()];
  }

  /** The turn, added if new (then the oldest ended turns beyond the bound are dropped). */
  ensure(turnId: string, input?: TurnInput[]): TurnState {
    let turn = this.#turns.get(turnId);
    if (turn === undefined) {
      turn = {
        turnId,
        input,
        phase: "starting",
        items: new Map(),
        droppedItems: 0,
        terminal: undefined,
        approvals: new Map(),
        stoppedQuestions: new Set(),
        stopRequested: false,
        cancelCommandId: undefined,
        cancelAccepted: false,
        startPendingOn: undefined,
        cancelPendingOn: undefined,
        unknownReason: undefined,
        view: undefined,
        viewConnection: undefined,
      };
      this.#turns.set(turnId, turn);
      this.#trim();
    } else if (input !== undefined && turn.input === undefined) {
      turn.input = input;
    }
    return turn;
  }

  /** Restore a kept turn (before any connection). */
  restore(kept: KeptTurn): void {
    const turn = this.ensure(kept.turnId, kept.input);
    turn.phase = kept.phase;
    for (const item of kept.items) turn.items.set(item.itemId, item);
    turn.droppedItems = kept.droppedItems;
    turn.terminal = kept.terminal;
    turn.stopRequested = kept.stopRequested;
    turn.cancelCommandId = kept.cancelCommandId;
    turn.unknownReason = kept.unknownReason;
    for (const question of kept.approvals ?? []) {
      const { request, answered, reason, subagent } = question;
      turn.approvals.set(request.itemId, {
        request,
        live: false,
        ...(answered === undefined ? {} : { answered }),
        ...(reason === undefined ? {} : { reason }),
        ...(subagent === undefined ? {} : { subagent }),
      });
    }
  }

  /** A toolCall the host finished or moved off `pending` has no question left: a kept one (not live) goes. Returns true on a change. */
  dropSettledQuestion(item: Item): boolean {
    if (item.kind !== "toolCall" || (item.status === "inProgress" && (item.approval ?? "pending") === "pending")) return false;
    for (const turn of this.unended()) {
      const question = turn.approvals.get(item.itemId);
      if (question === undefined || question.live || question.request.turnId !== item.turnId) continue;
      turn.approvals.delete(item.itemId);
      return touch(turn);
    }
    return false;
  }

  /** Move forward to `phase` (never back; never out of `ended` or `unknown`, except `ended` by a terminal). Returns true on a change. */
  advance(turnId: string, phase: "queued" | "running"): boolean {
    const turn = this.ensure(turnId);
    if (ORDER[phase] <= ORDER[turn.phase]) return false;
    turn.phase = phase;
    return touch(turn);
  }

  /** A whole item at its revision: kept when newer than the one held. Returns true on a change. */
  putItem(item: Item): boolean {
    const turn = this.ensure(item.turnId);
    if (turn.phase === "ended" && turn.terminal !== undefined && !turn.items.has(item.itemId)) return false; // nothing follows a terminal
    const held = turn.items.get(item.itemId);
    if (held !== undefined && held.revision >= item.revision) return false;
    turn.items.set(item.itemId, item);
    if (turn.phase === "starting" || turn.phase === "queued") turn.phase = "running";
    if (turn.items.size > this.#maxItems) this.#dropItems(turn);
    return touch(turn);
  }

  /** The turn's own terminal: it is over, whatever it showed before (`unknown` included: the host has the last word). */
  end(terminal: TurnCompletedParams): boolean {
    const turn = this.ensure(terminal.turnId);
    if (turn.terminal !== undefined) return false;
    turn.terminal = terminal;
    turn.phase = "ended";
    turn.unknownReason = undefined;
    turn.approvals.clear();
    this.#trim();
    return touch(turn);
  }

  /** The session gave up on every unended turn: their outcome is not known. */
  markUnknown(reason: string): boolean {
    let changed = false;
    for (const turn of this.#turns.values()) {
      if (turn.phase === "ended" || turn.phase === "unknown") continue;
      turn.phase = "unknown";
      turn.unknownReason = reason;
      turn.approvals.clear();
      changed = touch(turn);
    }
    return changed;
  }

  /** The turns not ended (and not given up), oldest first. */
  unended(): TurnState[] {
    return this.all().filter((turn) => turn.phase !== "ended" && turn.phase !== "unknown");
  }

  /** The turn's frozen view, rebuilt only when it changed or the connection's state did. */
  view(turn: TurnState, connection: SessionConnectionState): SessionTurn {
    if (turn.view !== undefined && turn.viewConnection === connection) return turn.view;
    const online = connection === "open";
    const withdrawing = turn.stopRequested;
    const approvals: SessionApproval[] = [...turn.approvals.values()].map(({ request, live, answered, subagent }) =>
      Object.freeze({
        turnId: request.turnId,
        itemId: request.itemId,
        callId: request.callId,
        tool: request.tool,
        args: request.args,
        decisions: offeredDecisions(request),
        ...(request.grant === undefined ? {} : { grant: request.grant }),
        live: live && online && !withdrawing,
        ...(withdrawing ? { answered: "cancelled" as const, withdrawing: true as const } : answered === undefined ? {} : { answered }),
        ...(subagent === undefined ? {} : { subagent: Object.freeze({ ...subagent }) }),
      }),
    );
    const below = this.#below(turn.turnId);
    const view: SessionTurn = Object.freeze({
      turnId: turn.turnId,
      ...(turn.input === undefined ? {} : { input: Object.freeze([...turn.input]) }),
      phase: shownPhase(turn, connection),
      items: Object.freeze([...turn.items.values()]),
      droppedItems: turn.droppedItems,
      ...(turn.terminal === undefined ? {} : { terminal: turn.terminal }),
      approvals: Object.freeze(approvals),
      stopRequested: turn.stopRequested,
      ...(turn.stopRequested ? { stopState: stopStateOf(turn) } : {}),
      subagents: below.turns,
      subagentProgress: below.progress,
      ...(turn.unknownReason === undefined ? {} : { unknownReason: turn.unknownReason }),
    });
    turn.view = view;
    turn.viewConnection = connection;
    return view;
  }

  /** The kept form of every turn. */
  kept(): KeptTurn[] {
    return this.all().map((turn) => {
      const kept: KeptTurn = {
        turnId: turn.turnId,
        phase: turn.phase,
        items: [...turn.items.values()],
        droppedItems: turn.droppedItems,
        stopRequested: turn.stopRequested,
      };
      if (turn.input !== undefined) kept.input = turn.input;
      if (turn.terminal !== undefined) kept.terminal = turn.terminal;
      if (turn.cancelCommandId !== undefined && turn.phase !== "ended") kept.cancelCommandId = turn.cancelCommandId;
      if (turn.unknownReason !== undefined) kept.unknownReason = turn.unknownReason;
      if (turn.approvals.size > 0 && turn.phase !== "ended" && turn.phase !== "unknown") kept.approvals = [...turn.approvals.values()].map(keptApproval);
      return kept;
    });
  }

  /** Drop the oldest finished items beyond the bound (an unfinished one is never dropped: its updates would have nowhere to go). */
  #dropItems(turn: TurnState): void {
    for (const [itemId, item] of turn.items) {
      if (turn.items.size <= this.#maxItems) return;
      if (item.status === "inProgress") continue;
      turn.items.delete(itemId);
      turn.droppedItems++;
    }
  }

  /** Drop the oldest ended turns beyond the bound (an unended turn is never dropped: Stop must reach it). */
  #trim(): void {
    for (const [turnId, turn] of this.#turns) {
      if (this.#turns.size <= this.#maxTurns) return;
      if (turn.phase === "ended" || turn.phase === "unknown") this.#turns.delete(turnId);
    }
  }
}

function keptApproval(question: TurnQuestion): KeptApproval {
  const kept: KeptApproval = { request: question.request };
  if (question.answered !== undefined) kept.answered = question.answered;
  if (question.reason !== undefined) kept.reason = question.reason;
  if (question.subagent !== undefined) kept.subagent = question.subagent;
  return kept;
}

/** Where the turn's pressed Stop is: accepted by the host, on the wire, or kept for the connection. */
function stopStateOf(turn: TurnState): SessionStopState {
  if (turn.cancelAccepted) return "accepted";
  return turn.cancelPendingOn === undefined ? "kept" : "sent";
}

/** Mark the turn's view stale; returns true (a change). */
export function touch(turn: TurnState): true {
  turn.view = undefined;
  return true;
}

function shownPhase(turn: TurnState, connection: SessionConnectionState): SessionTurnPhase {
  if (turn.phase === "ended" || turn.phase === "unknown") return turn.phase;
  if (turn.stopRequested) return "stopping";
  // Gave up (or not yet connected): a turn started since has not been sent; it goes with the next attempt.
  if (connection === "closed" || connection === "connecting") return turn.phase === "starting" ? "starting" : "reconnecting";
  if (connection === "reconnecting") return "reconnecting";
  return turn.phase;
}
