/**
 * SafeEmitter: the SDK's typed event emitter, with eventemitter3's interface and semantics (the
 * public type of `client.events` is eventemitter3's `EventEmitter`), written here so the browser
 * core does not carry a second emitter library, and so its listeners cannot hurt each other: a
 * listener that throws is reported, and every other listener of the event still runs.
 */
import type { EventEmitter } from "eventemitter3";

type Listener = (...args: unknown[]) => unknown;

/** One subscription: the listener, the `this` it runs with, and whether it runs once. */
interface Subscription {
  fn: Listener;
  context: unknown;
  once: boolean;
}

/**
 * An emitter with eventemitter3's behaviour: listeners run in the order they subscribed, with
 * `context` (default: the emitter) as `this`; a `once` listener is removed before it runs; an
 * `emit` calls the listeners subscribed when it began; `removeListener(event, fn, context, once)`
 * removes every matching subscription. Unlike eventemitter3, a listener that throws is handed to
 * `report` and the next listener still runs.
 */
export class SafeEmitter<EventTypes extends EventEmitter.ValidEventTypes> implements EventEmitter<EventTypes> {
  readonly #report: (error: unknown) => void;
  #events = new Map<unknown, Subscription[]>();

  /** `report` receives whatever a listener throws. */
  constructor(report: (error: unknown) => void) {
    this.#report = report;
  }

  eventNames(): Array<EventEmitter.EventNames<EventTypes>> {
    // eventemitter3's order: string names first, then symbols (a stable sort keeps each in subscription order).
    return [...this.#events.keys()].sort((a, b) => Number(typeof a === "symbol") - Number(typeof b === "symbol")) as Array<EventEmitter.EventNames<EventTypes>>;
  }

  listeners<T extends EventEmitter.EventNames<EventTypes>>(event: T): Array<EventEmitter.EventListener<EventTypes, T>> {
    return (this.#events.get(event) ?? []).map((s) => s.fn) as Array<EventEmitter.EventListener<EventTypes, T>>;
  }

  listenerCount(event: EventEmitter.EventNames<EventTypes>): number {
    return this.#events.get(event)?.length ?? 0;
  }

  emit<T extends EventEmitter.EventNames<EventTypes>>(event: T, ...args: EventEmitter.EventArgs<EventTypes, T>): boolean {
    const subscriptions = this.#events.get(event);
    if (subscriptions === undefined) return false;
    // Only those subscribed when the emit began: a subscription made during it is pushed past `count`.
    for (let i = 0, count = subscriptions.length; i < count; i++) {
      const { fn, context, once } = subscriptions[i] as Subscription;
      if (once) this.removeListener(event, fn as EventEmitter.EventListener<EventTypes, T>, undefined, true);
      try {
        fn.apply(context, args);
      } catch (error) {
        this.#report(error);
      }
    }
    return true;
  }

  on<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return this.#add(event, fn as Listener, context, false);
  }

  addListener<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return this.#add(event, fn as Listener, context, false);
  }

  once<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return this.#add(event, fn as Listener, context, true);
  }

  removeListener<T extends EventEmitter.EventNames<EventTypes>>(
    event: T,
    fn?: EventEmitter.EventListener<EventTypes, T>,
    context?: unknown,
    once?: boolean,
  ): this {
    const subscriptions = this.#events.get(event);
    if (subscriptions === undefined) return this;
    // A new array, never an edit in place: an emit under way keeps calling the ones it began with.
    const kept = fn === undefined ? [] : subscriptions.filter((s) => s.fn !== fn || (once === true && !s.once) || (Boolean(context) && s.context !== context));
    if (kept.length > 0) this.#events.set(event, kept);
    else this.#events.delete(event);
    return this;
  }

  off<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn?: EventEmitter.EventListener<EventTypes, T>, context?: unknown, once?: boolean): this {
    return this.removeListener(event, fn, context, once);
  }

  removeAllListeners(event?: EventEmitter.EventNames<EventTypes>): this {
    if (!event) this.#events = new Map();
    else this.#events.delete(event);
    return this;
  }

  #add(event: unknown, fn: Listener, context: unknown, once: boolean): this {
    if (typeof fn !== "function") throw new TypeError("The listener must be a function");
    const subscription: Subscription = { fn, context: context || this, once };
    const subscriptions = this.#events.get(event);
    if (subscriptions === undefined) this.#events.set(event, [subscription]);
    else subscriptions.push(subscription);
    return this;
  }
}
