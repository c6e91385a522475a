/**
 * Steering (MSP 2.1): the input a `turn/steer` adds to a running turn, held as `message` items of
 * that turn until the model consumes it, a default cancel discards it, or the turn ends and it is
 * carried over into the session's next turn.
 */
import type { MessageItem, TurnInput } from "@muse-code/protocol";
import { TurnReasons } from "@muse-code/protocol/reasons.js";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { isoNow } from "./recordedAt.js";

/** How many `turn/steer` inputs one turn accepts; the next gets `inbox_full`. */
export const DEFAULT_MAX_STEERS_PER_TURN = 16;

/**
 * How many bytes of steering text (UTF-8, summed over its `turn/steer` inputs) one turn accepts;
 * an input that would pass it gets `inbox_full`.
 *
 * @unit bytes
 */
export const DEFAULT_MAX_STEER_BYTES_PER_TURN = 65_536;

/** The text a steering input becomes: its text parts, one per line. */
export function steeringText(input: readonly TurnInput[]): string {
  return input.map((part) => part.text).join("\n");
}

/** One steering input of the running turn, announced as its `message` item. */
export interface PendingSteer {
  steerId: string;
  item: MessageItem;
}

/** Steering carried over by a `keepInbox` cancel or a policy stop, waiting for the session's next turn. */
export interface CarriedSteer {
  steerId: string;
  text: string;
}

/** Why a `turn/steer` over the caps is refused (`inbox_full`), with the caps in `details`. */
export interface SteerRefusal {
  message: string;
  details: { maxSteers: number; maxSteerBytes: number };
}

/** A new steering `message` item of `turnId`, in progress. */
export function steeringItem(turnId: string, steerId: string, text: string): MessageItem {
  return { itemId: uuidv7(), kind: "message", turnId, revision: 1, status: "inProgress", recordedAt: isoNow(), text, author: "user", steerId };
}

/**
 * The item a steering input completes as: consumed (`completed`), discarded by a default cancel
 * (`cancelled`, `failureReason: "discarded from inbox"`), or carried over (`cancelled`,
 * `carriedOver: true`).
 */
export function closedSteeringItem(item: MessageItem, how: "consumed" | "discarded" | "carriedOver"): MessageItem {
  const base: MessageItem = { ...item, revision: item.revision + 1, recordedAt: isoNow(), status: how === "consumed" ? "completed" : "cancelled" };
  if (how === "discarded") base.failureReason = TurnReasons.discardedFromInbox;
  if (how === "carriedOver") base.carriedOver = true;
  return base;
}

/**
 * The running turn's steering: what waits to be consumed, the caps on what one turn accepts, and
 * a bounded wait for input (a scripted step's `awaitSteeringMs`). Plus what a stopped turn carried
 * over for the session's next turn. It emits nothing itself: the session agent logs and sends.
 */
export class SteeringInbox {
  readonly maxSteers: number;
  /** @unit bytes */
  readonly maxBytes: number;
  #turnId: string | undefined;
  #pending: PendingSteer[] = [];
  #count = 0;
  #bytes = 0;
  #carried: CarriedSteer[];
  #wake: (() => void) | undefined;

  constructor(options: { maxSteers?: number; maxBytes?: number; carried?: CarriedSteer[] } = {}) {
    this.maxSteers = options.maxSteers ?? DEFAULT_MAX_STEERS_PER_TURN;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_STEER_BYTES_PER_TURN;
    this.#carried = options.carried ?? [];
  }

  /** The turn whose steering this holds now (from its `turn/started` to its end). */
  get turnId(): string | undefined {
    return this.#turnId;
  }

  /** The running turn ended: no turn takes steering until the next begins. */
  endTurn(): void {
    this.#turnId = undefined;
  }

  /** A new running turn: its counts start at zero. */
  beginTurn(turnId: string): void {
    this.#turnId = turnId;
    this.#pending = [];
    this.#count = 0;
    this.#bytes = 0;
  }

  /** Why a steering input of `text` to `turnId` is over the caps, or `undefined` when it fits. */
  check(turnId: string, text: string): SteerRefusal | undefined {
    const details = { maxSteers: this.maxSteers, maxSteerBytes: this.maxBytes };
    if (this.#turnId !== turnId) return undefined;
    if (this.#count >= this.maxSteers) return { message: `turn ${turnId} already has ${this.#count} steering inputs (at most ${this.maxSteers})`, details };
    const bytes = new TextEncoder().encode(text).length;
    if (this.#bytes + bytes > this.maxBytes) {
      return { message: `steering input of ${bytes} bytes would take turn ${turnId} past ${this.maxBytes} bytes of steering`, details };
    }
    return undefined;
  }

  /** Adds an accepted, announced steering input and wakes a step waiting for one. */
  add(steer: PendingSteer): void {
    this.#pending.push(steer);
    this.#count += 1;
    this.#bytes += new TextEncoder().encode(steer.item.text).length;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Removes and returns every pending steering input (to consume, discard or carry over). */
  take(): PendingSteer[] {
    const taken = this.#pending;
    this.#pending = [];
    return taken;
  }

  /** How many steering inputs wait to be consumed. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /**
   * Resolves once a steering input is pending, `ms` have passed, or `signal` aborts (at once when
   * one is pending already). Never rejects: the caller checks `signal` next.
   * @param ms - @unit milliseconds
   */
  whenPending(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#pending.length > 0 || signal.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }

  /** Keeps steering a stopped turn carried over, for the session's next turn. */
  carry(steers: readonly CarriedSteer[]): void {
    this.#carried.push(...steers);
  }

  /** Removes and returns what earlier turns carried over (the turn now starting begins with it). */
  takeCarried(): CarriedSteer[] {
    const carried = this.#carried;
    this.#carried = [];
    return carried;
  }
}
