/**
 * ByteChannel: the runtime-neutral byte pipe that framing reads from and writes to.
 * Node stdio, a socket, or an in-memory pair all adapt to it.
 */
import type { CloseInfo } from "../types/closeInfo.js";

/**
 * How a channel ended, when it knows: a child process's exit code or signal, or a WebSocket's
 * close code and reason. The fields of {@link CloseInfo}, each optional.
 *
 * @example
 * ```ts
 * channel.onEnd((details?: EndDetails) => {
 *   if (details?.exitCode != null) console.log(`the host exited with code ${details.exitCode}`);
 * });
 * ```
 */
export type EndDetails = Partial<CloseInfo>;

/**
 * Something that can be stopped: returned by every `on…` subscription.
 *
 * @example
 * ```ts
 * const off: Unsubscribe = channel.onData((chunk) => console.log(`${chunk.byteLength} bytes`));
 * off(); // stop listening
 * ```
 */
export interface Unsubscribe {
  (): void;
}

/**
 * A duplex byte pipe. Bytes arrive in arbitrary chunks; framing reassembles messages.
 *
 * @example
 * ```ts
 * const channel: ByteChannel = {
 *   onData: (cb) => { socket.on("data", cb); return () => socket.off("data", cb); },
 *   onEnd: (cb) => { socket.on("end", cb); return () => socket.off("end", cb); },
 *   onError: (cb) => { socket.on("error", cb); return () => socket.off("error", cb); },
 *   write: (bytes) => new Promise((ok, fail) => socket.write(bytes, (e) => (e ? fail(e) : ok()))),
 *   end: () => socket.end(),
 * };
 * ```
 */
export interface ByteChannel {
  /** Subscribe to incoming chunks. */
  onData(listener: (chunk: Uint8Array) => void): Unsubscribe;
  /**
   * Subscribe to end-of-stream (the peer closed its side). A channel over a child process
   * passes `{ exitCode, signal }` so pending work can say how the host ended.
   */
  onEnd(listener: (details?: EndDetails) => void): Unsubscribe;
  /** Subscribe to transport errors (EPIPE, reset, …). */
  onError(listener: (error: unknown) => void): Unsubscribe;
  /**
   * Write bytes, in order. Rejects (or throws) when the pipe is broken.
   *
   * The result carries backpressure: return nothing when the channel can take more at once, or a
   * promise that resolves when it can (a Node stream: at `drain`). The framing writers give a
   * channel nothing more until that promise resolves, and hold waiting messages themselves, up
   * to their `maxWriteBufferBytes`. The channel may keep `bytes` until written: the writers never
   * reuse a buffer they handed over.
   */
  write(bytes: Uint8Array): Promise<void> | void;
  /** Close our writing side. */
  end(): void;
}
