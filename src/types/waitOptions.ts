/**
 * WaitOptions: the time bound and signal every public wait takes.
 */

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
