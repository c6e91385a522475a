/**
 * createFraming: the reader and writer pair for a named framing over one ByteChannel.
 */
import type { ByteChannel } from "./byteChannel.js";
import { ContentLengthMessageReader, ContentLengthMessageWriter } from "./contentLength.js";
import type { FramedMessageReader } from "./framedReader.js";
import type { FramedMessageWriter } from "./framedWriter.js";
import { NdjsonMessageReader, NdjsonMessageWriter } from "./ndjson.js";

/**
 * How messages are framed on a byte channel. MSP's default is `"ndjson"`.
 *
 * @example
 * ```ts
 * const framing: Framing = "content-length";
 * const client = connect(channel, { framing });
 * ```
 */
export type Framing = "ndjson" | "content-length";

/** Throws the TypeError an unknown framing gets: callers check before they start anything. */
export function assertFraming(framing: unknown): asserts framing is Framing | undefined {
  if (framing !== undefined && framing !== "ndjson" && framing !== "content-length") {
    throw new TypeError(`framing must be "ndjson" or "content-length", got ${JSON.stringify(framing)}`);
  }
}

/** Make the reader and writer for `framing`; throws a TypeError on an unknown framing. */
export function createFraming(
  channel: ByteChannel,
  framing: Framing = "ndjson",
  maxMessageBytes?: number,
): { reader: FramedMessageReader; writer: FramedMessageWriter } {
  const readerOptions = maxMessageBytes === undefined ? {} : { maxMessageBytes };
  assertFraming(framing);
  if (framing === "content-length") return { reader: new ContentLengthMessageReader(channel, readerOptions), writer: new ContentLengthMessageWriter(channel) };
  return { reader: new NdjsonMessageReader(channel, readerOptions), writer: new NdjsonMessageWriter(channel) };
}
