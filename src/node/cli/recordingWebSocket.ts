/**
 * recordingWebSocket: a WebSocket class that records every text frame it sends and receives as a
 * transcript entry, for `--record` over `--ws` (over stdio, recordingChannel does it).
 */
import type { WebSocketConstructor, WebSocketLike, WebSocketMessageEventLike } from "@muse-code/sdk/websocket";
import type { TranscriptEntry } from "@muse-code/sdk/testing";

/**
 * Wrap a WebSocket class: frames the client sends are recorded `{dir: "client"}` when handed to
 * the socket, text frames that arrive `{dir: "server"}` before any listener sees them.
 *
 * @example
 * ```ts
 * import { WebSocket } from "ws";
 * const Recording = recordingWebSocket(WebSocket, (entry) => entries.push(entry));
 * const client = await connectWebSocket(url, { WebSocket: Recording, token });
 * ```
 */
export function recordingWebSocket(Base: WebSocketConstructor, onEntry: (entry: TranscriptEntry) => void): WebSocketConstructor {
  return class RecordingWebSocket {
    readonly #socket: WebSocketLike;
    constructor(url: string, protocols?: string | string[]) {
      this.#socket = new Base(url, protocols);
      // The first listener: it records a frame before the client's reader handles it.
      this.#socket.addEventListener("message", (event: WebSocketMessageEventLike) => {
        if (typeof event.data === "string") onEntry({ dir: "server", raw: event.data });
      });
    }
    get readyState(): number {
      return this.#socket.readyState;
    }
    get protocol(): string {
      return this.#socket.protocol;
    }
    get bufferedAmount(): number {
      return this.#socket.bufferedAmount;
    }
    get binaryType(): string {
      return this.#socket.binaryType;
    }
    set binaryType(value: string) {
      this.#socket.binaryType = value;
    }
    send(data: string): void {
      this.#socket.send(data);
      onEntry({ dir: "client", raw: data });
    }
    close(code?: number, reason?: string): void {
      this.#socket.close(code, reason);
    }
    addEventListener(type: "open" | "error" | "message" | "close", listener: (event: never) => void): void {
      (this.#socket.addEventListener as (type: string, listener: (event: never) => void) => void)(type, listener);
    }
    removeEventListener(type: "open" | "error" | "message" | "close", listener: (event: never) => void): void {
      (this.#socket.removeEventListener as (type: string, listener: (event: never) => void) => void)(type, listener);
    }
  } as unknown as WebSocketConstructor;
}
