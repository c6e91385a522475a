/**
 * recordingChannel: wrap a ByteChannel (NDJSON or Content-Length framing) so every message
 * crossing it is also handed out as a transcript entry, in wire order. With recordingWebSocket
 * (its twin for WebSocket frames) it is how a transcript is recorded from a real run.
 */
import type { ByteChannel } from "../framing/byteChannel.js";
import type { Framing } from "../framing/createFraming.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../framing/limits.js";
import { messageTextSplitter } from "./messageTextSplitter.js";
import type { TranscriptEntry } from "./transcript.js";

/**
 * Options of {@link recordingChannel}.
 *
 * @example
 * ```ts
 * const options: RecordingChannelOptions = { framing: "content-length", onStop: (dir, reason) => console.warn(`${dir} not recorded further: ${reason}`) };
 * ```
 */
export interface RecordingChannelOptions {
  /** How the channel frames messages: the client's `framing`. @defaultValue `"ndjson"` */
  framing?: Framing | undefined;
  /**
   * Longest host message recorded: give the client's `maxMessageBytes`, so the recording stops
   * where the client's reader does. The client's own messages are recorded whatever their size.
   * @unit bytes @defaultValue 16 MiB (`DEFAULT_MAX_MESSAGE_BYTES`)
   */
  maxMessageBytes?: number | undefined;
  /**
   * Called at most once per direction, when the recording of that direction stops because the
   * framing cannot be followed past a message: one over `maxMessageBytes`, or a Content-Length
   * header that cannot be read. The client's reader stops reading there too. Nothing more is
   * recorded in that direction; the bytes still pass through.
   */
  onStop?: ((dir: TranscriptEntry["dir"], reason: string) => void) | undefined;
}

/**
 * Wrap `channel` so that each message the client writes is recorded as `{dir: "client"}` and each
 * message the host sends as `{dir: "server"}`, in wire order, each `raw` being the message's exact
 * text without its framing (JSON or not). A host message is recorded before the client reads it; a
 * client message once the channel took it (a write that throws sent nothing). The bytes pass
 * through unchanged. Give the result to `connect(…)`, or return it from `spawnHost`'s `wrapChannel`.
 * Throws a `TypeError` on an unknown framing.
 *
 * @example
 * ```ts
 * import { appendFileSync } from "node:fs";
 * import { spawnHost } from "@muse-code/sdk/node";
 * import { formatTranscriptEntry, recordingChannel } from "@muse-code/sdk/testing";
 *
 * const host = spawnHost({
 *   command: "my-lsp-style-host", // a host of your own that frames with Content-Length on stdio
 *   framing: "content-length",
 *   wrapChannel: (channel) =>
 *     recordingChannel(channel, (entry) => appendFileSync("run.jsonl", `${formatTranscriptEntry(entry)}\n`), { framing: "content-length" }),
 * });
 * ```
 */
export function recordingChannel(channel: ByteChannel, onEntry: (entry: TranscriptEntry) => void, options: RecordingChannelOptions = {}): ByteChannel {
  const framing = options.framing ?? "ndjson";
  const onStop = options.onStop ?? (() => {});
  const fromHost = messageTextSplitter(framing, (raw) => onEntry({ dir: "server", raw }), {
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    onStop: (reason) => onStop("server", reason),
  });
  // The client's writes are its own writer's frames, each already whole in memory: no bound needed.
  const fromClient = messageTextSplitter(framing, (raw) => onEntry({ dir: "client", raw }), {
    maxMessageBytes: Infinity,
    onStop: (reason) => onStop("client", reason),
  });
  return {
    onData(listener) {
      return channel.onData((chunk) => {
        fromHost.push(chunk);
        listener(chunk);
      });
    },
    onEnd: (listener) => channel.onEnd(listener),
    onError: (listener) => channel.onError(listener),
    write(bytes) {
      // Recorded once handed to the channel: a write that throws sent nothing.
      const written = channel.write(bytes);
      fromClient.push(bytes);
      return written;
    },
    end: () => channel.end(),
  };
}
