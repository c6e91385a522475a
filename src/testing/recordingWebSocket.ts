/**
 * recordingWebSocket: the WebSocket twin of recordingChannel. It subclasses a WebSocket class so
 * every text frame its sockets send and receive (one MSP message each) is also handed out as a
 * transcript entry, in wire order.
 */
import type { WebSocketConstructor, WebSocketLike, WebSocketMessageEventLike } from "../websocket/webSocketLike.js";
import type { TranscriptEntry } from "./transcript.js";

/**
 * A subclass of `base` whose sockets record each text frame they send as `{dir: "client"}` (once
 * `send` took it: a send that throws sent nothing) and each text frame they receive as
 * `{dir: "server"}` (before any other listener sees it), `raw` being the frame's text. Binary
 * frames are not MSP messages and are not recorded. Give it to `connectWebSocket` as its
 * `WebSocket` option; `base` is the global `WebSocket` (browsers, Node ≥ 22) or the `ws` package's.
 *
 * @example
 * ```ts
 * import { WebSocket } from "ws";
 * import { connectWebSocket } from "@muse-code/sdk/websocket";
 * import { recordingWebSocket, type TranscriptEntry } from "@muse-code/sdk/testing";
 *
 * const entries: TranscriptEntry[] = [];
 * const client = await connectWebSocket("ws://127.0.0.1:8080/msp", {
 *   WebSocket: recordingWebSocket(WebSocket, (entry) => entries.push(entry)),
 *   token: process.env["MUSE_HOST_TOKEN"] ?? "",
 * });
 * ```
 */
export function recordingWebSocket(base: WebSocketConstructor, onEntry: (entry: TranscriptEntry) => void): WebSocketConstructor {
  const Base = base as new (url: string, protocols?: string | string[]) => WebSocketLike;
  return class RecordingWebSocket extends Base {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      // The first listener: each frame is recorded before the client's reader handles it.
      this.addEventListener("message", (event: WebSocketMessageEventLike) => {
        if (typeof event.data === "string") onEntry({ dir: "server", raw: event.data });
      });
    }

    override send(data: string): void {
      super.send(data);
      onEntry({ dir: "client", raw: data });
    }
  };
}
