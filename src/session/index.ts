/**
 * `@muse-code/sdk/session`: sessions that outlive a connection (browser-safe). `openSession`
 * resumes or creates an MSP session, keeps its turns across drops, reloads and host restarts, and
 * reconnects with backoff; only the host ends a turn. Any new export added here becomes public
 * API. Use named exports, not wildcards.
 */
export { openSession } from "./openSession.js";
export type { MspSession, SessionTurnHandle } from "./mspSession.js";
export type { SessionOptions, SessionLimits } from "./sessionOptions.js";
export type { ReconnectOptions } from "./reconnectPolicy.js";
export { memoryStorage } from "./sessionStorage.js";
export type { KeyValueStorage } from "./sessionStorage.js";
export { SessionStorageError } from "./sessionStorageError.js";
export type { SessionStorageErrorKind } from "./sessionStorageError.js";
export type {
  SessionSnapshot,
  SessionConnection,
  SessionConnectionState,
  SessionCloseKind,
  SessionCloseReason,
  SessionTurn,
  SessionTurnPhase,
  SessionApproval,
  SessionStopState,
  SessionModel,
} from "./sessionSnapshot.js";
