/**
 * connect(): the front door. One call gives an MspClient over a byte channel, with its recorder,
 * ledger and events already listening, before any turn can start.
 */
import type { ByteChannel } from "../framing/byteChannel.js";
import { createFraming, type Framing } from "../framing/createFraming.js";
import { MspClient, type MspClientOptions } from "./mspClient.js";

/**
 * Options of {@link connect}.
 *
 * @example
 * ```ts
 * const client = connect(channel, { framing: "content-length", maxMessageBytes: 1024 * 1024, defaultTimeoutMs: 10_000 });
 * ```
 */
export interface ConnectOptions extends MspClientOptions {
  /** How messages are framed on the channel. @defaultValue "ndjson" */
  framing?: Framing;
  /** Largest message accepted. @unit bytes @defaultValue 16 MiB */
  maxMessageBytes?: number;
  /**
   * The most bytes held for a host that does not read its input. Past it the connection closes:
   * everything pending settles as `connectionClosed` with the reason "the host is not reading
   * its input: … bytes queued …". A host that reads keeps this near empty. A single message
   * larger than the bound is still sent when nothing waits.
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
 * Connect to an MSP host over a byte channel (stdio, a socket, an in-memory pair).
 *
 * @example
 * ```ts
 * const client = connect(channel, { framing: "ndjson", defaultTimeoutMs: 30_000 });
 * ```
 */
export function connect(channel: ByteChannel, options: ConnectOptions = {}): MspClient {
  const { framing, maxMessageBytes, maxWriteBufferBytes, ...clientOptions } = options;
  const { reader, writer } = createFraming(channel, framing, { maxMessageBytes, maxWriteBufferBytes });
  return new MspClient(reader, writer, clientOptions);
}
