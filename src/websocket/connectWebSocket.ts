/**
 * connectWebSocket: an MspClient over a WHATWG WebSocket (a browser's, Node ≥ 22's global one, or
 * the `ws` package's class passed in), one JSON-RPC message per text frame. The token travels as a
 * `Sec-WebSocket-Protocol` entry, never in the URL; the opening handshake is bounded and abortable.
 */
import type { ConnectOptions } from "../client/connect.js";
import { MspClient } from "../client/mspClient.js";
import { assertCapacities } from "../turns/mspDispatcher.js";
import { MspError, MspErrorKinds } from "../errors.js";
import { boundedWait } from "../internal/boundedWait.js";
import { ClientCloseCodes } from "@muse-code/protocol/webSocketCloseCodes.js";
import { MSP_SUBPROTOCOL, bearerSubprotocol } from "@muse-code/protocol/webSocketSubprotocols.js";
import type { WebSocketConstructor, WebSocketLike } from "./webSocketLike.js";
import { WebSocketMessageReader } from "./webSocketMessageReader.js";
import { WebSocketMessageWriter } from "./webSocketMessageWriter.js";

/** Default bound on the opening handshake. @unit milliseconds */
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
/** Default `bufferedAmount` over which sends wait. @unit bytes */
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** Default bound on the bytes held for a host that does not read (as the framing writers'). @unit bytes */
const DEFAULT_MAX_WRITE_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Options of {@link connectWebSocket}: every {@link ConnectOptions} but `framing` (a WebSocket
 * carries one message per text frame), plus the token, the WebSocket class, and the bounds.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: WebSocketConnectOptions = {
 *   token: new URLSearchParams(location.hash.slice(1)).get("token") ?? "",
 *   signal: controller.signal,
 *   handshakeTimeoutMs: 5_000,
 *   defaultTimeoutMs: 30_000,
 * };
 * const client = await connectWebSocket("ws://127.0.0.1:8080/msp", options);
 * ```
 */
export interface WebSocketConnectOptions extends Omit<ConnectOptions, "framing"> {
  /**
   * The host's bearer token. Sent as the `Sec-WebSocket-Protocol` entry `bearer.msp.<token>`
   * (its UTF-8 bytes base64url-encoded, unpadded) beside `msp.v1`, never in the URL. A non-empty
   * string; omit it (or pass undefined, as `keptToken` returns when it has none) for a host that
   * needs none.
   */
  token?: string | undefined;
  /**
   * The WebSocket class. Default: the global `WebSocket` (browsers, Node ≥ 22). On Node 20, pass
   * the `ws` package's `WebSocket`.
   */
  WebSocket?: WebSocketConstructor;
  /** Abort the opening handshake: the promise rejects with `aborted`, and the socket is closed. */
  signal?: AbortSignal;
  /**
   * Bound on the opening handshake, from the call until the socket is open: past it the
   * promise rejects with `timeout`, and the socket is closed.
   * @unit milliseconds
   * @defaultValue 10 000
   */
  handshakeTimeoutMs?: number;
  /**
   * While the socket's `bufferedAmount` is over this, messages wait (in order) instead of being
   * handed to the socket. A command still ends at its own `timeoutMs` or `signal`.
   * @unit bytes
   * @defaultValue 1 MiB
   */
  maxBufferedBytes?: number;
  /**
   * The most bytes held for a host that does not read: the socket's `bufferedAmount` plus the
   * messages waiting. A message that would pass it closes the connection (close code 4008), and
   * everything pending settles `connectionClosed` ("the host is not reading its input: …"). A
   * single message larger than the bound still waits its turn when nothing else does.
   * @unit bytes
   * @defaultValue 64 MiB
   */
  maxWriteBufferBytes?: number;
}

/**
 * Connect to an MSP host over a WebSocket, and resolve with an {@link MspClient} once it is
 * open. Offers the subprotocols `msp.v1` and, with a `token`, `bearer.msp.<base64url token>`;
 * the host must select `msp.v1`. One JSON-RPC message per text frame.
 *
 * Rejects with an {@link MspError}: `connectionClosed` when the handshake is refused or fails
 * (`data.closeCode`, usually 1006, and `data.closeReason`), `timeout` past `handshakeTimeoutMs`,
 * `aborted` when `signal` aborts, `protocol` when the host selects another subprotocol; with a
 * TypeError or RangeError for a bad argument. Once open, the close code and reason of the host's
 * close land in `client.closed` (`CloseInfo`: `closeCode`, `closeReason`). A binary frame is
 * a `protocolError` event and is dropped; a frame over `maxMessageBytes` is a `protocolError`
 * and closes the connection (code 4009). The client closes with 1000 on `close()`, 4002 when the
 * host selects another subprotocol, and 4008 when what it holds goes over `maxWriteBufferBytes`.
 * The recorder and the ledger listen from the first frame; an event listener added after the
 * `await` hears what arrives from then on (an MSP host sends nothing a client did not ask for).
 *
 * @example
 * ```ts
 * // In a page served by the host at http://127.0.0.1:PORT/#token=…
 * const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
 * const client = await connectWebSocket(`ws://${location.host}/msp`, { token });
 * const { sessionId } = await client.command("session/create", {});
 * const turn = client.startTurn({ sessionId, input: [{ type: "text", text: "hello" }] });
 * console.log((await turn.completed).terminal);
 * await client.close();
 * ```
 * @example
 * ```ts
 * // Node 20: inject the ws package's class.
 * import { WebSocket } from "ws";
 *
 * const client = await connectWebSocket("ws://127.0.0.1:8080/msp", { WebSocket, token: process.env["MUSE_HOST_TOKEN"] ?? "" });
 * console.log(await client.command("host/info", {}));
 * await client.close();
 * ```
 */
export function connectWebSocket(url: string | URL, options: WebSocketConnectOptions = {}): Promise<MspClient> {
  const {
    token,
    WebSocket: WebSocketClass = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket,
    signal,
    handshakeTimeoutMs = DEFAULT_HANDSHAKE_TIMEOUT_MS,
    maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
    maxWriteBufferBytes = DEFAULT_MAX_WRITE_BUFFER_BYTES,
    maxMessageBytes,
    ...clientOptions
  } = options;
  const what = "connectWebSocket: the WebSocket handshake";
  let socket: WebSocketLike;
  try {
    if (typeof WebSocketClass !== "function")
      throw new TypeError("this runtime has no global WebSocket: pass options.WebSocket (on Node 20, the ws package's WebSocket)");
    const protocols = token === undefined ? [MSP_SUBPROTOCOL] : [MSP_SUBPROTOCOL, bearerSubprotocol(token)];
    for (const [name, value] of Object.entries({ handshakeTimeoutMs, maxBufferedBytes, maxWriteBufferBytes })) {
      if (!(typeof value === "number" && value >= 0)) throw new RangeError(`${name} must be a non-negative number, got ${String(value)}`);
    }
    // A bad capacity is refused before a socket exists that it would leave open.
    assertCapacities(clientOptions);
    // Aborted already: nothing is opened.
    if (signal?.aborted === true) return Promise.reject(new MspError(MspErrorKinds.aborted, `${what} was aborted`, {}, { cause: signal.reason }));
    // A malformed URL throws here: a SyntaxError (a DOMException in browsers), the caller's mistake.
    socket = new WebSocketClass(String(url), protocols);
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) error.message = `connectWebSocket: ${error.message}`;
    return Promise.reject(error);
  }
  socket.binaryType = "arraybuffer";
  // Kept for the socket's whole life: `ws` throws an "error" event that nothing listens to.
  socket.addEventListener("error", ignore);
  // The client listens from the start: the reader is in place before any message can be
  // dispatched, and a handshake that fails closes it with the close code and reason.
  const client = new MspClient(
    new WebSocketMessageReader(socket, maxMessageBytes === undefined ? {} : { maxMessageBytes }),
    new WebSocketMessageWriter(socket, { maxBufferedBytes, maxWriteBufferBytes }),
    clientOptions,
  );
  let opened = false;
  const handshake = boundedWait<MspClient>(what, {}, { timeoutMs: handshakeTimeoutMs, ...(signal === undefined ? {} : { signal }) }, 0, () => {
    // Timed out, aborted, refused or the wrong subprotocol: the connection closes, and with it the socket.
    if (!opened) void client.close("the WebSocket handshake did not complete");
  });
  socket.addEventListener("open", () => {
    if (socket.protocol !== MSP_SUBPROTOCOL) {
      const problem = `the host selected the subprotocol ${JSON.stringify(socket.protocol)}, not ${MSP_SUBPROTOCOL}`;
      socket.close(ClientCloseCodes.protocolError, "msp.v1 not selected");
      return handshake.reject(new MspError(MspErrorKinds.protocol, `connectWebSocket: ${problem}`, { problem }));
    }
    opened = !handshake.settled;
    handshake.resolve(client);
  });
  void client.closed.then((info) => {
    const reason = `the WebSocket handshake failed: ${info.reason}`;
    handshake.reject(new MspError(MspErrorKinds.connectionClosed, `connectWebSocket: ${reason}`, { ...info, reason }));
  });
  return handshake.promise;
}

function ignore(): void {}
