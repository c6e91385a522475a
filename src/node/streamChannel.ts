/**
 * streamChannel: adapt a Node Readable/Writable pair (stdio, a socket, a child's pipes) to a
 * ByteChannel. Pipe errors such as EPIPE surface as `onError`, never as a crash. Writes respect
 * `drain`: when the stream is full, `write` returns a promise that resolves once it has room, so
 * the framing writer holds further messages itself, within its `maxWriteBufferBytes`.
 */
import type { Readable, Writable } from "node:stream";
import type { ByteChannel, EndDetails, Unsubscribe } from "../framing/byteChannel.js";

/**
 * A {@link ByteChannel} over Node streams, whose owner can also signal its end.
 *
 * @example
 * ```ts
 * const channel: StreamChannel = streamChannel(socket, socket);
 * socket.once("close", () => channel.emitEnd({ reason: "the socket closed" }));
 * const client = connect(channel);
 * ```
 */
export interface StreamChannel extends ByteChannel {
  /**
   * Signal end-of-stream once, with how the peer ended (a child's exit code or signal).
   *
   * @example
   * ```ts
   * const channel = streamChannel(child.stdout, child.stdin);
   * child.once("exit", (exitCode, signal) => channel.emitEnd({ exitCode, signal }));
   * ```
   */
  emitEnd(details?: EndDetails): void;
}

/**
 * Options of {@link streamChannel}.
 *
 * @example
 * ```ts
 * const channel = streamChannel(child.stdout, child.stdin, { onPipeError: (e) => console.warn("pipe broke", e) });
 * ```
 */
export interface StreamChannelOptions {
  /**
   * Take pipe errors (EPIPE, ECONNRESET) yourself instead of reporting them through `onError`,
   * e.g. to wait for a child's exit status and then call `emitEnd` with it. Call `emitEnd` in the
   * end: a write waiting for room (`drain`) when the pipe broke is rejected then.
   *
   * @example
   * ```ts
   * const channel = streamChannel(child.stdout, child.stdin, {
   *   onPipeError: () => child.once("exit", (exitCode, signal) => channel.emitEnd({ exitCode, signal })),
   * });
   * ```
   */
  onPipeError?: (error: unknown) => void;
}

/**
 * Make a {@link ByteChannel} from a readable and a writable stream.
 *
 * @example
 * ```ts
 * const client = connect(streamChannel(socket, socket));
 * ```
 */
export function streamChannel(readable: Readable, writable: Writable, options: StreamChannelOptions = {}): StreamChannel {
  const endListeners = new Set<(details?: EndDetails) => void>();
  const errorListeners = new Set<(error: unknown) => void>();
  let ended = false;
  const emitEnd = (details?: EndDetails) => {
    if (ended) return;
    ended = true;
    for (const listener of [...endListeners]) listener(details);
  };
  const emitError =
    options.onPipeError ??
    ((error: unknown) => {
      for (const listener of [...errorListeners]) listener(error);
    });
  // Always listen for errors: an unhandled 'error' event would crash the process.
  readable.on("error", emitError);
  writable.on("error", emitError);
  // Writers waiting for room ('drain'). They settle when it comes, or reject when the stream
  // fails or ends first; when the owner takes pipe errors (onPipeError), they reject at its
  // emitEnd instead, so the owner's account of the end (the exit status) is the one reported.
  const waiting = new Set<{ resolve: () => void; reject: (error: unknown) => void }>();
  const settleWaiting = (error?: unknown) => {
    const all = [...waiting];
    waiting.clear();
    for (const w of all) {
      if (error === undefined) w.resolve();
      else w.reject(error);
    }
  };
  writable.on("drain", () => settleWaiting());
  if (options.onPipeError === undefined) {
    writable.on("error", (error) => settleWaiting(error));
    writable.on("close", () => settleWaiting(new Error("the pipe to the host closed before it took the bytes")));
  }
  const on = <T>(set: Set<T>, listener: T): Unsubscribe => {
    set.add(listener);
    return () => set.delete(listener);
  };
  return {
    onData(listener) {
      const onData = (chunk: Buffer | string) => listener(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      readable.on("data", onData);
      return () => readable.off("data", onData);
    },
    onEnd: (listener) => on(endListeners, listener),
    onError: (listener) => on(errorListeners, listener),
    write(bytes) {
      if (writable.destroyed || writable.writableEnded) throw new Error("write after end: the pipe to the host is closed (EPIPE)");
      if (writable.write(bytes)) return;
      // Full (over its highWaterMark): the caller waits for 'drain' before writing more.
      return new Promise<void>((resolve, reject) => waiting.add({ resolve, reject }));
    },
    end() {
      if (!writable.writableEnded) writable.end();
    },
    emitEnd(details) {
      emitEnd(details);
      settleWaiting(new Error(`the pipe to the host closed before it took the bytes (${details?.reason ?? "end of stream"})`));
    },
  };
}
