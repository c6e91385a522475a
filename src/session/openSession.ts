/**
 * openSession: open an {@link MspSession} (resume the kept or given session, or create one) and
 * resolve once the first attempt is over, open or not: a page shows what it kept at once, and
 * the session goes on trying in the background.
 */
import { reconnectPolicy } from "./reconnectPolicy.js";
import type { MspSession } from "./mspSession.js";
import { SessionEngine } from "./sessionEngine.js";
import { SessionModelChoice } from "./sessionModelChoice.js";
import type { SessionOptions } from "./sessionOptions.js";
import { SessionKeeper } from "./sessionKeeper.js";
import { memoryStorage } from "./sessionStorage.js";
import type { SessionStorageError } from "./sessionStorageError.js";
import { SessionTree } from "./sessionTree.js";
import { SessionTurns } from "./sessionTurns.js";

/** The key a session is kept under unless `storageKey` says otherwise. */
const DEFAULT_KEY = "muse-code:session";

/**
 * Open a session that outlives its connections. Resolves once the first connection attempt is
 * over: `connection.state` is then `open`, `reconnecting` (it failed; retries go on) or `closed`
 * (the token was refused, or `reconnect: false`). Turns kept in `storage` show at once. Throws a
 * TypeError or RangeError for bad options; never rejects for a connection problem (that is in
 * the snapshot).
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 * import { openSession } from "@muse-code/sdk/session";
 *
 * const chat = await openSession({ connect: () => connectWebSocket(url, { token }), storage: sessionStorage });
 * chat.subscribe(() => render(chat.getSnapshot()));
 * ```
 */
export async function openSession(options: SessionOptions): Promise<MspSession> {
  if (typeof options !== "object" || options === null || typeof options.connect !== "function") {
    throw new TypeError("openSession: options.connect must be a function that returns a Promise<MspClient>");
  }
  if (options.sessionId !== undefined && (typeof options.sessionId !== "string" || options.sessionId === "")) {
    throw new TypeError("openSession: options.sessionId must be a non-empty string");
  }
  const limits = { turns: 100, itemsPerTurn: 1000, storedBytes: 1024 * 1024, subagentSessions: 256, ...options.limits };
  for (const [field, value] of Object.entries(limits)) {
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
      throw new RangeError(`openSession: limits.${field} must be a whole number ≥ 1, got ${String(value)}`);
  }
  if (options.model !== undefined && (typeof options.model !== "string" || options.model === "")) {
    throw new TypeError("openSession: options.model must be a non-empty string");
  }
  const commandTimeoutMs = options.commandTimeoutMs ?? 30_000;
  if (typeof commandTimeoutMs !== "number" || Number.isNaN(commandTimeoutMs) || commandTimeoutMs <= 0) {
    throw new RangeError(`openSession: commandTimeoutMs must be a number > 0, got ${String(commandTimeoutMs)}`);
  }
  const warn = options.onWarning ?? ((message: string) => console.warn(`@muse-code/sdk/session: ${message}`));
  // A warning handler that throws must not throw into the app through a Stop or a write.
  const onWarning = (message: string) => {
    try {
      warn(message);
    } catch {
      // ignored: the warning was for the app, which refused it
    }
  };
  const onStorageError = (error: SessionStorageError) => {
    onWarning(error.message);
    try {
      options.onStorageError?.(error);
    } catch {
      // ignored: as for onWarning
    }
  };
  const keeper = new SessionKeeper(options.storage ?? memoryStorage(), options.storageKey ?? DEFAULT_KEY, limits.storedBytes, onStorageError);
  const kept = keeper.read();
  const tree = new SessionTree(limits.subagentSessions, limits.turns, onWarning);
  const turns = new SessionTurns(limits.turns, limits.itemsPerTurn, (turnId) => tree.below(turnId));
  // A given session that is not the kept one starts with nothing kept.
  const keptOne = options.sessionId === undefined || options.sessionId === kept.sessionId;
  const model = new SessionModelChoice(options.model, keptOne ? kept.model : undefined);
  if (keptOne) {
    for (const turn of kept.turns) turns.restore(turn);
    if (kept.sessionId !== undefined) tree.restore(kept.sessionId, { childCursors: kept.childCursors ?? {}, turns: kept.tree ?? [] });
  }
  const session = new SessionEngine(
    {
      connect: options.connect,
      sessionId: options.sessionId,
      keeper,
      turns,
      tree,
      model,
      reconnect: reconnectPolicy(options.reconnect),
      commandTimeoutMs,
      onWarning,
    },
    kept,
  );
  await session.start();
  return session;
}
