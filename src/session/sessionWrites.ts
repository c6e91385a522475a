/**
 * How a session reaches its storage: changes gather for {@link WRITE_DELAY_MS}, a Stop or a
 * terminal is written at once, and each write holds the session id, the cursor and the turns
 * together, as one moment.
 */
import type { SessionKeeper } from "./sessionStorage.js";
import type { SessionModelChoice } from "./sessionModelChoice.js";
import type { SessionTree } from "./sessionTree.js";
import type { SessionTurns } from "./sessionTurns.js";

/** How long changes gather before the session is written. @unit milliseconds */
export const WRITE_DELAY_MS = 100;

/** What a write reads of the session. */
export interface WritesHost {
  readonly keeper: SessionKeeper;
  readonly turns: SessionTurns;
  readonly tree: SessionTree;
  readonly model: SessionModelChoice;
  /** The session's id and last cursor, once known. */
  position(): { sessionId: string | undefined; cursor: string | undefined };
  isClosed(): boolean;
  /** The storage refused a write: the session is kept in memory from now on. */
  fellBackToMemory(): void;
}

/** The writes of one session; see the module header. */
export class SessionWrites {
  readonly #host: WritesHost;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(host: WritesHost) {
    this.#host = host;
  }

  /** Write within {@link WRITE_DELAY_MS}, with whatever else changes meanwhile. */
  soon(): void {
    if (this.#timer !== undefined || this.#host.isClosed()) return;
    this.#timer = setTimeout(() => this.now(), WRITE_DELAY_MS);
  }

  /** Write now (a pending later write is folded in). */
  now(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const { keeper, turns, tree, model } = this.#host;
    const { sessionId, cursor } = this.#host.position();
    const kept: Parameters<SessionKeeper["write"]>[0] = { turns: turns.kept() };
    if (sessionId !== undefined) kept.sessionId = sessionId;
    if (cursor !== undefined) kept.cursor = cursor;
    const chosen = model.kept();
    if (chosen !== undefined) kept.model = chosen;
    const below = tree.kept(kept.turns.map((turn) => turn.turnId));
    if (below.turns.length > 0) kept.tree = below.turns;
    if (Object.keys(below.childCursors).length > 0) kept.childCursors = below.childCursors;
    const wasPersistent = keeper.persistent;
    keeper.write(kept);
    if (wasPersistent && !keeper.persistent) this.#host.fellBackToMemory();
  }
}
