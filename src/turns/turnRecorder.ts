/**
 * TurnRecorder: records every `turn/completed` by turnId and keeps a LIST of waiters per
 * turn, so a terminal can never slip past and a second waiter can never evict the first.
 * Users see it through its read-only view, {@link RecordedTurns} (`client.turns`).
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import { boundedWait, type BoundedWait } from "../internal/boundedWait.js";
import type { MspError } from "../errors.js";
import type { TurnCompletedParams } from "@muse-code/protocol";
import type { WaitOptions } from "../types/waitOptions.js";

/** Options for a {@link TurnRecorder}. */
export interface TurnRecorderOptions {
  /** How many terminals to retain, least recently recorded evicted first. @defaultValue 10 000 */
  capacity?: number;
  /** Default bound for {@link TurnRecorder.terminalOf}. @unit milliseconds @defaultValue 60 000 */
  defaultTimeoutMs?: number;
}

/** Default number of terminals a recorder retains (10 000). */
export const DEFAULT_TERMINAL_CAPACITY = 10_000;

/**
 * The turn terminals a connection has recorded, read-only: `client.turns`. It answers "how did
 * turn X end?" at once when the terminal is already in, otherwise by joining that turn's waiter
 * list. Every wait is bounded (timeout, abort signal, or connection close). Only the connection
 * records terminals, before anything else sees them.
 *
 * @example
 * ```ts
 * const ended = await client.turns.terminalOf(turnId, { timeoutMs: 10_000 });
 * console.log(ended.terminal); // "cancelled"
 * ```
 */
export interface RecordedTurns {
  /**
   * The recorded terminal of a turn, or `undefined` if none is recorded (yet, or any more: the
   * oldest are forgotten beyond the client's `terminalCapacity`).
   *
   * @example
   * ```ts
   * client.turns.get(turnId)?.terminal; // "completed" | "cancelled" | "failed" | undefined
   * ```
   */
  get(turnId: string): TurnCompletedParams | undefined;
  /**
   * The terminal of a turn: the record first, then a bounded wait on that turn's waiter list.
   * Rejects with `MspError` kind `timeout`, `aborted`, or `connectionClosed`.
   *
   * @example
   * ```ts
   * const t = await client.turns.terminalOf(turnId, { timeoutMs: 5_000, signal });
   * ```
   */
  terminalOf(turnId: string, options?: WaitOptions): Promise<TurnCompletedParams>;
  /** Number of pending waiters, over all turns. */
  readonly waiterCount: number;
  /** Number of retained terminals. */
  readonly size: number;
}

/** Records turn terminals as they stream in, and serves the {@link RecordedTurns} view. */
export class TurnRecorder implements RecordedTurns {
  readonly #terminals: BoundedMap<string, TurnCompletedParams>;
  readonly #waiters = new Map<string, Array<BoundedWait<TurnCompletedParams>>>();
  readonly #defaultTimeoutMs: number;
  #closedWith: MspError<"connectionClosed"> | undefined;

  constructor(options: TurnRecorderOptions = {}) {
    this.#terminals = new BoundedMap({ capacity: options.capacity ?? DEFAULT_TERMINAL_CAPACITY });
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 60_000;
  }

  /**
   * Record a terminal and wake every waiter of that turn. Returns `false`, recording nothing,
   * when this turn's terminal is already recorded (a duplicate).
   */
  record(params: TurnCompletedParams): boolean {
    if (this.#terminals.has(params.turnId)) return false;
    this.#terminals.set(params.turnId, params);
    const list = this.#waiters.get(params.turnId);
    if (list !== undefined) {
      this.#waiters.delete(params.turnId);
      for (const waiter of [...list]) waiter.resolve(params);
    }
    return true;
  }

  /** See {@link RecordedTurns.get}. */
  get(turnId: string): TurnCompletedParams | undefined {
    return this.#terminals.get(turnId);
  }

  /** See {@link RecordedTurns.terminalOf}. */
  terminalOf(turnId: string, options: WaitOptions = {}): Promise<TurnCompletedParams> {
    const recorded = this.#terminals.get(turnId);
    if (recorded !== undefined) return Promise.resolve(recorded);
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    let list = this.#waiters.get(turnId);
    if (list === undefined) {
      list = [];
      this.#waiters.set(turnId, list);
    }
    const waiters = list;
    // Declared before creation: an already-aborted signal settles inside boundedWait().
    let wait: BoundedWait<TurnCompletedParams> | undefined;
    // eslint-disable-next-line prefer-const -- with const, that early callback would hit the temporal dead zone
    wait = boundedWait<TurnCompletedParams>(`waiting for the terminal of turn ${turnId}`, { turnId }, options, this.#defaultTimeoutMs, () => {
      const at = wait === undefined ? -1 : waiters.indexOf(wait);
      if (at >= 0) waiters.splice(at, 1);
      if (waiters.length === 0 && this.#waiters.get(turnId) === waiters) this.#waiters.delete(turnId);
    });
    if (!wait.settled) waiters.push(wait);
    else if (waiters.length === 0) this.#waiters.delete(turnId);
    return wait.promise;
  }

  /**
   * Settle every pending waiter with `error` (the connection closed) and reject later waits
   * for unrecorded turns with it too. Recorded terminals stay readable.
   */
  closeAll(error: MspError<"connectionClosed">): void {
    this.#closedWith ??= error;
    const lists = [...this.#waiters.values()];
    this.#waiters.clear();
    for (const list of lists) for (const waiter of [...list]) waiter.reject(error);
  }

  /** Number of pending waiters, over all turns. */
  get waiterCount(): number {
    let n = 0;
    for (const list of this.#waiters.values()) n += list.length;
    return n;
  }

  /** Number of retained terminals. */
  get size(): number {
    return this.#terminals.size;
  }
}
