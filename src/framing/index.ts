/**
 * @muse-code/sdk/framing: for people who write their own transports. The NDJSON and
 * Content-Length readers and writers over a ByteChannel, their base classes and limits. Pass a
 * reader and writer pair to `new MspClient(reader, writer)` from `@muse-code/sdk`. Browser-safe.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards.
 * Nothing under this entry may import `node:*`.
 *
 * @packageDocumentation
 */
export { NdjsonMessageReader, NdjsonMessageWriter } from "./ndjson.js";
export { ContentLengthMessageReader, ContentLengthMessageWriter } from "./contentLength.js";
export { FramedMessageReader } from "./framedReader.js";
export type { ReaderOptions } from "./framedReader.js";
export { FramedMessageWriter, MessageEncodingError, WriteBufferFullError, DEFAULT_MAX_WRITE_BUFFER_BYTES } from "./framedWriter.js";
export type { WriterOptions } from "./framedWriter.js";
export { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.js";
export type { FramingProblem } from "./limits.js";
export type { ByteChannel, EndDetails, Unsubscribe } from "./byteChannel.js";
export { createFraming } from "./createFraming.js";
export type { Framing, FramingLimits } from "./createFraming.js";
