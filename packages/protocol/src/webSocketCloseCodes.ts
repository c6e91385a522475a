/**
 * The close codes an MSP client sends when it closes a WebSocket itself. A browser may send only
 * 1000 or 3000–4999, so the failures use the 4xxx mirrors of RFC 6455's 1002, 1008 and 1009.
 */

/**
 * Close codes a client sends: `normal` (1000) when the app closes the client; `protocolError`
 * (4002) when the host broke MSP's WebSocket contract (it did not select `msp.v1`);
 * `sendQueueFull` (4008) when the host stopped reading and the send queue went over its bound;
 * `messageTooBig` (4009) when the host sent a frame over `maxMessageBytes`.
 *
 * @example
 * ```ts
 * import { ClientCloseCodes } from "@muse-code/sdk";
 *
 * client.events.once("close", (info) => {
 *   if (info.closeCode === ClientCloseCodes.messageTooBig) console.warn("the host sent a frame over maxMessageBytes");
 * });
 * ```
 */
export const ClientCloseCodes = {
  normal: 1000,
  protocolError: 4002,
  sendQueueFull: 4008,
  messageTooBig: 4009,
} as const;

/**
 * Close codes the reference host (`muse-host serve --ws`) sends:
 * - `goingAway` (1001): the host is shutting down; every turn's terminal was sent before it.
 * - `messageTooBig` (1009): the client sent a frame over the host's message limit
 *   (`--max-message-bytes`, `maxPayload`); sent by `ws` itself, and only that connection closes.
 * - `sendQueueFull` (4008): the client stopped reading: the host held bytes for it and none drained
 *   for `--stall-timeout-ms` (default 30 000 ms). A client that reads slowly is never closed for
 *   it (past `--max-send-queue-bytes` the host feeds it from the session log as it drains); only
 *   the stalled connection closes (the mirror of the client's 4008).
 *
 * @example
 * ```ts
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 *
 * const client = await connectWebSocket("ws://127.0.0.1:8080/msp", { token: "a-long-random-token" });
 * const info = await client.closed;
 * if (info.closeCode === HostCloseCodes.sendQueueFull) console.log("we stopped reading: the host gave up on us");
 * ```
 */
export const HostCloseCodes = {
  goingAway: 1001,
  messageTooBig: 1009,
  sendQueueFull: 4008,
} as const;
