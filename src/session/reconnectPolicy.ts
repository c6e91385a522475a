/**
 * How a session reconnects: exponential backoff with jitter, a cap on the delay, and a number of
 * failed attempts in a row after which it stops and says the host refused or is unreachable.
 */

/**
 * The `reconnect` option of `openSession`.
 *
 * @example
 * ```ts
 * const reconnect: ReconnectOptions = { initialDelayMs: 250, maxDelayMs: 10_000, maxAttempts: 8 };
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 * const chat = await openSession({ connect: () => connectWebSocket(url, { token }), reconnect });
 * ```
 */
export interface ReconnectOptions {
  /** The delay before the first retry; each failure doubles it. @unit milliseconds @defaultValue 500 */
  initialDelayMs?: number;
  /** The longest delay between attempts. @unit milliseconds @defaultValue 15000 */
  maxDelayMs?: number;
  /** Failed attempts in a row before the session stops trying (`unreachable`). @defaultValue 10 */
  maxAttempts?: number;
}

/** The options with their defaults filled in and checked. */
export interface ReconnectPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxAttempts: number;
}

/** The policy for `reconnect` (`false`: never retry), or a RangeError naming the bad field. */
export function reconnectPolicy(reconnect: ReconnectOptions | false | undefined): ReconnectPolicy | undefined {
  if (reconnect === false) return undefined;
  const policy = { initialDelayMs: 500, maxDelayMs: 15_000, maxAttempts: 10, ...reconnect };
  for (const [field, value] of Object.entries(policy)) {
    if (typeof value !== "number" || Number.isNaN(value) || value < 0)
      throw new RangeError(`openSession: reconnect.${field} must be a number ≥ 0, got ${String(value)}`);
  }
  if (policy.maxAttempts < 1) throw new RangeError(`openSession: reconnect.maxAttempts must be at least 1, got ${policy.maxAttempts}`);
  return policy;
}

/**
 * The delay before attempt `attempt` (1 = the first retry): `initialDelayMs · 2^(attempt−1)`,
 * capped at `maxDelayMs`, then drawn between half of that and all of it ("equal jitter"), so that
 * pages dropped together do not all come back at once. `random` is `Math.random` unless a test
 * pins it.
 */
export function backoffDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
