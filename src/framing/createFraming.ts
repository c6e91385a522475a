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

/** Make the reader and writer for `framing`; throws a TypeError on an unknown framing. */
export function createFraming(channel: ByteChannel, framing: Framing = "ndjson", maxMessageBytes?: number): { reader: FramedMessageReader; writer: FramedMessageWriter } {
  const readerOptions = maxMessageBytes === undefined ? {} : { maxMessageBytes };
  if (framing === "ndjson") return { reader: new NdjsonMessageReader(channel, readerOptions), writer: new NdjsonMessageWriter(channel) };
  if (framing === "content-length") return { reader: new ContentLengthMessageReader(channel, readerOptions), writer: new ContentLengthMessageWriter(channel) };
  throw new TypeError(`framing must be "ndjson" or "content-length", got ${JSON.stringify(framing)}`);
}
