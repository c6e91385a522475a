/**
 * WebSocketMessageWriter: writes one JSON-RPC message per text frame, in call order, with bounded
 * memory: while the socket's `bufferedAmount` is over a bound, messages wait in a queue of their
 * own, and a queue over its hard bound closes the connection rather than grow.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc";
import { MessageEncodingError, WriteBufferFullError } from "../framing/framedWriter.js";
import { utf8ByteLength } from "../internal/utf8ByteLength.js";
import { ClientCloseCodes } from "@muse-code/protocol/webSocketCloseCodes.js";
import type { WebSocketLike } from "./webSocketLike.js";

/** How often a waiting queue looks at `bufferedAmount` again: a WebSocket has no "drained" event. @unit milliseconds */
const DRAIN_POLL_MS = 10;

const OPEN = 1;

/** Bounds of a {@link WebSocketMessageWriter}. */
export interface WebSocketWriterOptions {
  /** Messages wait while the socket's `bufferedAmount` is over this. @unit bytes */
  maxBufferedBytes: number;
  /**
   * The most bytes held for a host that does not read: the socket's `bufferedAmount` plus the
   * messages waiting. One more closes the connection (4008). @unit bytes
   */
  maxWriteBufferBytes: number;
}

interface Queued {
  message: Message;
  text: string;
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Writes messages as text frames. A message is sent at once when nothing waits and the socket's
 * `bufferedAmount` is at most `maxBufferedBytes`; otherwise it waits, in order. How long a command
 * waits is bounded by that command's own `timeoutMs`/`signal`; its message stays queued (the host
 * de-duplicates a late command by its `commandId`), and what is held is bounded by
 * `maxWriteBufferBytes`: a message that would pass it (when others already wait) closes the socket
 * with 4008 and fires `onError`, so the connection closes and every pending command settles
 * `connectionClosed`. A single message larger than the bound still waits its turn when nothing else does.
 */
export class WebSocketMessageWriter extends AbstractMessageWriter implements MessageWriter {
  readonly #socket: WebSocketLike;
  readonly #bounds: WebSocketWriterOptions;
  readonly #queue: Queued[] = [];
  #queuedBytes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  #errors = 0;

  constructor(socket: WebSocketLike, bounds: WebSocketWriterOptions) {
    super();
    this.#socket = socket;
    this.#bounds = bounds;
  }

  write(message: Message): Promise<void> {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      // The message itself is bad (a BigInt, a cycle): nothing was sent and the socket is fine.
      return Promise.reject(new MessageEncodingError(error));
    }
    if (this.#ended) return Promise.reject(new Error("the connection is closed"));
    if (this.#queue.length === 0 && this.#socket.bufferedAmount <= this.#bounds.maxBufferedBytes) return this.#send(text, message);
    const bytes = utf8ByteLength(text);
    const held = this.#socket.bufferedAmount + this.#queuedBytes;
    if (this.#queue.length > 0 && held + bytes > this.#bounds.maxWriteBufferBytes) {
      // The same error as the framed writers', so the connection closes with the same reason.
      const error = new WriteBufferFullError(held, this.#bounds.maxWriteBufferBytes);
      this.#socket.close(ClientCloseCodes.sendQueueFull, "send queue full");
      this.#errors += 1;
      this.fireError(error, message, this.#errors);
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ message, text, bytes, resolve, reject });
      this.#queuedBytes += bytes;
      this.#timer ??= setTimeout(this.#drain, DRAIN_POLL_MS);
    });
  }

  readonly #drain = (): void => {
    this.#timer = undefined;
    while (this.#queue.length > 0 && this.#socket.bufferedAmount <= this.#bounds.maxBufferedBytes) {
      const next = this.#queue.shift() as Queued;
      this.#queuedBytes -= next.bytes;
      this.#send(next.text, next.message).then(next.resolve, next.reject);
    }
    if (this.#queue.length > 0) this.#timer = setTimeout(this.#drain, DRAIN_POLL_MS);
  };

  /**
   * Hand one frame to the socket. Once the socket is closing, a frame is dropped: its close event
   * follows and closes the connection with the host's close code, which a write error here would mask.
   */
  #send(text: string, message: Message): Promise<void> {
    try {
      if (this.#socket.readyState === OPEN) this.#socket.send(text);
      return Promise.resolve();
    } catch (error) {
      this.#errors += 1;
      this.fireError(error, message, this.#errors);
      return Promise.reject(error as Error);
    }
  }

  /** Close the socket (1000) and settle every waiting write; the connection calls this as it closes. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopDraining();
    if (this.#socket.readyState <= OPEN) this.#socket.close(ClientCloseCodes.normal);
  }

  #stopDraining(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const waiting of this.#queue.splice(0)) waiting.reject(new Error("the connection is closed"));
    this.#queuedBytes = 0;
  }

  override dispose(): void {
    this.#stopDraining();
    super.dispose();
  }
}
