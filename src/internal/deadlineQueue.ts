/**
 * deadlineQueue: one timer for every bounded wait in the runtime, instead of one armed and
 * cleared per command. The timer is armed for the earliest deadline of the waits queued, so it
 * is re-armed only when a wait is due sooner than that, or when it fires; firing expires every
 * wait due by then (in the order they were queued) and arms for the next. With no wait left
 * the timer is cleared, at the end of the current microtask queue: a caller that sends its next
 * command as soon as the last one settles (round trips in a loop) keeps the same timer, and an
 * idle runtime holds none.
 */

/** A wait with a deadline: it expires at `at` unless it settles first. */
export interface Expiring {
  /** When it falls due, in `performance.now()` time. @unit milliseconds */
  readonly at: number;
  expire(): void;
}

/** The waits queued and not yet settled, in the order they were queued. */
const waits = new Set<Expiring>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** When the timer fires (Infinity: no timer), in `performance.now()` time. @unit milliseconds */
let armedAt = Infinity;

/** Expire `wait` at `wait.at`, unless {@link settledDeadline} takes it out first. */
export function addDeadline(wait: Expiring): void {
  waits.add(wait);
  if (wait.at < armedAt) arm(wait.at);
}

/** `wait` settled (or expired): it leaves the queue. */
export function settledDeadline(wait: Expiring): void {
  // A resolved promise's reaction, not queueMicrotask(): Node wraps each of those in an async resource.
  if (waits.delete(wait) && waits.size === 0) void Promise.resolve().then(stopIfIdle);
}

/** How many waits are queued. */
export function deadlineCount(): number {
  return waits.size;
}

function stopIfIdle(): void {
  if (waits.size === 0) arm(Infinity);
}

/** Arm the timer for `at` (a time already past fires at once), or clear it (Infinity). */
function arm(at: number): void {
  clearTimeout(timer);
  armedAt = at;
  timer = at < Infinity ? setTimeout(fire, at - performance.now()) : undefined;
}

function fire(): void {
  // The timer was armed for `armedAt`: all that is due by then expires, even on a clock that
  // the timers ran ahead of (a test's fake timers).
  const now = Math.max(performance.now(), armedAt);
  armedAt = Infinity;
  let next = Infinity;
  // A wait that expires leaves the set as it settles; a Set iterates on past deletions.
  for (const wait of waits) {
    if (wait.at <= now) wait.expire();
    else next = Math.min(next, wait.at);
  }
  if (next < armedAt) arm(next);
}
