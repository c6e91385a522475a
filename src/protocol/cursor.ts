/**
 * View cursors: the per-session, strictly increasing position of a notification,
 * `v:<sessionId>:<n>`. The host formats them; the client and the transcript checker parse them.
 */

/**
 * The view cursor of a session's `n`-th notification.
 *
 * @example
 * ```ts
 * formatViewCursor("0198f0aa-1111-7000-8000-0000000000aa", 9); // "v:0198f0aa-1111-7000-8000-0000000000aa:9"
 * ```
 */
export function formatViewCursor(sessionId: string, n: number): string {
  return `v:${sessionId}:${n}`;
}

/**
 * The sequence number of `cursor` when it is a well-formed cursor of `sessionId`, else
 * `undefined` (the cursor is then opaque: it can be compared for equality only).
 *
 * @example
 * ```ts
 * parseViewCursor(`v:${id}:4`, id); // 4
 * parseViewCursor("v:other:4", id); // undefined (another session's)
 * parseViewCursor(`v:${id}:04`, id); // undefined (strict: `0` or digits without a leading zero)
 * ```
 */
export function parseViewCursor(cursor: string, sessionId: string): number | undefined {
  const prefix = `v:${sessionId}:`;
  if (!cursor.startsWith(prefix)) return undefined;
  const digits = cursor.slice(prefix.length);
  if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : undefined;
}
