/** One accepted WebSocket as a MessageTransport: one JSON-RPC message per text frame, with flow control and a stall rule. */
import type { WebSocket } from "ws";
import { HostCloseCodes } from "@muse-code/protocol/webSocketCloseCodes.js";
import { errorResponse, JsonRpcErrorCodes, messageJson } from "../server/jsonRpc.js";
import { InputGate, type MessageTransport } from "./messageTransport.js";

/**
 * Default bound on what the host holds for one connection: past it, live notifications wait in
 * the session log, and the connection is not read, until it drains.
 * @unit bytes
 */
export const DEFAULT_MAX_SEND_QUEUE_BYTES = 4 * 1024 * 1024;

/**
 * Default of how long a connection may hold bytes without draining any before it is closed with
 * 4008: long enough for a slow link or a busy browser tab, short enough to free what a client that
 * stopped reading holds.
 * @unit milliseconds
 */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** The reply to a binary frame (JSON-RPC -32600, `id: null`). */
const BINARY_FRAME_MESSAGE = "Invalid Request: binary frames are not MSP; send one JSON-RPC message per text frame";

/** After closing a connection that stopped reading, how long its close handshake may take before the socket is dropped. @unit milliseconds */
const CLOSE_GRACE_MS = 1_000;

/** A connection closed for a stall: how long it held bytes without draining any, and how many. */
export interface Stall {
  /** @unit milliseconds since the connection last drained a message (or began holding bytes) */
  stalledMs: number;
  /** @unit bytes held for it when it was closed */
  heldBytes: number;
}

/** Options of {@link webSocketTransport}. */
export interface WebSocketTransportOptions {
  /** The transport's `maxHeldBytes`: what delivery lets it hold before feeding it from the log. @unit bytes */
  maxSendQueueBytes: number;
  /** How long it may hold bytes without draining any before it is closed with 4008. @unit milliseconds @defaultValue {@link DEFAULT_STALL_TIMEOUT_MS} */
  stallTimeoutMs?: number;
  /** Runs once when the connection is closed for a stall (after the close frame is queued). */
  onStall: (stall: Stall) => void;
}

/**
 * Wraps an open `ws` socket. `send` serializes and hands the frame to the socket at once; what
 * the socket holds (`bufferedAmount`: its queue and the bytes the kernel has not taken) is the
 * transport's `heldBytes`, and every frame written out to the kernel is progress (`onDrain`).
 * A connection that holds bytes and drains none for `stallTimeoutMs` is closed with 4008 and
 * `onStall` runs: a client that reads slowly is never closed, one that stopped reading is. A
 * binary frame is answered with a JSON-RPC `-32600` error; the connection stays open. Every frame
 * goes through the same `send`, replies included, and once the socket holds more than
 * `maxSendQueueBytes` the connection is not read (`InputGate`: the TCP socket is paused) until
 * it drains to half of it; the frames already read wait and are answered in order. Answers owed
 * (commands waiting on their log sync, `reserve`) count toward the bound from when they are read.
 * So a client that sends and never reads makes the host hold at most the bound plus one message.
 */
