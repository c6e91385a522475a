/**
 * CloseInfo: why and how a connection closed. `ConnectionClosedData` (errors.ts) is the same
 * type, and a channel's `EndDetails` (framing/byteChannel.ts) is its partial form.
 */

/**
 * Why and how a client's connection closed.
 *
 * @example
 * ```ts
 * const info: CloseInfo = await client.closed;
 * console.log(info.reason, info.exitCode ?? info.signal ?? info.closeCode);
 * ```
 */
export interface CloseInfo {
  /** Plain-words reason, e.g. "closed by the client" or "the host closed the connection". */
  reason: string;
  /** Exit code of a child-process host, when known. */
  exitCode?: number | null;
  /** Signal that ended a child-process host, when known. */
  signal?: string | null;
  /**
   * The WebSocket close code, when the host closed a WebSocket connection, it was lost (1006: no
   * closing handshake) or its handshake failed: RFC 6455 §7.4 codes, or the host's own 4000–4999.
   * Absent when the client closed it.
   */
  closeCode?: number;
  /** The WebSocket close reason the host sent with `closeCode` (`""` when it sent none). */
  closeReason?: string;
}
