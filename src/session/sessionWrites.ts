/**
 * How a session reaches its storage: changes gather for {@link WRITE_DELAY_MS}, then the write runs
 * in the page's next idle period (at most {@link WRITE_DELAY_MS} later, where `requestIdleCallback`
 * exists), so it is never inside the frame that paints a delta; a Stop or a terminal is written at
 * once. Each write holds the session id, the cursor and the turns together, as one moment.
 */
import type { SessionKeeper } from "./sessionKeeper.js";
import type { SessionModelChoice } from "./sessionModelChoice.js";
import type { SessionTree } from "./sessionTree.js";
import type { SessionTurns } from "./sessionTurns.js";

/** How long changes gather before the session is written, and the most the write then waits for an idle period. @unit milliseconds */
export const WRITE_DELAY_MS = 100;

type IdleScheduler = (callback: () => void, options: { timeout: number }) => number;
/** The page's idle scheduler, where it has one. */
const idle = (globalThis as { requestIdleCallback?: IdleScheduler }).requestIdleCallback;
const cancelIdle = (globalThis as { cancelIdleCallback?: (handle: number) => void }).cancelIdleCallback;

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
  #idle: number | undefined;

  constructor(host: WritesHost) {
    this.#host = host;
  }

  /** Write within {@link WRITE_DELAY_MS}, with whatever else changes meanwhile. */
  soon(): void {
    if (this.#timer !== undefined || this.#idle !== undefined || this.#host.isClosed()) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (idle === undefined) this.now();
      else this.#idle = idle(() => this.now(), { timeout: WRITE_DELAY_MS });
    }, WRITE_DELAY_MS);
  }

  /** Write now (a pending later write is folded in). */
  now(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#idle !== undefined) cancelIdle?.(this.#idle);
    this.#timer = undefined;
    this.#idle = undefined;
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
