/**
 * `@muse-code/sdk/websocket`: an MSP client over a WHATWG WebSocket (browsers, Node ≥ 22, or the
 * `ws` package's class injected on Node 20), and `keptToken`, a page's token from its address's
 * fragment, kept for reloads. Browser-safe: nothing under it imports `node:*`.
 *
 * It is its own entry point, not part of the root, so the root stays within its size budget for
 * apps that connect another way (see docs/architecture.md). Any new export added here becomes
 * public API. Use named exports, not wildcards.
 *
 * @packageDocumentation
 */
export { connectWebSocket } from "./connectWebSocket.js";
export type { WebSocketConnectOptions } from "./connectWebSocket.js";
export type { WebSocketConstructor, WebSocketLike, WebSocketMessageEventLike, WebSocketCloseEventLike } from "./webSocketLike.js";
export { keptToken } from "./keptToken.js";
export type { KeptTokenOptions, TokenStorage } from "./keptToken.js";
