/**
 * SessionTree: the subagent tree below a session's turns, as the session layer keeps
 * it across connections and reloads. It learns the session's descendant sessions from the links
 * (a tool call's `subagent` patch, a child turn's `parent`), recursively and bounded; folds their
 * notifications into a {@link TurnTree}; keeps one cursor per descendant session (what
 * `session/resume.childCursors` sends); and says which of the session's own turns a child turn
 * sits below, so its questions and its progress show on that turn.
 */
import { MspError } from "../errors.js";
import { isObject, problemWithNotification, problemWithSubagentLinks } from "@muse-code/protocol/guards.js";
import type { ChildCursors, Item, ParentTurnLink, TurnCompletedParams } from "@muse-code/protocol";
import { TurnTree, type TreeProgress, type TreeTurn } from "../ui/turnTree.js";

/** A child turn as kept across a reload: enough to place it in the tree again. */
export interface KeptTreeTurn {
  turnId: string;
  sessionId: string;
  parent: ParentTurnLink;
  depth: number;
  /** `linked` (named by its parent's tool call, not started yet), `running` or `ended`. */
  state: "linked" | "running" | "ended";
  terminal?: Pick<TurnCompletedParams, "terminal" | "reason" | "cause" | "usage">;
}

/** What a {@link SessionTree} keeps across a reload. */
export interface KeptTree {
  /** The last `viewCursor` seen of each descendant session. */
  childCursors: ChildCursors;
  /** The child turns below the session's turns, each after its parent. */
  turns: KeptTreeTurn[];
}

/** What a notification did to the tree. */
export interface TreeChange {
  /** It was of a descendant session (so the session's own turns, items and cursor are not its business). */
  child: boolean;
  /** It changed the tree: the session's own turn it sits below (to show again), or `true` when that turn is not known. */
  changed: string | boolean;
}

/** The counts of an empty tree, shared. */
const NO_PROGRESS: TreeProgress = Object.freeze({ started: 0, ended: 0, running: 0 });
const NO_TURNS: readonly TreeTurn[] = Object.freeze([]);

/** The descendant sessions and child turns below one session's turns. */
export class SessionTree {
  #tree: TurnTree;
  readonly #maxSessions: number;
  readonly #maxTurns: number;
  readonly #onWarning: (message: string) => void;
  /** Descendant sessions, oldest first: their depth below the session, and the last cursor seen of each. */
  readonly #sessions = new Map<string, { depth: number; cursor?: string; turns: Set<string> }>();
  #warnedBound = false;

  /** `maxSessions`: descendant sessions followed at once (past it the oldest ended one is forgotten; a running one only when all run). @unit sessions */
  constructor(maxSessions: number, maxTurns: number, onWarning: (message: string) => void) {
    this.#maxSessions = maxSessions;
    this.#maxTurns = maxTurns + maxSessions;
    this.#tree = new TurnTree({ maxTurns: this.#maxTurns });
    this.#onWarning = onWarning;
  }

  /** Whether `sessionId` is a descendant session this tree follows. */
  isChild(sessionId: string): boolean {
    return this.#sessions.has(sessionId);
  }

  /** The depth of a descendant session below the session (1 for a child), or undefined. @unit levels */
  depthOf(sessionId: string): number | undefined {
    return this.#sessions.get(sessionId)?.depth;
  }

