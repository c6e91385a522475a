/** connect(): the front door, an MspClient over a byte channel, listening before any turn can start. */
import type { ByteChannel } from "../framing/byteChannel.js";
import { NdjsonMessageReader, NdjsonMessageWriter } from "../framing/ndjson.js";
import { MspClient, type MspClientOptions } from "./mspClient.js";

/**
 * Options of {@link connect}.
 *
 * @example
 * ```ts
 * const client = connect(channel, { maxMessageBytes: 1024 * 1024, defaultTimeoutMs: 10_000 });
 * ```
 */
export interface ConnectOptions extends MspClientOptions {
  /**
   * How messages are framed: MSP's own NDJSON. Content-Length (as LSP hosts speak it) stays out of
   * the browser core: make the pair with `createFraming` from `@muse-code/sdk/framing` and pass it
   * to `new MspClient(reader, writer)`, or give `spawnHost` `framing: "content-length"`.
   * @defaultValue "ndjson"
   */
  framing?: "ndjson";
  /** Largest message accepted. @unit bytes @defaultValue 16 MiB */
  maxMessageBytes?: number;
  /**
   * The most bytes held for a host that does not read its input; past it the connection closes,
   * everything pending settling as `connectionClosed` ("the host is not reading its input: …").
   * One message larger than the bound is still sent when nothing waits.
   * @unit bytes
   * @defaultValue 64 MiB (four messages of the default `maxMessageBytes`)
   * @example
   * ```ts
   * const client = connect(channel, { maxWriteBufferBytes: 8 * 1024 * 1024 });
   * client.events.once("close", ({ reason }) => console.log(reason));
   * ```
   */
  maxWriteBufferBytes?: number;
}

/**
 * Connect to an MSP host over a byte channel (stdio, a socket, an in-memory pair), framed as
 * NDJSON; any other `framing` throws a `TypeError` (see {@link ConnectOptions.framing}).
 *
 * @example
 * ```ts
 * const client = connect(channel, { defaultTimeoutMs: 30_000 });
 * ```
 * @example
 * ```ts
 * import { createFraming } from "@muse-code/sdk/framing";
 *
 * // Content-Length framing, as LSP-style hosts speak it:
 * const { reader, writer } = createFraming(channel, "content-length", { maxMessageBytes: 1024 * 1024 });
 * const lspStyle = new MspClient(reader, writer, { defaultTimeoutMs: 30_000 });
 * ```
 */
export function connect(channel: ByteChannel, options: ConnectOptions = {}): MspClient {
  const { framing, maxMessageBytes, maxWriteBufferBytes, ...clientOptions } = options;
  if (framing !== undefined && framing !== "ndjson")
    throw new TypeError(`connect speaks NDJSON only, got framing ${JSON.stringify(framing)}: for Content-Length use createFraming from @muse-code/sdk/framing`);
  const limits = { maxMessageBytes, maxWriteBufferBytes };
  return new MspClient(new NdjsonMessageReader(channel, limits), new NdjsonMessageWriter(channel, limits), clientOptions);
}
