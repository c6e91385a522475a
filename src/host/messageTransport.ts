/** The message transport seam: what the host core needs from stdio and WebSocket, flow control included. */
import { messageJson } from "./jsonRpc.js";

/**
 * A two-way transport of JSON-RPC messages. Incoming messages are delivered as text (one
 * NDJSON line, or one WebSocket text frame) so the core answers malformed JSON itself with -32700;
 * outgoing messages are objects the transport serializes.
 *
 * Flow control is optional (a transport without it is sent everything at once, as a test double
 * is): a transport that says how many bytes it holds unsent (`heldBytes`), how many it should hold
 * at most (`maxHeldBytes`) and when it made progress (`onDrain`) is sent a session's live
 * notifications only while they fit; past that the host feeds it from the session log as it
 * drains. Answers and host requests are never held back.
 *
 * @example
 * ```ts
 * const transport: MessageTransport = createStdioTransport(process.stdin, process.stdout);
 * transport.onMessage((text) => console.error("got", text));
 * transport.onClose((why) => console.error(why ?? "input ended"));
 * transport.send({ jsonrpc: "2.0", method: "turn/started", params: {} });
 * console.error(`${transport.heldBytes?.() ?? 0} bytes not written yet`);
 * ```
 */
export interface MessageTransport {
  /** Registers the single handler for incoming messages (replaces any earlier one). */
  onMessage(callback: (text: string) => void): void;
  /**
   * Registers a handler for the end of input (EOF, socket closed), or for an output that failed;
   * `why` says which when the transport knows (e.g. `"stdout failed: EPIPE"`), else it is the end of input.
   */
  onClose(callback: (why?: string) => void): void;
  /** Sends one message. Messages are written in call order. */
  send(message: unknown): void;
  /** Stops reading and releases the transport; what was sent before still goes out. Sending after close is a no-op. */
  close(): void;
  /**
   * What the transport holds that its peer has not taken yet: messages sent and not written to
   * the kernel (a WebSocket's `bufferedAmount`; stdio's unwritten lines and `writableLength`).
   * @unit bytes
   */
  heldBytes?(): number;
  /**
   * The most the host should make this transport hold: a live notification that would take
   * {@link MessageTransport.heldBytes} past it waits in the session log instead. A message larger
   * than this still goes when nothing is held.
   * @unit bytes
   */
  readonly maxHeldBytes?: number;
  /**
   * The most {@link MessageTransport.heldBytes} has been right after a send, since the transport
   * was made: at most `maxHeldBytes` plus one message, plus answers and host requests.
   * @unit bytes
   */
  readonly heldBytesHighWater?: number;
  /** False once nothing sent can reach the peer any more (closed, or its output failed). */
  readonly writable?: boolean;
  /**
   * Registers the single listener called whenever the transport made progress (some of what it
   * held was written out) or stopped being writable; it reads `heldBytes` to decide what to send.
   */
  onDrain?(listener: () => void): void;
}

/**
 * Whether `transport` can take `message` now without holding more than its `maxHeldBytes`: it
 * holds nothing (a message bigger than the bound still goes alone), or what it holds plus the
 * message's UTF-8 bytes stays within the bound. Always true for a transport without flow control.
 *
 * @example
 * ```ts
 * if (transportTakes(transport, message)) transport.send(message);
 * ```
 */
export function transportTakes(transport: MessageTransport | undefined, message: unknown): boolean {
  const held = transport?.heldBytes?.() ?? 0;
  const bound = transport?.maxHeldBytes;
  if (held === 0 || bound === undefined) return true;
  const text = messageJson(message);
  // UTF-8 takes one to three bytes per UTF-16 unit: count them only when it matters.
  if (held + text.length > bound) return false;
  return held + 3 * text.length <= bound || held + Buffer.byteLength(text, "utf8") <= bound;
}