  /** The cursors to resume the descendant sessions from: one per session that has one. */
  childCursors(): ChildCursors {
    const cursors: ChildCursors = {};
    for (const [sessionId, { cursor }] of this.#sessions) if (cursor !== undefined) cursors[sessionId] = cursor;
    return cursors;
  }

  /** Forget every descendant session's cursor (a resume that replays them whole). */
  dropCursors(): void {
    for (const entry of this.#sessions.values()) delete entry.cursor;
  }

  /** Forget every descendant session, cursor and child turn (the host no longer knows the session they were below). */
  reset(): void {
    this.#tree = new TurnTree({ maxTurns: this.#maxTurns });
    this.#sessions.clear();
    this.#warnedBound = false;
  }

  /**
   * Where a turn of a descendant session sits, as the tree holds it, even when its session is no
   * longer followed (past the bound): the session's own turn it runs below, and its depth. Undefined
   * when the tree does not hold `turnId` as a turn of `sessionId`.
   */
  placeOf(sessionId: string, turnId: string): { root: string; depth: number } | undefined {
    const turn = this.#tree.turn(turnId);
    if (turn === undefined || turn.sessionId !== sessionId || turn.parent === undefined) return undefined;
    const root = this.rootOf(turnId);
    return root === undefined ? undefined : { root, depth: turn.depth };
  }

  /**
   * Fold one notification of the session (`own`) or of a descendant in: links make descendant
   * sessions known (before anything of theirs comes, as the wire orders it), a descendant's cursor
   * moves on. Anything of another session is not this tree's.
   */
  observe(own: string | undefined, notification: { method: string; params?: unknown }): TreeChange {
    const params = notification.params;
    if (!isObject(params) || typeof params["sessionId"] !== "string") return { child: false, changed: false };
    const sessionId = params["sessionId"];
    const depth = sessionId === own ? 0 : this.#sessions.get(sessionId)?.depth;
    if (depth === undefined) {
      // A child turn's turn/started names its parent: a session heard of before its link (the link was not replayed).
      const parent = params["parent"];
      const above = isObject(parent) && typeof parent["sessionId"] === "string" ? parent["sessionId"] : undefined;
      const aboveDepth = above === own ? 0 : above === undefined ? undefined : this.#sessions.get(above)?.depth;
      if (notification.method === "turn/started" && aboveDepth !== undefined) {
        this.#follow(sessionId, aboveDepth + 1);
        return this.observe(own, notification);
      }
      // A session no longer followed (past the bound) whose turn the tree still holds: its end still counts (never shown running forever).
      return this.#observeForgotten(sessionId, notification);
    }
    const entry = this.#sessions.get(sessionId);
    if (entry !== undefined && typeof params["viewCursor"] === "string" && params["viewCursor"] !== "") entry.cursor = params["viewCursor"];
    if (entry !== undefined && typeof params["turnId"] === "string") entry.turns.add(params["turnId"]);
    const item = params["item"];
    const link = isObject(item) ? item["subagent"] : undefined;
    if (isObject(link) && typeof link["sessionId"] === "string") {
      this.#follow(link["sessionId"], depth + 1);
      if (typeof link["turnId"] === "string") this.#sessions.get(link["sessionId"])?.turns.add(link["turnId"]);
    }
    let changed: boolean;
    try {
      changed = this.#tree.observe(notification);
    } catch (error) {
      if (!MspError.is(error)) throw error;
      this.#onWarning(`a subagent link was refused: ${error.message}`);
      return { child: entry !== undefined, changed: false };
    }
    if (!changed) return { child: entry !== undefined, changed: false };
    const turnId = isObject(link) && typeof link["turnId"] === "string" ? link["turnId"] : typeof params["turnId"] === "string" ? params["turnId"] : undefined;
    return { child: entry !== undefined, changed: (turnId === undefined ? undefined : this.rootOf(turnId)) ?? true };
  }

  /** An item the resume's answer listed as in progress: its links count, if its turn is a child turn (else undefined: not the tree's). */
  observeItem(item: Item): TreeChange | undefined {
    const sessionId = this.#tree.turn(item.turnId)?.sessionId;
    if (sessionId === undefined || !this.#sessions.has(sessionId)) return undefined;
    // No cursor is moved by it: a resume's item carries none (an empty cursor is never kept).
    return this.observe(undefined, { method: "item/updated", params: { sessionId, viewCursor: "", item } });
  }

  /** The top of the tree `turnId` sits in: one of the session's own turns (or `turnId` itself when it has no parent the tree knows). */
  rootOf(turnId: string): string | undefined {
    let at = this.#tree.turn(turnId);
    if (at === undefined) return undefined;
    for (let hops = 0; hops <= this.#tree.size && at.parent !== undefined; hops++) {
      const up = this.#tree.turn(at.parent.turnId);
      if (up === undefined) return at.parent.turnId;
      at = up;
    }
    return at.turnId;
  }

  /** Every turn below `turnId`, depth-first (frozen), and their counts. */
  below(turnId: string): { turns: readonly TreeTurn[]; progress: TreeProgress } {
    const turns = this.#tree.descendantsOf(turnId);
    if (turns.length === 0) return { turns: NO_TURNS, progress: NO_PROGRESS };
    return { turns: Object.freeze(turns.map(freezeTurn)), progress: Object.freeze(this.#tree.progressOf(turnId)) };
  }

  /** The kept form: the descendant sessions' cursors, and every child turn below `roots` (the session's own turns), parents first. */
  kept(roots: readonly string[]): KeptTree {
    const turns: KeptTreeTurn[] = [];
    for (const root of roots) {
      for (const turn of this.#tree.descendantsOf(root)) {
        if (turn.parent === undefined || turn.sessionId === undefined) continue;
        const kept: KeptTreeTurn = { turnId: turn.turnId, sessionId: turn.sessionId, parent: turn.parent, depth: turn.depth, state: turn.state };
        if (turn.terminal !== undefined) kept.terminal = turn.terminal;
        turns.push(kept);
      }
    }
    return { childCursors: this.childCursors(), turns };
  }

  /** Place kept child turns (parents first) and cursors again, before any connection. */
  restore(own: string, kept: KeptTree): void {
    for (const turn of kept.turns) {
      const depth = turn.parent.sessionId === own ? 0 : this.#sessions.get(turn.parent.sessionId)?.depth;
      if (depth === undefined) continue;
      // The notifications that placed it, as they came: the link, its start, its end; all of them checked before any is applied.
      const viewCursor = "";
      const item = {
        itemId: turn.parent.itemId,
        turnId: turn.parent.turnId,
        kind: "toolCall",
        revision: 0,
        subagent: { sessionId: turn.sessionId, turnId: turn.turnId },
      };
      const placed: Array<{ method: string; params: Record<string, unknown> }> = [
        { method: "item/updated", params: { sessionId: turn.parent.sessionId, viewCursor, item } },
      ];
      if (turn.state !== "linked")
        placed.push({ method: "turn/started", params: { sessionId: turn.sessionId, viewCursor, turnId: turn.turnId, parent: turn.parent, depth: turn.depth } });
      if (turn.state !== "linked" && turn.terminal !== undefined)
        placed.push({ method: "turn/completed", params: { sessionId: turn.sessionId, viewCursor, turnId: turn.turnId, ...turn.terminal } });
      const problem = placed
        .map((n) => problemWithNotification(n.method, n.params) ?? problemWithSubagentLinks(n.method, n.params))
        .find((p) => p !== undefined);
      if (problem !== undefined) {
        this.#onWarning(`a kept subagent turn was dropped: ${problem}`); // a storage edited by hand: not trusted
        continue;
      }
      this.#follow(turn.sessionId, depth + 1);
      this.#sessions.get(turn.sessionId)?.turns.add(turn.turnId);
      for (const notification of placed) this.#tree.observe(notification);
    }
    for (const [sessionId, cursor] of Object.entries(kept.childCursors)) {
      const entry = this.#sessions.get(sessionId);
      if (entry !== undefined) entry.cursor = cursor;
    }
  }

  /** A child turn runs no more: its own terminal came, the tree forgot it, or the session's own turn it sits below ended (invariant 7). */
  #over(turnId: string): boolean {
    const turn = this.#tree.turn(turnId);
    if (turn === undefined || turn.state === "ended") return true;
    const root = this.rootOf(turnId);
    return root !== undefined && root !== turnId && this.#tree.turn(root)?.state === "ended";
  }

  /** A notification of a session not followed: folded in only when it is about a turn of that session the tree holds. */
  #observeForgotten(sessionId: string, notification: { method: string; params?: unknown }): TreeChange {
    const params = notification.params as Record<string, unknown>;
    const item = params["item"];
    const turnId = typeof params["turnId"] === "string" ? params["turnId"] : isObject(item) && typeof item["turnId"] === "string" ? item["turnId"] : undefined;
    if (turnId === undefined || this.#tree.turn(turnId)?.sessionId !== sessionId) return { child: false, changed: false };
    let changed: boolean;
    try {
      changed = this.#tree.observe(notification);
    } catch (error) {
      if (!MspError.is(error)) throw error;
      this.#onWarning(`a subagent notification was refused: ${error.message}`);
      return { child: true, changed: false };
    }
    return { child: true, changed: changed ? (this.rootOf(turnId) ?? true) : false };
  }

  /**
   * Follow a descendant session. Past the bound, the oldest session whose every turn ended is
   * forgotten; only when every followed session still runs is the oldest running one forgotten
   * (once warned). A forgotten session's turns stay in the tree: their ends and questions still count.
   */
  #follow(sessionId: string, depth: number): void {
    if (this.#sessions.has(sessionId)) return;
    this.#sessions.set(sessionId, { depth, turns: new Set() });
    if (this.#sessions.size <= this.#maxSessions) return;
    for (const [candidate, { turns }] of this.#sessions) {
      if (candidate === sessionId || turns.size === 0) continue;
      if ([...turns].every((turnId) => this.#over(turnId))) return void this.#sessions.delete(candidate);
    }
    const [oldest] = this.#sessions.keys();
    if (oldest !== undefined) this.#sessions.delete(oldest);
    if (!this.#warnedBound)
      this.#onWarning(`more than ${this.#maxSessions} subagent sessions running: the oldest are no longer followed (limits.subagentSessions)`);
    this.#warnedBound = true;
  }
}

function freezeTurn(turn: TreeTurn): TreeTurn {
  return Object.freeze({ ...turn, children: Object.freeze([...turn.children]) });
}
