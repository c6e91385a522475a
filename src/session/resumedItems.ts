/**
 * The items a `session/resume` answer lists as in progress at the cursor: put on the session's own
 * turn, or on a child turn of the subagent tree. The answer names no session, so an item of a turn
 * neither shown nor in the tree waits for a notification of its turn to say whose it is: it is never
 * put on a turn of this session blindly.
 */
import type { Item } from "@muse-code/protocol";
import type { SessionTree, TreeChange } from "./sessionTree.js";
import type { SessionTurns } from "./sessionTurns.js";

/** What the resumed items need of the session. */
export interface ResumedItemsHost {
  readonly turns: SessionTurns;
  readonly tree: SessionTree;
  /** The tree changed below one of the session's turns. */
  treeChanged(change: TreeChange): void;
  /** What the snapshot shows changed. */
  changed(): void;
  onWarning(message: string): void;
}

/** One session's resumed items, and those still waiting to be placed. */
export class ResumedItems {
  readonly #host: ResumedItemsHost;
  readonly #unplaced = new Map<string, Item[]>();

  constructor(host: ResumedItemsHost) {
    this.#host = host;
  }

  /** Items wait to be placed. */
  get waiting(): boolean {
    return this.#unplaced.size > 0;
  }

  /** An item of `sessionId`'s resume answer. */
  put(sessionId: string, item: Item): void {
    const host = this.#host;
    if (host.turns.get(item.turnId) !== undefined) {
      // The answer's items carry no cursor: an empty one moves none.
      host.treeChanged(host.tree.observe(sessionId, { method: "item/updated", params: { sessionId, viewCursor: "", item } }));
      host.turns.putItem(item);
      return;
    }
    const change = host.tree.observeItem(item);
    if (change !== undefined) return host.treeChanged(change);
    const held = this.#unplaced.get(item.turnId) ?? [];
    if (held.length === 0) this.#unplaced.set(item.turnId, held);
    held.push(item);
  }

  /** A notification named `turnId` in `sessionId` (`own` is the session's id): its held items are the session's, the tree's, or dropped (reported). */
  place(sessionId: unknown, turnId: unknown, own: string | undefined): void {
    if (typeof turnId !== "string") return;
    const held = this.#unplaced.get(turnId);
    if (held === undefined) return;
    this.#unplaced.delete(turnId);
    const host = this.#host;
    if (sessionId === own) {
      for (const item of held) host.turns.putItem(item);
      host.changed();
      return;
    }
    const changes = held.map((item) => host.tree.observeItem(item));
    for (const change of changes) if (change !== undefined) host.treeChanged(change);
    if (changes.some((change) => change === undefined))
      host.onWarning(
        `session/resume listed ${held.length} item(s) of turn ${turnId}, a turn of session ${String(sessionId)} outside this session's tree: dropped`,
      );
  }

  /** Items no notification placed before the next resume: reported, dropped. */
  drop(): void {
    for (const [turnId, held] of this.#unplaced)
      this.#host.onWarning(`session/resume listed ${held.length} item(s) of turn ${turnId}, which no notification placed in this session or its tree: dropped`);
    this.#unplaced.clear();
  }
}
