/**
 * Bounded polling for tests that watch real processes and hosts: a condition no event announces
 * (a pid appearing, a file written) is checked every 50 ms until it holds, or the wait fails
 * after `timeoutMs`, naming what it waited for.
 */

/** How often a condition is checked. @unit milliseconds */
const EVERY_MS = 50;

/** Resolves once `predicate()` is true; rejects after `timeoutMs`, naming `what`. */
export async function pollUntil(predicate: () => boolean, what: string, timeoutMs: number): Promise<void> {
  await pollFor(() => (predicate() ? true : undefined), what, timeoutMs);
}

/** Resolves with the first value `find()` returns that is not `undefined`; rejects after `timeoutMs`, naming `what`. */
export async function pollFor<T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, EVERY_MS))) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}
