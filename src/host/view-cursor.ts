/** View cursors: the per-session, strictly increasing position of a notification, `v:<sessionId>:<n>`. */
import { cursorSequence } from "../protocol/index.js";

/**
 * Formats the view cursor of the `n`-th notification of a session.
 *
 * @example
 * ```ts
 * viewCursor("0198f0aa-1111-7000-8000-0000000000aa", 9); // "v:0198f0aa-1111-7000-8000-0000000000aa:9"
 * ```
 */
export function viewCursor(sessionId: string, n: number): string {
  return `v:${sessionId}:${n}`;
}

/**
 * The sequence number of `cursor` when it is a well-formed cursor of `sessionId`, else `undefined`.
 *
 * @example
 * ```ts
 * parseViewCursor(`v:${id}:4`, id); // 4
 * parseViewCursor("v:other:4", id); // undefined
 * ```
 */
export function parseViewCursor(cursor: string, sessionId: string): number | undefined {
  if (!cursor.startsWith(`v:${sessionId}:`)) return undefined;
  const n = cursorSequence(cursor);
  return n !== undefined && n >= 0 ? n : undefined;
}
