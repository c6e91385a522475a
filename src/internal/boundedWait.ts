/**
 * boundedWait: a promise that settles exactly once, by value, by timeout or by abort, and
 * leaves the deadline queue and removes its abort listener the moment it settles.
 */
import { MspError, MspErrorKinds, type AbortedData } from "../errors.js";
import type { WaitOptions } from "../types/waitOptions.js";
import { addDeadline, settledDeadline } from "./deadlineQueue.js";

/**
 * The longest timer a runtime honours (2³¹−1 ms, about 24.8 days); a longer `timeoutMs` means
 * "no time bound" (the wait still ends on abort or when the connection closes).
 * @unit milliseconds
 */
const MAX_TIMER_MS = 2_147_483_647;

/** What a bounded wait is for, copied into its timeout/abort error's `data`. */
export type WaitSubject = AbortedData;

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
 * so the owner can drop the wait from its table. The time bound is a place in the one deadline
 * queue (internal/deadlineQueue.ts), not a timer of its own. The wait is one object with
 * shorthand methods: no per-wait closures beyond the promise's executor (a build that keeps
 * names wraps every named closure, a cost on every command).
 */
export function boundedWait<T>(what: string, subject: WaitSubject, options: WaitOptions, defaultTimeoutMs: number, onSettle: () => void): BoundedWait<T> {
  let resolveFn!: (value: T) => void;
  let rejectFn!: (error: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    resolveFn = resolve;
    rejectFn = reject;
  });
  let unsubscribeAbort: (() => void) | undefined;
  const signal = options.signal;
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  // Each method names `wait`, never `this`: they are handed around unbound (`then(wait.resolve)`).
  const wait = {
    promise,
    settled: false,
    at: performance.now() + timeoutMs,
    resolve(value: T): void {
      wait.settle(resolveFn, value);
    },
    reject(error: unknown): void {
      wait.settle(rejectFn, error);
    },
    // The promise first: the deadline queue then sees a caller's next command before it finds
    // its timer idle.
    settle(settle: (x: never) => void, x: unknown): void {
      if (wait.settled) return;
      wait.settled = true;
      settle(x as never);
      settledDeadline(wait);
      unsubscribeAbort?.();
      onSettle();
    },
    expire(): void {
      wait.reject(new MspError(MspErrorKinds.timeout, `${what} timed out after ${timeoutMs} ms`, { ...subject, timeoutMs }));
    },
    abort(): void {
      wait.reject(abortedError(what, subject, signal?.reason));
    },
  };
  const badTimeout = timeoutProblem(timeoutMs);
  // Bad input is a typed rejection, never a synchronous throw out of command() or terminalOf().
  if (badTimeout !== undefined) wait.reject(badTimeout);
  else if (signal?.aborted) wait.abort();
  else {
    // Timers cannot run longer than MAX_TIMER_MS (Node would fire at once): longer is "no time bound".
    if (timeoutMs <= MAX_TIMER_MS) addDeadline(wait);
    if (signal !== undefined) unsubscribeAbort = onAbortOf(signal, wait.abort);
  }
  return wait;
}

/**
 * One `abort` listener per signal, shared by every wait on it: a caller may hang any number of
 * waits on one signal without a MaxListenersExceededWarning, and the listener goes when the
 * last wait settles.
 */
const abortFanout = new WeakMap<AbortSignal, { waits: Set<() => void>; fire(): void }>();

function onAbortOf(signal: AbortSignal, callback: () => void): () => void {
  let fanout = abortFanout.get(signal);
  if (fanout === undefined) {
    const waits = new Set<() => void>();
    fanout = {
      waits,
      fire(): void {
        abortFanout.delete(signal);
        for (const wait of [...waits]) wait();
      },
    };
    abortFanout.set(signal, fanout);
    signal.addEventListener("abort", fanout.fire, { once: true });
  }
  const { waits, fire } = fanout;
  waits.add(callback);
  return () => {
    if (!waits.delete(callback) || waits.size > 0) return;
    signal.removeEventListener("abort", fire);
    if (abortFanout.get(signal)?.waits === waits) abortFanout.delete(signal);
  };
}

/** The `aborted` error for a wait, with the signal's reason as `cause`. */
function abortedError(what: string, subject: WaitSubject, reason: unknown): MspError<"aborted"> {
  return new MspError(MspErrorKinds.aborted, `${what} was aborted`, subject, { cause: reason });
}

/**
 * Race `promise` against `timeoutMs` and `signal` without touching the underlying work: the
 * caller stops waiting, the work goes on. Timer and abort listener go when either side settles.
 */
export function bounded<T>(promise: Promise<T>, what: string, subject: WaitSubject, options: WaitOptions, defaultTimeoutMs: number): Promise<T> {
  const wait = boundedWait<T>(what, subject, options, defaultTimeoutMs, () => {});
  promise.then(wait.resolve, wait.reject);
  return wait.promise;
}
