/**
 * WebSocketMessageReader: reads MSP's one JSON-RPC message per text frame from a WebSocket, with no
 * byte framing, and reports problems the way the framed readers do (`onProblem`, `endDetails`), so
 * MspClient treats it like any other reader.
 */
import { AbstractMessageReader, Emitter, type DataCallback, type Disposable, type Event } from "vscode-jsonrpc";
import type { EndDetails } from "../framing/byteChannel.js";
import type { ReaderOptions } from "../framing/framedReader.js";
import { DEFAULT_MAX_MESSAGE_BYTES, isFramingProblem, parseMessage, type FramingProblem } from "../framing/limits.js";
import { utf8ByteLength } from "../internal/utf8ByteLength.js";
import { ClientCloseCodes } from "@muse-code/protocol/webSocketCloseCodes.js";
import type { WebSocketCloseEventLike, WebSocketLike, WebSocketMessageEventLike } from "./webSocketLike.js";

/**
 * Reads one message per text frame. A frame that is not JSON-RPC 2.0, or a binary frame, is a
 * non-fatal problem: reported and dropped, as the framed readers drop a bad line, and later frames
 * still arrive. A frame over `maxMessageBytes` is fatal: reported, the socket is closed with 4009
 * (a browser may not send 1009) and the connection closes, since a message the client cannot read
 * may be a terminal or a response that some waiter needs. The frame is already in memory by then
 * (a WebSocket API hands over whole messages); the bound keeps it from being parsed and kept.
 */
export class WebSocketMessageReader extends AbstractMessageReader {
  readonly #socket: WebSocketLike;
  readonly #maxMessageBytes: number;
  readonly #problems = new Emitter<FramingProblem>();
  #callback: DataCallback | undefined;
  #endDetails: EndDetails | undefined;
  #error: string | undefined;
  #stopped = false;

  constructor(socket: WebSocketLike, options: ReaderOptions = {}) {
    super();
    this.#socket = socket;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** Fires for every malformed, binary or oversized frame. Fatal problems are followed by close. */
  get onProblem(): Event<FramingProblem> {
    return this.#problems.event;
  }

  /** How the socket closed: its close code and reason, and a plain-words `reason`. */
  get endDetails(): EndDetails | undefined {
    return this.#endDetails;
  }

  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    this.#socket.addEventListener("message", this.#onMessage);
    this.#socket.addEventListener("error", this.#onError);
    this.#socket.addEventListener("close", this.#onClose);
    return { dispose: () => this.#unsubscribe() };
  }

  readonly #onMessage = ({ data }: WebSocketMessageEventLike): void => {
    if (this.#stopped) return;
    const text = typeof data === "string" ? data : undefined;
    // A UTF-16 unit is at most 3 bytes of UTF-8: a text that short is within the limit uncounted.
    const fits = text !== undefined && text.length * 3 <= this.#maxMessageBytes;
    const bytes = text === undefined ? binaryLength(data) : fits ? text.length : utf8ByteLength(text, this.#maxMessageBytes);
    if (bytes > this.#maxMessageBytes) {
      this.#problems.fire({ problem: `a message exceeds maxMessageBytes (${this.#maxMessageBytes} bytes)`, fatal: true });
      this.#socket.close(ClientCloseCodes.messageTooBig, "message too big");
      this.#stop();
    } else if (text === undefined) {
      this.#problems.fire({ problem: `a binary frame (${bytes} bytes): MSP sends one JSON-RPC message per text frame`, fatal: false });
    } else {
      const parsed = parseMessage(text);
      if (isFramingProblem(parsed)) this.#problems.fire(parsed);
      else this.#callback?.(parsed);
    }
  };

  /** A browser's error event says nothing and a close event follows; `ws`'s says what failed. */
  readonly #onError = (event: unknown): void => {
    const message = (event as { message?: unknown } | null)?.message;
    if (typeof message === "string" && message !== "") this.#error ??= message;
  };

  readonly #onClose = ({ code, reason }: WebSocketCloseEventLike): void => {
    // 1005: no close code. MSP hosts always send one, so this side (the page's own close()) closed it: never call it the host's.
    const why =
      this.#error ??
      (code === 1006
        ? "the connection was lost"
        : code === 1005
          ? "the connection was closed on this side, with no close code"
          : "the host closed the connection");
    this.#endDetails = { reason: `${why} (WebSocket close code ${code}${reason === "" ? "" : `: ${reason}`})`, closeCode: code, closeReason: reason };
    this.#stop();
  };

  #stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#unsubscribe();
    this.fireClose();
  }

  #unsubscribe(): void {
    this.#socket.removeEventListener("message", this.#onMessage);
    this.#socket.removeEventListener("error", this.#onError);
    this.#socket.removeEventListener("close", this.#onClose);
  }

  /** Stop reading and release the socket's listeners and the emitters. */
  override dispose(): void {
    this.#unsubscribe();
    this.#problems.dispose();
    super.dispose();
  }
}

/** The size of a binary frame's data: an ArrayBuffer or view (`byteLength`), or a Blob (`size`). */
function binaryLength(data: unknown): number {
  const sized = data as { byteLength?: unknown; size?: unknown } | null;
  const length = sized?.byteLength ?? sized?.size;
  return typeof length === "number" ? length : 0;
}