export function webSocketTransport(socket: WebSocket, options: WebSocketTransportOptions): MessageTransport {
  const stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  let onMessage: (text: string) => void = () => {};
  let onDrain: () => void = () => {};
  const closeHandlers: Array<() => void> = [];
  let closed = false;
  let highWater = 0;
  /** When the socket last wrote a whole frame out, or began holding bytes after holding none. @unit ms since the epoch */
  let progressAt = Date.now();
  let stallTimer: NodeJS.Timeout | undefined;
  /** An incoming text frame, or `null` for a binary one: what the gate holds while the connection is not read. */
  const handle = (text: string | null) => {
    if (text === null) write(errorResponse(null, JsonRpcErrorCodes.invalidRequest, BINARY_FRAME_MESSAGE));
    else onMessage(text);
  };
  const gate = new InputGate<string | null>({
    heldBytes: () => socket.bufferedAmount,
    maxHeldBytes: options.maxSendQueueBytes,
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    handle,
  });
  const close = (code: number, reason: string, graceMs?: number) => {
    if (closed) return;
    closed = true;
    clearTimeout(stallTimer);
    gate.close();
    socket.close(code, reason);
    // A shutdown reads again, so the client's close frame can complete the handshake; a stalled
    // client is not read (it reads nothing either), and is dropped after the grace.
    if (graceMs === undefined) socket.resume();
    // A client that does not read never answers the close: drop the socket after a grace.
    if (graceMs !== undefined) setTimeout(() => socket.terminate(), graceMs).unref();
    onDrain();
  };
  const checkStall = () => {
    stallTimer = undefined;
    if (closed) return;
    const heldBytes = socket.bufferedAmount;
    if (heldBytes === 0) return;
    const stalledMs = Date.now() - progressAt;
    if (stalledMs < stallTimeoutMs) {
      stallTimer = setTimeout(checkStall, stallTimeoutMs - stalledMs).unref();
      return;
    }
    close(HostCloseCodes.sendQueueFull, "stalled: the client is not reading", CLOSE_GRACE_MS);
    options.onStall({ stalledMs, heldBytes });
  };
  /** A progress notice is scheduled for the next turn of the event loop. */
  let noticeQueued = false;
  const notice = () => {
    noticeQueued = false;
    if (closed) return;
    // The frames read while it was over the bound are answered first, then delivery fills the rest.
    gate.drained();
    if (!closed) onDrain();
  };
  /**
   * The callback of every frame: it reached the kernel (or failed, then the socket is closing).
   * Delivery is told on the next turn of the event loop (once for all the frames written by then),
   * so a fast reader's catch-up never holds the loop in one chain of callbacks.
   */
  const written = (error?: Error) => {
    if (error !== undefined && error !== null) return;
    progressAt = Date.now();
    if (noticeQueued || closed) return;
    noticeQueued = true;
    setImmediate(notice);
  };
  const write = (message: unknown) => {
    if (closed || socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount === 0) progressAt = Date.now(); // not stalled while it held nothing
    socket.send(messageJson(message), written);
    held();
  };
  /** After a frame was queued (a message, or the pong ws sends itself): the high-water mark, the stall timer, the bound. */
  const held = () => {
    const bytes = socket.bufferedAmount;
    if (bytes > highWater) highWater = bytes;
    if (bytes > 0 && stallTimer === undefined && !closed) stallTimer = setTimeout(checkStall, stallTimeoutMs).unref();
    gate.sent();
  };
  socket.on("message", (data, isBinary) => {
    if (closed) return;
    // The server keeps ws's default binaryType ("nodebuffer"), and ws has checked the UTF-8.
    gate.take(isBinary ? null : (data as Buffer).toString("utf8"));
  });
  socket.on("ping", held);
  socket.once("close", () => {
    closed = true;
    gate.close();
    clearTimeout(stallTimer);
    onDrain();
    for (const handler of closeHandlers) handler();
  });
  return {
    onMessage(callback) {
      onMessage = callback;
    },
    onClose(callback) {
      closeHandlers.push(callback);
    },
    send: write,
    close() {
      // After everything already queued (the terminals of a shutdown), in order; the server
      // drops what is still open when it closes.
      close(HostCloseCodes.goingAway, "the host is shutting down");
    },
    heldBytes: () => (closed ? 0 : socket.bufferedAmount + gate.owedBytes),
    maxHeldBytes: options.maxSendQueueBytes,
    reserve: (bytes) => gate.reserve(bytes),
    get heldBytesHighWater() {
      return highWater;
    },
    get writable() {
      return !closed && socket.readyState === socket.OPEN;
    },
    onDrain(listener) {
      onDrain = listener;
    },
  };
}
