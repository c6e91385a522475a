/**
 * recordingChannel: wrap a ByteChannel so every NDJSON message crossing it is also written
 * out as a transcript entry, in wire order. New fixtures come from real runs, not hand copies.
 */
import type { ByteChannel } from "../framing/byteChannel.js";
import { LineSplitter } from "../protocol/lineSplitter.js";
import type { TranscriptEntry } from "./transcript.js";

/**
 * Wrap `channel` (NDJSON framing) so that each message the client writes is recorded as
 * `{dir: "client"}` and each message the host sends as `{dir: "server"}`, in wire order.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const client = connect(recordingChannel(channel, (e) => lines.push(formatTranscriptEntry(e))));
 * ```
 */
export function recordingChannel(channel: ByteChannel, onEntry: (entry: TranscriptEntry) => void): ByteChannel {
  // Unbounded: the reader enforces the message size; a recording keeps whatever crossed.
  const fromHost = new LineSplitter((raw) => onEntry({ dir: "server", raw }), { maxLineBytes: Infinity });
  const fromClient = new LineSplitter((raw) => onEntry({ dir: "client", raw }), { maxLineBytes: Infinity });
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
