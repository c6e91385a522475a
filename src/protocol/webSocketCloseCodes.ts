/**
 * The close codes an MSP client sends when it closes a WebSocket itself. A browser may send only
 * 1000 or 3000–4999, so the failures use the 4xxx mirrors of RFC 6455's 1002, 1008 and 1009.
 */

/**
 * Close codes a client sends: `normal` (1000) when the app closes the client; `protocolError`
 * (4002) when the host broke MSP's WebSocket contract (it did not select `msp.v1`);
 * `sendQueueFull` (4008) when the host stopped reading and the send queue went over its bound;
 * `messageTooBig` (4009) when the host sent a frame over `maxMessageBytes`.
 */
export const ClientCloseCodes = {
  normal: 1000,
  protocolError: 4002,
  sendQueueFull: 4008,
  messageTooBig: 4009,
} as const;
