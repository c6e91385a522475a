/**
 * PendingCommands: a connection's command tables. Each command sent takes the next JSON-RPC id
 * and waits here until it is answered. One its caller gave up on (timeout or abort) moves to a
 * bounded table of abandoned ids, so a late answer is told apart from an answer to nothing.
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import type { BoundedWait } from "./boundedWait.js";

/** A command sent and not yet answered. */
export interface PendingCommand {
  method: string;
  wait: BoundedWait<Record<string, unknown>>;
  /** Runs when the host accepts the command, before anything after the answer is dispatched. */
  onAccepted?: AcceptedHook | undefined;
}

/**
 * Runs with the result when the host accepts a command, before anything after the answer is
 * dispatched; returning an error refuses the answer (the command rejects with it).
 */
export type AcceptedHook = (result: Record<string, unknown>) => Error | undefined | void;

/** How many abandoned ids are remembered, oldest forgotten first. */
export const ABANDONED_CAPACITY = 10_000;

/** The pending and abandoned commands of one connection. */
export class PendingCommands {
  readonly #pending = new Map<number, PendingCommand>();
  // An abandoned command keeps its entry: a late answer that accepts it still runs `onAccepted`.
  readonly #abandoned = new BoundedMap<number, PendingCommand>({ capacity: ABANDONED_CAPACITY });
  #nextId = 1;

  /** The JSON-RPC id of the next command. */
  nextId(): number {
    return this.#nextId++;
  }

  /** Wait for the answer to `id`. */
  add(id: number, command: PendingCommand): void {
    this.#pending.set(id, command);
  }

  /** The command `id` answers, now answered: removed, so a second answer to it is a stray. */
  take(id: unknown): PendingCommand | undefined {
    if (typeof id !== "number") return undefined;
    const command = this.#pending.get(id);
    this.#pending.delete(id);
    return command;
  }

  /** Abandoned command `id`, removed: its late answer is reported once. */
  takeAbandoned(id: unknown): PendingCommand | undefined {
    if (typeof id !== "number") return undefined;
    const command = this.#abandoned.get(id);
    this.#abandoned.delete(id);
    return command;
  }

  /**
   * The wait of command `id` settled. If the command is still pending, nothing answered it: its
   * caller gave up (timeout or abort), so it is remembered as abandoned.
   */
  settled(id: number): void {
    const command = this.#pending.get(id);
    if (command === undefined) return;
    this.#pending.delete(id);
    this.#abandoned.set(id, command);
  }

  /** The connection closed: reject every pending command with `error`, and forget them all. */
  closeAll(error: unknown): void {
    // Forgotten before they are rejected: a command settling now is not abandoned.
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#abandoned.clear();
    for (const { wait } of pending) wait.reject(error);
  }

  /** Commands sent and not yet settled. */
  get size(): number {
    return this.#pending.size;
  }
}
