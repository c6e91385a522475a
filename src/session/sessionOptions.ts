/**
 * The options of `openSession`: how to connect, which session, where to keep it, how to
 * reconnect, and the bounds.
 */
import type { MspClient } from "../client/mspClient.js";
import type { ReconnectOptions } from "./reconnectPolicy.js";
import type { KeyValueStorage } from "./sessionStorage.js";
import type { SessionStorageError } from "./sessionStorageError.js";

/**
 * The bounds of a session, in memory and in storage.
 *
 * @example
 * ```ts
 * const limits: SessionLimits = { turns: 50, itemsPerTurn: 200, storedBytes: 512 * 1024 };
 * ```
 */
export interface SessionLimits {
  /** Turns kept; the oldest ended ones are dropped first (an unended turn is never dropped). @defaultValue 100 */
  turns?: number;
  /** Items kept per turn; the oldest finished ones are dropped and counted in `droppedItems`. @defaultValue 1000 */
  itemsPerTurn?: number;
  /**
   * The most the session keeps in its storage, in UTF-16 code units over all the keys it writes
   * (about bytes for ASCII text). Ended turns are dropped first; if the unended turns alone do not
   * fit, they are kept without their items, the cursor is left out and a reload replays the session whole.
   * @unit UTF-16 code units
   * @defaultValue 1048576
   */
  storedBytes?: number;
  /**
   * Subagent sessions followed below the session's turns, at any depth: their turns
   * show in `SessionTurn.subagents`, their questions in the turn's `approvals`, and each one's
   * cursor is kept for `session/resume.childCursors`. Past it the oldest is no longer followed
   * (one warning).
   * @unit sessions
   * @defaultValue 256
   */
  subagentSessions?: number;
}

/**
 * Options of `openSession`.
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 *
 * const options: SessionOptions = {
 *   connect: () => connectWebSocket(url, { token }),
 *   storage: window.sessionStorage,
 *   reconnect: { initialDelayMs: 250, maxDelayMs: 10_000, maxAttempts: 8 },
 * };
 * const chat = await openSession(options);
 * ```
 */
export interface SessionOptions {
  /** Opens a new connection: called for the first one and again on every reconnect. */
  connect: () => Promise<MspClient>;
  /**
   * The model a new session is created with (`session/create`'s `model`); without it, the host's
   * default. A session resumed keeps the model it runs: switch it with `MspSession.setModel`.
   */
  model?: string;
  /** Resume this session; without it, the one kept in `storage` is resumed, else one is created. */
  sessionId?: string;
  /**
   * Where the session id, the cursor, the turns shown and the pending Stops are kept:
   * `sessionStorage` or `localStorage` in a browser, `fileStorage(path)` from
   * `@muse-code/sdk/node`, memory by default.
   */
  storage?: KeyValueStorage;
  /** The key in `storage`. @defaultValue "muse-code:session" */
  storageKey?: string;
  /** Backoff between attempts, or `false` to never reconnect (a drop then gives up). */
  reconnect?: ReconnectOptions | false;
  limits?: SessionLimits;
  /** Hears what the session degrades or drops without throwing (a full storage, a listener that threw). @defaultValue console.warn */
  onWarning?: (message: string) => void;
  /**
   * Hears, once, that `storage` failed (a full quota, a disabled storage) and the session went on in
   * memory: a {@link SessionStorageError} whose `kind` is `quotaExceeded` or `failed`. `onWarning`
   * hears its message too.
   */
  onStorageError?: (error: SessionStorageError) => void;
  /** Bounds each command the session sends (resume, create, start, cancel). @unit milliseconds @defaultValue 30000 */
  commandTimeoutMs?: number;
}
