/** The message transport seam: what the host core needs from stdio today and WebSocket later. */

/**
 * A two-way transport of JSON-RPC messages. Incoming messages are delivered as text (one
 * NDJSON line, or one WebSocket text frame) so the core answers malformed JSON itself with -32700;
 * outgoing messages are objects the transport serializes.
 *
 * @example
 * ```ts
 * const transport: MessageTransport = createStdioTransport(process.stdin, process.stdout);
 * transport.onMessage((text) => console.error("got", text));
 * transport.send({ jsonrpc: "2.0", method: "turn/started", params: {} });
 * ```
 */
export interface MessageTransport {
  /** Registers the single handler for incoming messages (replaces any earlier one). */
  onMessage(callback: (text: string) => void): void;
  /** Registers a handler for the end of input (EOF, socket closed). */
  onClose(callback: () => void): void;
  /** Sends one message. Messages are written in call order. */
  send(message: unknown): void;
  /** Stops reading and releases the transport. Sending after close is a no-op. */
  close(): void;
}
