/**
 * SafeEmitter: the SDK's typed event emitter, with eventemitter3's interface and semantics, written
 * here so the browser core carries no emitter library, and so its listeners cannot hurt each other:
 * a listener that throws is reported, and every other listener of the event still runs. Its public
 * face is {@link TypedEventEmitter}, the type of `client.events`.
 */
import type { EventArgsMap, TypedEventEmitter } from "../types/typedEventEmitter.js";

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
export class SafeEmitter<Events extends EventArgsMap<Events>> implements TypedEventEmitter<Events> {
  readonly #report: (error: unknown) => void;
  #events = new Map<unknown, Subscription[]>();

  /** `report` receives whatever a listener throws. */
  constructor(report: (error: unknown) => void) {
    this.#report = report;
  }

  eventNames(): Array<keyof Events> {
    // eventemitter3's order: string names first, then symbols (a stable sort keeps each in subscription order).
    return [...this.#events.keys()].sort((a, b) => Number(typeof a === "symbol") - Number(typeof b === "symbol")) as Array<keyof Events>;
  }

  listeners<E extends keyof Events>(event: E): Array<(...args: Events[E]) => void> {
    return (this.#events.get(event) ?? []).map((s) => s.fn) as Array<(...args: Events[E]) => void>;
  }

  listenerCount(event: keyof Events): number {
    return this.#events.get(event)?.length ?? 0;
  }

  emit<E extends keyof Events>(event: E, ...args: Events[E]): boolean {
    const subscriptions = this.#events.get(event);
    if (subscriptions === undefined) return false;
    // Only those subscribed when the emit began: a subscription made during it is pushed past `count`.
    for (let i = 0, count = subscriptions.length; i < count; i++) {
      const { fn, context, once } = subscriptions[i] as Subscription;
      if (once) this.removeListener(event, fn as (...args: Events[E]) => void, undefined, true);
      try {
        fn.apply(context, args);
      } catch (error) {
        this.#report(error);
      }
    }
    return true;
  }

  on<E extends keyof Events>(event: E, fn: (...args: Events[E]) => void, context?: unknown): this {
    return this.#add(event, fn as Listener, context, false);
  }

  addListener<E extends keyof Events>(event: E, fn: (...args: Events[E]) => void, context?: unknown): this {
    return this.#add(event, fn as Listener, context, false);
  }

  once<E extends keyof Events>(event: E, fn: (...args: Events[E]) => void, context?: unknown): this {
    return this.#add(event, fn as Listener, context, true);
  }

  removeListener<E extends keyof Events>(event: E, fn?: (...args: Events[E]) => void, context?: unknown, once?: boolean): this {
    const subscriptions = this.#events.get(event);
    if (subscriptions === undefined) return this;
    // A new array, never an edit in place: an emit under way keeps calling the ones it began with.
    const kept = fn === undefined ? [] : subscriptions.filter((s) => s.fn !== fn || (once === true && !s.once) || (Boolean(context) && s.context !== context));
    if (kept.length > 0) this.#events.set(event, kept);
    else this.#events.delete(event);
    return this;
  }

  off<E extends keyof Events>(event: E, fn?: (...args: Events[E]) => void, context?: unknown, once?: boolean): this {
    return this.removeListener(event, fn, context, once);
  }

  removeAllListeners(event?: keyof Events): this {
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
