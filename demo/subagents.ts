/**
 * The page's subagents (issue 23), as the session layer shows them, plus the one thing it does not
 * keep: a child turn's items.
 *
 * The session layer (`@muse-code/sdk/session`) follows the tree below each of the session's turns
 * itself: `SessionTurn.subagents` (each child turn's parent link, depth, state and terminal, kept in
 * storage and replayed by the host after a reload) and `subagentProgress` ("stopping 3 of 5
 * subagents…"); a subagent's `tool/approve` question is in the turn's `approvals`, with
 * `subagent: {sessionId, depth}`. The page takes all of that from the snapshot.
 *
 * What the snapshot does not hold is a child turn's items (its messages, its tool calls and their
 * output): `SessionTurn.items` are the session's own. So {@link SubagentItems} keeps them, from each
 * connection the session opens (`attach`, from the page's `connect`): every item of another session
 * the connection hears, whole (the client's ledger applies the deltas), and, for what a resume
 * lists as in progress (the base of the host's replay after a reload, which fires no item event),
 * the connection's own ledger (`client.items.itemsOf`). Items heard before a reload are not kept:
 * after one, a child shows what the host replays from its cursor on, and what is still running.
 *
 * {@link SubagentTree} is one render's view: each child turn by id (from the snapshot), its items,
 * and what its delegating `task` call asked (the agent and the prompt, from the call's arguments).
 */
import type { Item, MspClient, ToolCallItem } from "@muse-code/sdk";
import type { SessionTurn } from "@muse-code/sdk/session";
import type { TreeTurn } from "@muse-code/sdk/ui";

/** What a delegating call asked of its subagent (its `task` arguments). */
export interface SubagentTask {
  agent: string;
  prompt: string;
}

/** The items of the child turns the page's connections hear (the snapshot holds the session's own only). */
export class SubagentItems {
  /** Each child turn's items, by turn, then by item, in the order they started. */
  readonly #items = new Map<string, Map<string, Item>>();
  readonly #listeners = new Set<() => void>();
  readonly #ownSession: () => string | undefined;
  /** The connection attached last: its ledger holds what a resume listed as in progress. */
  #client: MspClient | undefined;

  /** @param ownSession - The session's own id, once known: its items are the snapshot's, not kept here. */
  constructor(ownSession: () => string | undefined) {
    this.#ownSession = ownSession;
  }

  /** Listen to `client` (a connection of the session) for the items of child sessions. */
  attach(client: MspClient): MspClient {
    this.#client = client;
    const { events } = client;
    const put = ({ sessionId, item }: { sessionId: string; item: Item }) => {
      if (this.#client === client && sessionId !== this.#ownSession()) this.#put(item);
    };
    events.on("item/started", put);
    events.on("item/updated", put);
    events.on("item/delta", put);
    events.on("item/completed", put);
    // An item a terminal closed (its status settled by the SDK): a child turn's, if one is kept.
    events.on("itemSynthesized", (item) => {
      if (this.#client === client && this.#items.has(item.turnId)) this.#put(item);
    });
    return client;
  }

  /** Call `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A child turn's items, in the order they started: those heard, and those the connection's ledger has (a resume's). */
  itemsOf(turnId: string): Item[] {
    const heard = this.#items.get(turnId);
    const ledger = this.#client?.items.itemsOf(turnId) ?? [];
    if (ledger.length === 0) return [...(heard?.values() ?? [])];
    const merged = new Map(heard);
    for (const item of ledger) {
      const kept = merged.get(item.itemId);
      if (kept === undefined || kept.revision <= item.revision) merged.set(item.itemId, item);
    }
    return [...merged.values()];
  }

  /** Forget the items of every turn not in `keep` (the child turns the snapshot still shows). */
  prune(keep: ReadonlySet<string>): void {
    for (const turnId of this.#items.keys()) if (!keep.has(turnId)) this.#items.delete(turnId);
  }

  #put(item: Item): void {
    let items = this.#items.get(item.turnId);
    if (items === undefined) this.#items.set(item.turnId, (items = new Map()));
    if (items.get(item.itemId) === item) return;
    items.set(item.itemId, item);
    for (const listener of this.#listeners) listener();
  }
}

/** One render's view of the subagents below the session's turns: the snapshot's tree, and the child turns' items. */
export class SubagentTree {
  readonly #turns = new Map<string, TreeTurn>();
  readonly #ownItems = new Map<string, readonly Item[]>();
  readonly #items: SubagentItems;

  constructor(turns: readonly SessionTurn[], items: SubagentItems) {
    this.#items = items;
    for (const turn of turns) {
      this.#ownItems.set(turn.turnId, turn.items);
      for (const child of turn.subagents) this.#turns.set(child.turnId, child);
    }
  }

  /** Every child turn's id (to keep their items). */
  ids(): Set<string> {
    return new Set(this.#turns.keys());
  }

  /** The child turn as the snapshot shows it. */
  turn(turnId: string): TreeTurn | undefined {
    return this.#turns.get(turnId);
  }

  /** A child turn's items, in the order they started. */
  itemsOf(turnId: string): Item[] {
    return this.#items.itemsOf(turnId);
  }

  /** What the child turn's delegating call asked (agent and prompt), once the call is known. */
  taskOf(turnId: string): SubagentTask | undefined {
    const parent = this.#turns.get(turnId)?.parent;
    if (parent === undefined) return undefined;
    const above = this.#ownItems.get(parent.turnId) ?? this.#items.itemsOf(parent.turnId);
    const call = above.find((item): item is ToolCallItem => item.itemId === parent.itemId && item.kind === "toolCall");
    return call === undefined ? undefined : taskOf(call.args);
  }
}

/** A `task` call's agent and prompt, from its arguments (JSON text). */
function taskOf(args: string): SubagentTask {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "object" && parsed !== null) {
      const { agent, prompt } = parsed as Record<string, unknown>;
      return { agent: typeof agent === "string" ? agent : "subagent", prompt: typeof prompt === "string" ? prompt : "" };
    }
  } catch {
    // not JSON: nothing to name it by
  }
  return { agent: "subagent", prompt: "" };
}
