/**
 * What the benches share to time things: a sleep, the nearest-rank percentile of samples, and a
 * bound on a wait.
 */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

/** The nearest-rank `p`th percentile (0–100) of `xs` (not sorted in place). */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
}

/** Rejects after `ms` with `what`, for bounding a wait. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))),
  ]);
}
