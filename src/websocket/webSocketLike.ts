/**
 * The WHATWG WebSocket, as far as this SDK uses it: structural types that a browser's WebSocket,
 * Node ≥ 22's global one and the `ws` package's class all satisfy, so the core needs neither
 * DOM-only types nor `ws`.
 */

/**
 * The `message` event of a {@link WebSocketLike}: `data` is a string for a text frame; anything
 * else (an `ArrayBuffer`, a `Blob`, a `Buffer`) is a binary frame.
 *
 * @example
 * ```ts
 * const onMessage = (event: WebSocketMessageEventLike) => {
 *   if (typeof event.data === "string") console.log(JSON.parse(event.data));
 * };
 * ```
 */
export interface WebSocketMessageEventLike {
  /** The frame: a string for a text frame, anything else for a binary one. */
  readonly data: unknown;
}

/**
 * The `close` event of a {@link WebSocketLike}: the close code and reason of the closing
 * handshake (1006 and `""` when the connection was lost without one).
 *
 * @example
 * ```ts
 * const onClose = (event: WebSocketCloseEventLike) => console.log(`closed: ${event.code} ${event.reason}`);
 * ```
 */
export interface WebSocketCloseEventLike {
  /** The close code (RFC 6455 §7.4). */
  readonly code: number;
  /** The close reason (`""` when none was sent). */
  readonly reason: string;
}

/**
 * A WebSocket instance, as far as `connectWebSocket` uses it. The browser's `WebSocket`, Node ≥ 22's
 * global one, and the `ws` package's `WebSocket` class all satisfy it.
 *
 * @example
 * ```ts
 * const socket: WebSocketLike = new WebSocket("ws://127.0.0.1:8080/msp", ["msp.v1"]);
 * socket.addEventListener("open", () => socket.send('{"jsonrpc":"2.0","method":"ping"}'));
 * ```
 */
export interface WebSocketLike {
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number;
  /** The subprotocol the server selected (`""` before open, or when it selected none). */
  readonly protocol: string;
  /** Bytes queued by `send()` and not yet handed to the network. @unit bytes */
  readonly bufferedAmount: number;
  /** How binary frames are delivered; set to `"arraybuffer"` by `connectWebSocket`. */
  binaryType: string;
  /** Queue one text frame (its UTF-8 bytes count towards `bufferedAmount` until sent). */
  send(data: string): void;
  /** Start the closing handshake (or abandon the opening one) with a close code and reason. */
  close(code?: number, reason?: string): void;
  /** Listen for frames. */
  addEventListener(type: "message", listener: (event: WebSocketMessageEventLike) => void): void;
  /** Listen for the close, with its code and reason. */
  addEventListener(type: "close", listener: (event: WebSocketCloseEventLike) => void): void;
  /** Listen for the open, or for an error (a browser's says nothing; a `close` follows it). */
  addEventListener(type: "open" | "error", listener: (event: unknown) => void): void;
  /** Stop listening for frames. */
  removeEventListener(type: "message", listener: (event: WebSocketMessageEventLike) => void): void;
  /** Stop listening for the close. */
  removeEventListener(type: "close", listener: (event: WebSocketCloseEventLike) => void): void;
  /** Stop listening for the open or for errors. */
  removeEventListener(type: "open" | "error", listener: (event: unknown) => void): void;
}

/**
 * A WebSocket class: `new (url, protocols)`. The global `WebSocket` of a browser or of Node ≥ 22
 * is one; on Node 20, pass the `ws` package's `WebSocket`.
 *
 * @example
 * ```ts
 * import { WebSocket } from "ws";
 *
 * const WebSocketClass: WebSocketConstructor = WebSocket;
 * const client = await connectWebSocket("ws://127.0.0.1:8080/msp", { WebSocket: WebSocketClass, token: "s3cret" });
 * ```
 */
export interface WebSocketConstructor {
  /** Open a WebSocket to `url`, offering `protocols` in `Sec-WebSocket-Protocol`. */
  new (url: string, protocols?: string | string[]): WebSocketLike;
}
