/**
 * TypedEventEmitter: the type of `client.events`, with eventemitter3's methods and no `emit`.
 */

/**
 * The events of an emitter: each event's name maps to the tuple of arguments its listeners get.
 *
 * @example
 * ```ts
 * interface DownloadEvents { progress: [loadedBytes: number, totalBytes: number]; done: [] }
 * ```
 */
export type EventArgsMap<Events> = { [E in keyof Events]: unknown[] };

/**
 * A typed event emitter, with eventemitter3's methods and semantics: listeners run in the order
 * they subscribed, with `context` (default: the emitter) as `this`; a `once` listener is removed
 * before it runs; an emit calls the listeners subscribed when it began. Unlike eventemitter3, a
 * listener that throws is reported (the client's `handlerError` event) and the next one still runs.
 * Only the SDK emits: the type has no `emit`.
 *
 * @example
 * ```ts
 * const events: TypedEventEmitter<MspEvents> = client.events;
 * const onEnd = (params: TurnCompletedParams) => console.log(params.turnId, params.terminal);
 * events.on("turn/completed", onEnd);
 * events.off("turn/completed", onEnd);
 * console.log(events.listenerCount("turn/completed")); // 0
 * ```
 */
export interface TypedEventEmitter<Events extends EventArgsMap<Events>> {
  /** Call `listener` on every `event`; returns the emitter. */
  on<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void, context?: unknown): this;
  /** The same as {@link TypedEventEmitter.on}. */
  addListener<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void, context?: unknown): this;
  /** Call `listener` on the next `event` only. */
  once<E extends keyof Events>(event: E, listener: (...args: Events[E]) => void, context?: unknown): this;
  /** Remove the matching subscriptions of `event` (every one of them when `listener` is absent). */
  off<E extends keyof Events>(event: E, listener?: (...args: Events[E]) => void, context?: unknown, once?: boolean): this;
  /** The same as {@link TypedEventEmitter.off}. */
  removeListener<E extends keyof Events>(event: E, listener?: (...args: Events[E]) => void, context?: unknown, once?: boolean): this;
  /** Remove every listener of `event`, or of every event. */
  removeAllListeners(event?: keyof Events): this;
  /** The listeners of `event`, in the order they run. */
  listeners<E extends keyof Events>(event: E): Array<(...args: Events[E]) => void>;
  /** How many listeners `event` has. */
  listenerCount(event: keyof Events): number;
  /** The events that have listeners. */
  eventNames(): Array<keyof Events>;
}
