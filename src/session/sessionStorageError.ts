/**
 * SessionStorageError: the session's storage refused a read or a write, and the session went on in
 * memory. Given to `SessionOptions.onStorageError` once, when the session leaves the storage.
 */

/**
 * Why the storage was left: its quota is full, or it failed otherwise (disabled, unreadable, an I/O error).
 *
 * @example
 * ```ts
 * const why = (kind: SessionStorageErrorKind) => (kind === "quotaExceeded" ? "the browser's storage is full" : "the storage failed");
 * ```
 */
export type SessionStorageErrorKind = "quotaExceeded" | "failed";

/**
 * The storage a session was given failed, so the session is kept in memory from then on
 * (`snapshot.storage` is `"memory"`): what it shows stays, and a reload restores what the storage
 * last held whole. `cause` is the storage's own error (a `QuotaExceededError` DOMException, an
 * `ENOSPC` from a file).
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 *
 * const chat = await openSession({
 *   connect: () => connectWebSocket(url, { token }),
 *   storage: localStorage,
 *   onStorageError: (error: SessionStorageError) => {
 *     if (error.kind === "quotaExceeded") status.textContent = "This chat no longer survives a reload: the browser's storage is full.";
 *   },
 * });
 * ```
 */
export class SessionStorageError extends Error {
  /** `quotaExceeded` for a full storage, `failed` for anything else. */
  readonly kind: SessionStorageErrorKind;
  /** What the storage was doing when it failed. */
  readonly operation: "read" | "write" | "remove";

  constructor(kind: SessionStorageErrorKind, operation: "read" | "write" | "remove", cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`the session's storage failed (${why}): it goes on in memory, and a reload will not restore it`, { cause });
    this.name = "SessionStorageError";
    this.kind = kind;
    this.operation = operation;
  }
}

/**
 * The kind of a storage's error: a browser's `QuotaExceededError` (Firefox's `NS_ERROR_DOM_QUOTA_REACHED`, legacy code 22) or a full disk is `quotaExceeded`.
 *
 * @example
 * ```ts
 * storageErrorKind(Object.assign(new Error("disk full"), { code: "ENOSPC" })); // "quotaExceeded"
 * ```
 */
export function storageErrorKind(error: unknown): SessionStorageErrorKind {
  if (typeof error !== "object" || error === null) return "failed";
  const { name, code } = error as { name?: unknown; code?: unknown };
  if (name === "QuotaExceededError" || name === "NS_ERROR_DOM_QUOTA_REACHED") return "quotaExceeded";
  return code === 22 || code === 1014 || code === "ENOSPC" || code === "EDQUOT" ? "quotaExceeded" : "failed";
}
