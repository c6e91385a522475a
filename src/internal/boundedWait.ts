/**
 * boundedWait: a promise that settles exactly once, by value, by timeout or by abort, and
 * removes its timer and abort listener the moment it settles.
 */
import { MspError, MspErrorKinds } from "../errors.js";
import type { JsonValue } from "../protocol/index.js";

/** What a bounded wait is for, copied into its timeout/abort error's `data`. */
export type WaitSubject = Record<string, JsonValue | undefined>;

/**
 * Options every public wait takes.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: WaitOptions = { timeoutMs: 10_000, signal: controller.signal };
 * const terminal = await client.turns.terminalOf(turnId, options);
 * ```
 */
export interface WaitOptions {
  /** Give up after this long. `Infinity` waits until settled or the connection closes. @unit milliseconds */
  timeoutMs?: number;
  /** Give up when this signal aborts; the error's `cause` is `signal.reason`. */
  signal?: AbortSignal;
}

/** A pending bounded wait. */
export interface BoundedWait<T> {
  readonly promise: Promise<T>;
  /** Settle with a value (no-op once settled). */
  resolve(value: T): void;
  /** Settle with an error (no-op once settled). */
  reject(error: unknown): void;
  readonly settled: boolean;
}

/**
 * Create a wait bounded by `timeoutMs` and `signal`. `onSettle` runs once, however it settles,
 * so the owner can drop the wait from its table.
 */
export function boundedWait<T>(
  what: string,
  subject: WaitSubject,
  options: WaitOptions & { defaultTimeoutMs: number },
  onSettle: () => void,
): BoundedWait<T> {
  let resolveFn!: (value: T) => void;
  let rejectFn!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    resolveFn = resolve;
    rejectFn = reject;
  });
  let settled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unsubscribeAbort: () => void = () => {};
  const signal = options.signal;
  const timeoutMs = options.timeoutMs ?? options.defaultTimeoutMs;

  const finish = (): boolean => {
    if (settled) return false;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    unsubscribeAbort();
    onSettle();
    return true;
  };
  function onAbort(): void {
    if (finish()) rejectFn(abortedError(what, subject, signal?.reason));
  }
  const wait: BoundedWait<T> = {
    promise,
    resolve(value) {
      if (finish()) resolveFn(value);
    },
    reject(error) {
      if (finish()) rejectFn(error);
    },
    get settled() {
      return settled;
    },
  };
  if (signal?.aborted) {
    onAbort();
    return wait;
  }
  if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a non-negative number of milliseconds, got ${timeoutMs}`);
  if (Number.isFinite(timeoutMs)) {
    timer = setTimeout(() => {
      if (finish()) rejectFn(new MspError(MspErrorKinds.timeout, `${what} timed out after ${timeoutMs} ms`, { ...subject, timeoutMs }));
    }, timeoutMs);
  }
  if (signal !== undefined) unsubscribeAbort = onAbortOf(signal, onAbort);
  return wait;
}

/**
 * One `abort` listener per signal, shared by every wait on it: a caller may hang any number of
 * waits on one signal without a MaxListenersExceededWarning, and the listener goes when the
 * last wait settles.
 */
const abortFanout = new WeakMap<AbortSignal, Set<() => void>>();

function onAbortOf(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = abortFanout.get(signal);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    const fire = () => {
      abortFanout.delete(signal);
      for (const cb of [...set]) cb();
    };
    abortFanout.set(signal, set);
    signal.addEventListener("abort", fire, { once: true });
    listenerOf.set(set, fire);
  }
  const set = callbacks;
  set.add(callback);
  return () => {
    if (!set.delete(callback) || set.size > 0) return;
    const fire = listenerOf.get(set);
    if (fire !== undefined) signal.removeEventListener("abort", fire);
    if (abortFanout.get(signal) === set) abortFanout.delete(signal);
  };
}

const listenerOf = new WeakMap<Set<() => void>, () => void>();

/** The `aborted` error for a wait, with the signal's reason as `cause`. */
export function abortedError(what: string, subject: WaitSubject, reason: unknown): MspError {
  return new MspError(MspErrorKinds.aborted, `${what} was aborted`, subject, { cause: reason });
}

/**
 * Race `promise` against `signal` without touching the underlying work; the abort listener is
 * removed when either side settles.
 */
export function withSignal<T>(promise: Promise<T>, what: string, subject: WaitSubject, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  const wait = boundedWait<T>(what, subject, { signal, timeoutMs: Infinity, defaultTimeoutMs: Infinity }, () => {});
  promise.then(wait.resolve, wait.reject);
  return wait.promise;
}
