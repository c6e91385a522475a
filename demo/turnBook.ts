/**
 * The page's book of turns: each turn this tab started or resumed, in order, with its items at
 * their latest revision, its phase (starting, queued, running, ended), its terminal, and the
 * StopController that drives its Stop button. Notifications and acks move it forward only; the
 * views bring themselves up to date from it on every change. A change that is an append to one
 * item's text (MSP 2.0's `item/delta`) is handed to the views as that append, so they can add
 * it to what they show instead of rendering the whole text again.
 */
import type { Item, ItemDeltaField, TurnCompletedParams } from "@muse-code/sdk";
import type { StopController } from "@muse-code/sdk/ui";

/** Where a turn is: sent, waiting in the host's inbox, running, or over (its terminal arrived). */
export type TurnPhase = "starting" | "queued" | "running" | "ended";

const PHASE_ORDER: Record<TurnPhase, number> = { starting: 0, queued: 1, running: 2, ended: 3 };

/** One turn as the page shows it. */
export interface TurnEntry {
  readonly turnId: string;
  /** The prompt, when this tab started the turn (a turn first seen in a replay has none). */
  prompt: string | undefined;
  phase: TurnPhase;
  /** Its items in the order they started, each at its latest revision. */
  readonly items: Map<string, Item>;
  /**
   * The ids of items whose text the page holds only in part: restored from what it remembered
   * across a reload, where a long text is cut (see sessionMemory.ts). A whole item from the
   * connection (an item/started, item/updated, item/completed or item/delta event, or the
   * resume's items in `client.items`) takes its place and the id leaves this set.
   */
  readonly cut: Set<string>;
  terminal: TurnCompletedParams | undefined;
  /** Stop was pressed for it (kept across a reload, so the page goes on showing "Stopping…"). */
  stopRequested: boolean;
  /** This page's controller for it, once it has a connection. */
  stop: StopController | undefined;
}

/** An append to one item's text: `item` is the whole item with `append` already at the end of `item[field]`. */
export interface ItemAppend {
  readonly item: Item;
  readonly field: ItemDeltaField;
  readonly append: string;
}

/** Called with the turn that changed, and the append when the change was one (else the views bring the whole turn up to date). */
type Listener = (entry: TurnEntry, append?: ItemAppend) => void;

/** The turns of the page, in the order they were started or first seen, with change notifications for the views. */
export class TurnBook {
  readonly #turns = new Map<string, TurnEntry>();
  readonly #listeners = new Set<Listener>();

  /** Every turn, oldest first. */
  entries(): TurnEntry[] {
    return [...this.#turns.values()];
  }

  get(turnId: string): TurnEntry | undefined {
    return this.#turns.get(turnId);
  }

  /** The turn with this id, added (with no prompt) if the page has not seen it yet. */
  ensure(turnId: string, prompt?: string): TurnEntry {
    let entry = this.#turns.get(turnId);
    if (entry === undefined) {
      entry = { turnId, prompt, phase: "starting", items: new Map(), cut: new Set(), terminal: undefined, stopRequested: false, stop: undefined };
      this.#turns.set(turnId, entry);
    }
    return entry;
  }

  /** Call `listener` after every change, with the turn that changed. Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Tell the views that `entry` changed (after a change made outside the methods below). */
  changed(entry: TurnEntry): void {
    for (const listener of this.#listeners) listener(entry);
  }

  /** Move a turn forward to `phase` (never back: a late ack does not undo a notification). */
  advance(turnId: string, phase: TurnPhase): void {
    const entry = this.ensure(turnId);
    if (PHASE_ORDER[phase] <= PHASE_ORDER[entry.phase]) return;
    entry.phase = phase;
    this.changed(entry);
  }

  /**
   * A whole item at a new revision (an older revision than the one kept is ignored; the same
   * revision replaces a copy held in part).
   */
  putItem(item: Item): void {
    const entry = this.ensure(item.turnId);
    const kept = entry.items.get(item.itemId);
    if (kept !== undefined && (kept.revision > item.revision || (kept.revision === item.revision && !entry.cut.has(item.itemId)))) return;
    this.#keep(entry, item);
    this.changed(entry);
  }

  /**
   * An item/delta: `append` was added to `item[field]`, and `item` is the whole item after it.
   * The views get the append when what they show is the item's previous revision in whole, and
   * render `item` whole otherwise (a copy held in part, a gap, an item they never showed).
   */
  appendToItem({ item, field, append }: ItemAppend): void {
    const entry = this.ensure(item.turnId);
    const kept = entry.items.get(item.itemId);
    if (kept !== undefined && kept.revision >= item.revision) return; // already reflected
    const follows = kept !== undefined && kept.revision === item.revision - 1 && !entry.cut.has(item.itemId);
    this.#keep(entry, item);
    if (!follows) return this.changed(entry);
    for (const listener of this.#listeners) listener(entry, { item, field, append });
  }

  /** Restore an item remembered across a reload; `cut`: its text is held only in part. */
  restoreItem(entry: TurnEntry, item: Item, cut: boolean): void {
    entry.items.set(item.itemId, item);
    if (cut) entry.cut.add(item.itemId);
  }

  #keep(entry: TurnEntry, item: Item): void {
    entry.items.set(item.itemId, item);
    entry.cut.delete(item.itemId);
    if (entry.phase !== "ended") entry.phase = "running";
  }

  /** The turn's own terminal: it is over. */
  end(terminal: TurnCompletedParams): void {
    const entry = this.ensure(terminal.turnId);
    entry.terminal = terminal;
    entry.phase = "ended";
    this.changed(entry);
  }

  /** Forget every turn (the host no longer knows their session). */
  clear(): void {
    const entries = this.entries();
    this.#turns.clear();
    for (const entry of entries) this.changed(entry);
  }

  /** Forget the oldest ended turns beyond `keep` (the page stays small however long it runs). */
  trim(keep: number): void {
    const ended = this.entries().filter((entry) => entry.phase === "ended");
    for (const entry of ended.slice(0, Math.max(0, this.#turns.size - keep))) this.#turns.delete(entry.turnId);
  }
}
