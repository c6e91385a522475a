/**
 * createFraming: the reader and writer pair for a named framing over one ByteChannel.
 */
import type { ByteChannel } from "./byteChannel.js";
import { ContentLengthMessageReader, ContentLengthMessageWriter } from "./contentLength.js";
import type { FramedMessageReader } from "./framedReader.js";
import type { FramedMessageWriter } from "./framedWriter.js";
import { NdjsonMessageReader, NdjsonMessageWriter } from "./ndjson.js";

/**
 * How messages are framed on a byte channel. MSP's default is `"ndjson"`; `"content-length"` is
 * LSP's framing, which `spawnHost` and {@link createFraming} speak too.
 *
 * @example
 * ```ts
 * import { spawnHost } from "@muse-code/sdk/node";
 *
 * const framing: Framing = "content-length";
 * const host = spawnHost({ command: "my-lsp-style-host", framing });
 * ```
 */
export type Framing = "ndjson" | "content-length";

/** Throws the TypeError an unknown framing gets: callers check before they start anything. */
export function assertFraming(framing: unknown): asserts framing is Framing | undefined {
  if (framing !== undefined && framing !== "ndjson" && framing !== "content-length") {
    throw new TypeError(`framing must be "ndjson" or "content-length", got ${JSON.stringify(framing)}`);
  }
}

/**
 * Limits of the reader and writer {@link createFraming} makes.
 *
 * @example
 * ```ts
 * const limits: FramingLimits = { maxMessageBytes: 1024 * 1024, maxWriteBufferBytes: 8 * 1024 * 1024 };
 * const { reader, writer } = createFraming(channel, "content-length", limits);
 * ```
 */
export interface FramingLimits {
  /** See {@link ReaderOptions.maxMessageBytes}. @unit bytes */
  maxMessageBytes?: number | undefined;
  /** See {@link WriterOptions.maxWriteBufferBytes}. @unit bytes */
  maxWriteBufferBytes?: number | undefined;
}

/**
 * Make the reader and writer pair for `framing` over one byte channel; throws a `TypeError` on an
 * unknown framing. Pass the pair to `new MspClient(reader, writer, options)`: this is how a client
 * speaks Content-Length framing (`connect` speaks NDJSON only, so the browser core stays small).
 *
 * @example
 * ```ts
 * import { MspClient } from "@muse-code/sdk";
 * import { createFraming } from "@muse-code/sdk/framing";
 *
 * const { reader, writer } = createFraming(channel, "content-length", { maxMessageBytes: 1024 * 1024 });
 * const lspStyle = new MspClient(reader, writer, { defaultTimeoutMs: 30_000 });
 * ```
 */
export function createFraming(
  channel: ByteChannel,
  framing: Framing = "ndjson",
  limits: FramingLimits = {},
): { reader: FramedMessageReader; writer: FramedMessageWriter } {
  assertFraming(framing);
  // The limits are both options: each side reads its own, and an absent one is its default.
  if (framing === "content-length") return { reader: new ContentLengthMessageReader(channel, limits), writer: new ContentLengthMessageWriter(channel, limits) };
  return { reader: new NdjsonMessageReader(channel, limits), writer: new NdjsonMessageWriter(channel, limits) };
}
