/**
 * The page's book of turns: each turn this tab started or resumed, in order, with its items at
 * their latest revision, its phase (starting, queued, running, ended), its terminal, and the
 * StopController that drives its Stop button. Notifications and acks move it forward only; the
 * views re-render from it on every change.
 */
import type { Item, TurnCompletedParams } from "@muse-code/sdk";
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
  terminal: TurnCompletedParams | undefined;
  /** Stop was pressed for it (kept across a reload, so the page goes on showing "Stopping…"). */
  stopRequested: boolean;
  /** This page's controller for it, once it has a connection. */
  stop: StopController | undefined;
}

type Listener = (entry: TurnEntry) => void;

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
      entry = { turnId, prompt, phase: "starting", items: new Map(), terminal: undefined, stopRequested: false, stop: undefined };
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

  /** An item at a new revision (an older revision than the one kept is ignored). */
  putItem(item: Item): void {
    const entry = this.ensure(item.turnId);
    const kept = entry.items.get(item.itemId);
    if (kept !== undefined && kept.revision > item.revision) return;
    entry.items.set(item.itemId, item);
    if (entry.phase !== "ended") entry.phase = "running";
    this.changed(entry);
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
