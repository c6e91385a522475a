/**
 * boundedWait: a promise that settles exactly once, by value, by timeout or by abort, and
 * removes its timer and abort listener the moment it settles.
 */
import { MspError, MspErrorKinds, type AbortedData } from "../errors.js";

/**
 * The longest timer a runtime honours (2³¹−1 ms, about 24.8 days); a longer `timeoutMs` means
 * "no time bound" (the wait still ends on abort or when the connection closes).
 * @unit milliseconds
 */
const MAX_TIMER_MS = 2_147_483_647;

/** What a bounded wait is for, copied into its timeout/abort error's `data`. */
export type WaitSubject = AbortedData;

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
  /**
   * Give up after this long. `Infinity` (or anything over 2³¹−1 ms) waits until settled, aborted,
   * or the connection closes. A negative or NaN value rejects with a RangeError.
   * @unit milliseconds
   */
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

/** The RangeError a bad `timeoutMs` (negative, NaN, not a number) gets, or undefined when it is fine. */
export function timeoutProblem(timeoutMs: unknown): RangeError | undefined {
  if (typeof timeoutMs === "number" && timeoutMs >= 0) return undefined;
  return new RangeError(`timeoutMs must be a non-negative number of milliseconds, got ${String(timeoutMs)}`);
}

/**
 * Create a wait bounded by `timeoutMs` and `signal`. `onSettle` runs once, however it settles,
 * so the owner can drop the wait from its table.
 */
export function boundedWait<T>(what: string, subject: WaitSubject, options: WaitOptions & { defaultTimeoutMs: number }, onSettle: () => void): BoundedWait<T> {
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
  const badTimeout = timeoutProblem(timeoutMs);
  if (badTimeout !== undefined) {
    // Bad input is a typed rejection, never a synchronous throw out of command() or terminalOf().
    if (finish()) rejectFn(badTimeout);
    return wait;
  }
  if (signal?.aborted) {
    onAbort();
    return wait;
  }
  // Timers cannot run longer than MAX_TIMER_MS (Node would fire at once): longer is "no timer".
  if (timeoutMs <= MAX_TIMER_MS) {
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
function abortedError(what: string, subject: WaitSubject, reason: unknown): MspError<"aborted"> {
  return new MspError(MspErrorKinds.aborted, `${what} was aborted`, subject, { cause: reason });
}

/**
 * Race `promise` against `timeoutMs` and `signal` without touching the underlying work: the
 * caller stops waiting, the work goes on. Timer and abort listener go when either side settles.
 */
export function bounded<T>(promise: Promise<T>, what: string, subject: WaitSubject, options: WaitOptions & { defaultTimeoutMs: number }): Promise<T> {
  const wait = boundedWait<T>(what, subject, options, () => {});
  promise.then(wait.resolve, wait.reject);
  return wait.promise;
}
