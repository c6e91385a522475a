/** The message transport seam: what the host core needs from stdio and WebSocket, flow control included. */
import { messageJson } from "../server/jsonRpc.js";

/**
 * A two-way transport of JSON-RPC messages. Incoming messages are delivered as text (one
 * NDJSON line, or one WebSocket text frame) so the core answers malformed JSON itself with -32700;
 * outgoing messages are objects the transport serializes.
 *
 * Flow control is optional (a transport without it is sent everything at once, as a test double
 * is): a transport that says how many bytes it holds unsent (`heldBytes`), how many it should hold
 * at most (`maxHeldBytes`) and when it made progress (`onDrain`) is sent a session's live
 * notifications only while they fit; past that the host feeds it from the session log as it
 * drains. Answers and error replies are never held back or dropped: instead a transport whose
 * `heldBytes` pass `maxHeldBytes` stops reading its input (an `InputGate`) until it drains
 * below half of it, so a peer that sends and never reads cannot make the host reply without bound.
 * An answer that waits on its log sync is counted from when its command is read (`reserve`).
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
   * the kernel (a WebSocket's `bufferedAmount`; stdio's unwritten lines and `writableLength`),
   * plus the answers it owes ({@link MessageTransport.reserve}).
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
   * The most bytes the transport has held right after a send, since it was made (what it holds,
   * not the answers it owes): at most `maxHeldBytes` plus one message (a reply included: past the
   * bound the transport reads nothing more), plus host requests.
   * @unit bytes
   */
  readonly heldBytesHighWater?: number;
  /**
   * Counts an answer the host owes (a command read whose answer waits on its log sync) as held,
   * `bytes` its estimated size, until the returned function is called (right before the answer is
   * sent): {@link MessageTransport.heldBytes} includes it, and the transport stops reading once
   * what it holds and owes passes `maxHeldBytes`, as for what it holds. Calling it again is a no-op.
   * @param bytes - the owed answer's estimated size. @unit bytes
   */
  reserve?(bytes: number): () => void;
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

/**
 * What an `InputGate` works with: how much its transport holds, its bound, and how to stop
 * and restart reading the input.
 */
export interface InputGateIo<T> {
  /** What the transport holds unsent now. @unit bytes */
  heldBytes(): number;
  /** The transport's bound: past it, the gate stops reading. @unit bytes */
  readonly maxHeldBytes: number;
  /** Stops reading the input (pause the socket or stream). */
  pause(): void;
  /** Reads the input again. */
  resume(): void;
  /** Handles one incoming message (the host answers it, maybe at once). */
  handle(message: T): void;
}

/**
 * A transport's input flow control. Every incoming message goes through {@link InputGate.take}
 * and every send is followed by {@link InputGate.sent}: once what the transport holds passes
 * `maxHeldBytes`, the gate pauses the input, and what was already read (the rest of a chunk a
 * parser is splitting) waits, in order. On each progress ({@link InputGate.drained}), once the
 * transport holds at most half its bound, the waiting messages are handled one at a time while it
 * holds at most the bound, then the input is read again. An answer the host owes (its command
 * waits on its log sync) counts as held from {@link InputGate.reserve} until it is sent, so
 * commands answered later cannot pile up past the bound either. So a peer that sends and never
 * reads makes the host hold at most the bound plus one reply: its own sends back up in TCP or the
 * pipe, and nothing it sent before is dropped.
 */
export class InputGate<T> {
  readonly #io: InputGateIo<T>;
  #reading = true;
  #closed = false;
  #draining = false;
  /** Messages read while paused; those before `#head` were handled. */
  #unread: Array<T | undefined> = [];
  #head = 0;
  /** @unit bytes of the answers owed now (reserved, not sent yet) */
  #owed = 0;
  /** A progress check is scheduled (an owed answer was paid while the input was paused). */
  #checkQueued = false;

  constructor(io: InputGateIo<T>) {
    this.#io = io;
  }

  /** What counts against the bound: what the transport holds plus the answers it owes. @unit bytes */
  #held(): number {
    return this.#io.heldBytes() + this.#owed;
  }

  /** The answers owed now: counted with what the transport holds. @unit bytes */
  get owedBytes(): number {
    return this.#owed;
  }

  /**
   * An answer is owed (its command was read, its answer waits on a log sync): `bytes` count as held
   * until the returned function pays it, right before the answer is sent. Past the bound, the gate
   * stops reading; a payment while it is paused checks for progress on the next turn of the event
   * loop (the answer sent meanwhile makes its own). Paying twice, or after close, does nothing.
   */
  reserve(bytes: number): () => void {
    if (this.#closed) return () => {};
    this.#owed += bytes;
    this.sent();
    let paid = false;
    return () => {
      if (paid || this.#closed) return;
      paid = true;
      this.#owed -= bytes;
      if (this.#reading || this.#checkQueued) return;
      this.#checkQueued = true;
      setImmediate(() => {
        this.#checkQueued = false;
        this.drained();
      });
    };
  }

  /** Whether the input is being read (not paused for the bound, not closed). */
  get reading(): boolean {
    return this.#reading && !this.#closed;
  }

  /** How many messages read from the input wait for the transport to drain. */
  get waiting(): number {
    return this.#unread.length - this.#head;
  }

  /** An incoming message: handled now while reading, else after those already waiting. Dropped once closed. */
  take(message: T): void {
    if (this.#closed) return;
    if (this.#reading) return this.#io.handle(message);
    this.#unread.push(message);
  }

  /** Call after every send (and anything else that adds to what the transport holds): past the bound, stop reading. */
  sent(): void {
    if (!this.#reading || this.#closed || this.#held() <= this.#io.maxHeldBytes) return;
    this.#reading = false;
    this.#io.pause();
  }

  /**
   * Call when the transport made progress: at or below half the bound, handles what waits (while
   * the transport holds at most the bound), then reads again. Returns whether it reads again.
   */
  drained(): boolean {
    if (this.#closed || this.#draining) return false;
    if (this.#reading) return true;
    if (this.#held() > this.#io.maxHeldBytes / 2) return false;
    this.#draining = true;
    try {
      while (this.#head < this.#unread.length) {
        if (this.#closed || this.#held() > this.#io.maxHeldBytes) return false;
        const message = this.#unread[this.#head] as T;
        this.#unread[this.#head++] = undefined;
        this.#io.handle(message);
      }
    } finally {
      this.#draining = false;
    }
    // The last reply took it past the bound: read again at the next progress.
    if (this.#closed || this.#held() > this.#io.maxHeldBytes) return false;
    this.#unread = [];
    this.#head = 0;
    this.#reading = true;
    this.#io.resume();
    return true;
  }

  /** Drops what waits and never reads again (the transport closed). */
  close(): void {
    this.#closed = true;
    this.#owed = 0;
    this.#unread = [];
    this.#head = 0;
  }
}
