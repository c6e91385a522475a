/**
 * Why a session's connection attempt failed, or why its open connection ended, in the words
 * `SessionConnection.reason` shows: a refused token gives up at once, anything else is retried.
 */
import type { CloseInfo } from "../types/closeInfo.js";
import { MspError } from "../errors.js";
import type { SessionCloseReason } from "./sessionSnapshot.js";

/** Why a connection attempt failed (the connect, or the resume on it). */
export function describeFailure(error: unknown): SessionCloseReason {
  const message = error instanceof Error ? error.message : String(error);
  const data = MspError.is(error) ? (error.data as Record<string, unknown>) : {};
  const closeCode = typeof data["closeCode"] === "number" ? data["closeCode"] : undefined;
  const said = `${message} ${typeof data["reason"] === "string" ? data["reason"] : ""}`;
  if (/\b401\b/.test(said)) return { kind: "tokenRefused", message: `the host refused the token (HTTP 401): ${message}` };
  // A browser hides a refused handshake's HTTP status: 1006 before the socket opened says only that it did not.
  const why =
    closeCode === 1006
      ? `${message}: the WebSocket handshake did not complete (WebSocket 1006). A browser hides why: no host at that address, or the host refused it (HTTP 403 for a Host or Origin it does not allow, 401 for the token); the host logs each refusal`
      : message;
  return { kind: "lost", message: why, ...(closeCode === undefined ? {} : { closeCode }) };
}

/** Why an open connection ended: lost (1006, a host process gone), closed by the host (its close code), or closed on this side (1005). */
export function describeClose(info: CloseInfo): SessionCloseReason {
  const code = info.closeCode;
  // The session detaches before it closes a client itself, so a close that reaches here is never its own.
  if (code === undefined) return { kind: "lost", message: info.reason };
  if (code === 1005) return { kind: "closedHere", message: "the connection was closed on this side, with no close code (WebSocket 1005)", closeCode: code };
  if (code === 1006) return { kind: "lost", message: info.reason, closeCode: code };
  return { kind: "hostClosed", message: info.reason, closeCode: code };
}
