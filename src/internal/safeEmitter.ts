/**
 * SafeEmitter: an eventemitter3 emitter whose listeners cannot hurt each other. A listener
 * that throws is reported, and every other listener of the event still runs.
 */
import { EventEmitter } from "eventemitter3";

type Listener = (...args: unknown[]) => unknown;

/** An eventemitter3 EventEmitter that isolates its listeners' exceptions. */
export class SafeEmitter<EventTypes extends EventEmitter.ValidEventTypes> extends EventEmitter<EventTypes> {
  readonly #report: (error: unknown) => void;
  readonly #wrappers = new WeakMap<Listener, Listener>();

  /** `report` receives whatever a listener throws. */
  constructor(report: (error: unknown) => void) {
    super();
    this.#report = report;
  }

  #wrap(fn: Listener): Listener {
    let wrapper = this.#wrappers.get(fn);
    if (wrapper === undefined) {
      const report = this.#report;
      wrapper = function (this: unknown, ...args: unknown[]) {
        try {
          return fn.apply(this, args);
        } catch (error) {
          report(error);
          return undefined;
        }
      };
      this.#wrappers.set(fn, wrapper);
    }
    return wrapper;
  }

  #unwrap(fn: Listener | undefined): Listener | undefined {
    return fn === undefined ? undefined : (this.#wrappers.get(fn) ?? fn);
  }

  override on<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return super.on(event, this.#wrap(fn as Listener) as EventEmitter.EventListener<EventTypes, T>, context);
  }

  override addListener<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return this.on(event, fn, context);
  }

  override once<T extends EventEmitter.EventNames<EventTypes>>(event: T, fn: EventEmitter.EventListener<EventTypes, T>, context?: unknown): this {
    return super.once(event, this.#wrap(fn as Listener) as EventEmitter.EventListener<EventTypes, T>, context);
  }

  override removeListener<T extends EventEmitter.EventNames<EventTypes>>(
    event: T,
    fn?: EventEmitter.EventListener<EventTypes, T>,
    context?: unknown,
    once?: boolean,
  ): this {
    return super.removeListener(event, this.#unwrap(fn as Listener | undefined) as EventEmitter.EventListener<EventTypes, T> | undefined, context, once);
  }

  override off<T extends EventEmitter.EventNames<EventTypes>>(
    event: T,
    fn?: EventEmitter.EventListener<EventTypes, T>,
    context?: unknown,
    once?: boolean,
  ): this {
    return this.removeListener(event, fn, context, once);
  }
}
