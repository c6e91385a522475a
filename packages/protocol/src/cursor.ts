/**
 * View cursors: the per-session, strictly increasing position of a notification,
 * `v:<sessionId>:<n>`. The host formats them; the client and the transcript checker parse them.
 */

/** The view cursor of a session's `n`-th notification. */
export function formatViewCursor(sessionId: string, n: number): string {
  return `v:${sessionId}:${n}`;
}

/**
 * The sequence number of `cursor` when it is a well-formed cursor of `sessionId` (`n` is `0` or
 * digits without a leading zero), else `undefined`: the cursor is then opaque, compared for
 * equality only.
 */
export function parseViewCursor(cursor: string, sessionId: string): number | undefined {
  // Read in place, one cursor a notification: no prefix string, slice or regex (and `indexOf`, as
  // Node 20's `startsWith(sessionId, 2)` is several times slower). NaN unless the prefix is this
  // session's and the number has no leading zero; a character not a digit makes it NaN for good.
  const start = sessionId.length + 3;
  const end = cursor.length;
  let n =
    end > start && cursor.startsWith("v:") && cursor.indexOf(sessionId, 2) === 2 && cursor[start - 1] === ":" && !(cursor[start] === "0" && end > start + 1)
      ? 0
      : NaN;
  for (let i = start; i < end; i++) {
    const digit = cursor.charCodeAt(i) - 48;
    n = digit >= 0 && digit <= 9 ? n * 10 + digit : NaN; // exact below 2^53; a larger number stays above it, and is refused
  }
  return Number.isSafeInteger(n) ? n : undefined;
}
