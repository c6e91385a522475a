/** One accepted WebSocket as a MessageTransport: one JSON-RPC message per text frame, with a bounded send queue. */
import type { WebSocket } from "ws";
import { HostCloseCodes } from "../protocol/webSocketCloseCodes.js";
import { errorResponse, JsonRpcErrorCodes, messageJson } from "./jsonRpc.js";
import type { MessageTransport } from "./messageTransport.js";

/** Default bound on what the host holds for one connection that is not reading. @unit bytes */
export const DEFAULT_MAX_SEND_QUEUE_BYTES = 4 * 1024 * 1024;

/** After closing a connection that stopped reading, how long its close handshake may take before the socket is dropped. @unit milliseconds */
const CLOSE_GRACE_MS = 1_000;

/**
 * Wraps an open `ws` socket. `send` serializes and hands the frame to the socket while what the
 * socket holds (`bufferedAmount`: its queue and the kernel-refused bytes) plus the message stays
 * within `maxSendQueueBytes`; past it the connection is closed with 4008 and `onOverflow` runs (a
 * single message larger than the bound still goes when nothing else is held). A binary frame is
 * answered with a JSON-RPC `-32600` error; the connection stays open.
 */
export function webSocketTransport(socket: WebSocket, options: { maxSendQueueBytes: number; onOverflow: () => void }): MessageTransport {
  let onMessage: (text: string) => void = () => {};
  const closeHandlers: Array<() => void> = [];
  let closed = false;
  const reply = (message: unknown) => {
    if (!closed) socket.send(JSON.stringify(message));
  };
  socket.on("message", (data, isBinary) => {
    if (closed) return;
    if (isBinary) {
      reply(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request: binary frames are not MSP; send one JSON-RPC message per text frame"));
      return;
    }
    // The server keeps ws's default binaryType ("nodebuffer"), and ws has checked the UTF-8.
    onMessage((data as Buffer).toString("utf8"));
  });
  socket.once("close", () => {
    closed = true;
    for (const handler of closeHandlers) handler();
  });
  const close = (code: number, reason: string, graceMs?: number) => {
    if (closed) return;
    closed = true;
    socket.close(code, reason);
    // A client that does not read never answers the close: drop the socket after a grace.
    if (graceMs !== undefined) setTimeout(() => socket.terminate(), graceMs).unref();
  };
  return {
    onMessage(callback) {
      onMessage = callback;
    },
    onClose(callback) {
      closeHandlers.push(callback);
    },
    send(message) {
      if (closed || socket.readyState !== socket.OPEN) return;
      const text = messageJson(message);
      const held = socket.bufferedAmount;
      if (held > 0 && held + Buffer.byteLength(text, "utf8") > options.maxSendQueueBytes) {
        close(HostCloseCodes.sendQueueFull, "send queue full: the client is not reading", CLOSE_GRACE_MS);
        options.onOverflow();
        return;
      }
      socket.send(text);
    },
    close() {
      // After everything already queued (the terminals of a shutdown), in order; the server
      // drops what is still open when it closes.
      close(HostCloseCodes.goingAway, "the host is shutting down");
    },
  };
}
