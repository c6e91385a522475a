/**
 * The host's WebSocket server (`muse serve --ws`), on the `ws` package: it checks every request's Host and Origin and every upgrade's
 * bearer token before `ws` takes the socket, and hands each accepted socket to the host as one
 * more connection. With `uiDir` it also serves the Stop-button app's files on the same origin.
 */
import { once } from "node:events";
import { createServer, STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { DEFAULT_MAX_LINE_BYTES } from "@muse-code/protocol/lineSplitter.js";
import { HostCloseCodes } from "@muse-code/protocol/webSocketCloseCodes.js";
import { MSP_SUBPROTOCOL, bearerTokenOf } from "@muse-code/protocol/webSocketSubprotocols.js";
import type { MessageTransport } from "./messageTransport.js";
import type { MuseHost } from "../server/museHost.js";
import { plainAnswer, staticUi } from "./staticUi.js";
import {
  DEFAULT_WS_ADDRESS,
  allowedHosts,
  allowedOrigins,
  hasQuery,
  hostAllowed,
  isLoopbackAddress,
  originAllowed,
  tokenChecker,
  urlHost,
} from "./webSocketAccess.js";
import { DEFAULT_MAX_SEND_QUEUE_BYTES, DEFAULT_STALL_TIMEOUT_MS, webSocketTransport } from "./webSocketTransport.js";

/** How long a request may take to send its headers (a page request, its whole request). @unit milliseconds */
const HEADERS_TIMEOUT_MS = 10_000;
/**
 * How often Node's server looks for connections past `headersTimeout` or `requestTimeout` (and
 * answers them 408, then closes them). Node's default, 30 s, let a connection that never finished
 * its headers live about 30 s instead of HEADERS_TIMEOUT_MS.
 * @unit milliseconds
 */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Default bound on simultaneous connections (WebSocket and page requests alike). */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * Options of {@link serveWebSocket}.
 *
 * @example
 * ```ts
 * const options: WebSocketServeOptions = { port: 0, token: "s3cret-token", allowOrigins: ["http://localhost:5173"] };
 * ```
 */
export interface WebSocketServeOptions {
  /** The bearer token every WebSocket must present (as its `bearer.msp.…` subprotocol). Non-empty. */
  token: string;
  /** The port to listen on, 0 for any free one. @unit TCP port @defaultValue 0 */
  port?: number;
  /** The address to bind: an IP literal or `localhost`. A non-loopback one needs `allowRemote`. @defaultValue "127.0.0.1" */
  address?: string;
  /** Allow binding a non-loopback address (remote machines can then connect; no TLS: put a TLS proxy in front). @defaultValue false */
  allowRemote?: boolean;
  /** More origins a browser page may connect from, beside the host's own (`http://127.0.0.1:PORT`, `http://localhost:PORT`). */
  allowOrigins?: readonly string[];
  /** The largest incoming message (`ws`'s `maxPayload`); a bigger frame closes that connection with 1009. @unit bytes @defaultValue 16 MiB */
  maxMessageBytes?: number;
  /**
   * What the host holds for one connection: past it, the connection's live notifications wait in
   * the session log, and it is fed from there as it drains (a slow reader catches up; it is never
   * closed for being slow). Memory per connection stays within this plus one message.
   * @unit bytes @defaultValue 4 MiB
   */
  maxSendQueueBytes?: number;
  /**
   * How long a connection may hold bytes without draining any (no message written out to the
   * kernel) before it is closed with 4008: a client that stopped reading.
   * @unit milliseconds @defaultValue 30000 (`DEFAULT_STALL_TIMEOUT_MS`)
   */
  stallTimeoutMs?: number;
  /** Simultaneous TCP connections, page requests included; one more is closed as soon as it is accepted. @defaultValue 1024 */
  maxConnections?: number;
  /** Serve the files of this directory at `/` (GET and HEAD; `/` is its `index.html`); no page is served without it. */
  uiDir?: string | URL;
  /** Diagnostics sink (one line per refused request; never a token). */
  logger?: (line: string) => void;
}

/**
 * A running WebSocket server of a {@link MuseHost}, from {@link serveWebSocket}.
 *
 * @example
 * ```ts
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * const token = "a-long-random-token";
 * const server: WebSocketHostServer = await serveWebSocket(host, { token });
 * console.log(`open ${server.pageUrl}#token=${encodeURIComponent(token)}`);
 * await server.close();
 * ```
 */
export interface WebSocketHostServer {
  /** The bound address. */
  readonly address: string;
  /** The bound port (the real one when 0 was asked). @unit TCP port */
  readonly port: number;
  /** `http://HOST:PORT/`: the page (with `uiDir`) and the origin of the socket; add `#token=…` for a browser. */
  readonly pageUrl: string;
  /** `ws://HOST:PORT/msp`: what a client passes to `connectWebSocket`, with the token in its options. */
  readonly url: string;
  /** How many WebSocket connections are open now. */
  readonly connectionCount: number;
  /**
   * The most bytes the host has held for one connection (right after a send), over every
   * connection since the server started: at most `maxSendQueueBytes` plus one message (past the
   * bound the host stops reading that connection, so its own requests cannot add unbounded
   * replies; answers already waiting on their log write are the one exception).
   * @unit bytes
   */
  readonly heldBytesHighWater: number;
  /**
   * Stops accepting, closes every connection (1001, after what is queued for it), and resolves once
   * the listening socket is closed. Connections still open after `graceMs` are dropped.
   */
  close(graceMs?: number): Promise<void>;
}

/** Answers an upgrade request on its raw socket, before any WebSocket exists, and drops it. */
function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.once("finish", () => socket.destroy());
}

/**
 * Serves `host` over WebSocket on `options.address:options.port` (127.0.0.1 and a free port by
 * default), one JSON-RPC message per text frame, subprotocol `msp.v1`. Every request must name
 * this host in its `Host` header (a loopback name or the bound address, with the port), else 403;
 * a browser's `Origin` must be the host's own or in `allowOrigins`, else 403 (a request without
 * `Origin` is not from a browser page and passes). An upgrade with a query string is refused
 * (400: a token there would end up in logs and history); one without the right bearer token gets
 * 401; one that does not offer `msp.v1` gets 400. Resolves once listening; rejects when the
 * address is not loopback and `allowRemote` is not set, or when binding fails.
 *
 * @example
 * ```ts
 * import { randomBytes } from "node:crypto";
 * import { createHost, loadScriptedModel, serveWebSocket } from "@muse-code/host";
 *
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * const token = randomBytes(32).toString("base64url");
 * const server = await serveWebSocket(host, { token, port: 8080 });
 * console.error(`connect to ${server.url} with the token`);
 * ```
 */
export async function serveWebSocket(host: MuseHost, options: WebSocketServeOptions): Promise<WebSocketHostServer> {
  const {
    token,
    port = 0,
    address = DEFAULT_WS_ADDRESS,
    allowRemote = false,
    allowOrigins = [],
    maxMessageBytes = DEFAULT_MAX_LINE_BYTES,
    maxSendQueueBytes = DEFAULT_MAX_SEND_QUEUE_BYTES,
    stallTimeoutMs = DEFAULT_STALL_TIMEOUT_MS,
    maxConnections = DEFAULT_MAX_CONNECTIONS,
    uiDir,
    logger = () => {},
  } = options;
  if (typeof token !== "string" || token === "") throw new TypeError("serveWebSocket: token must be a non-empty string");
  if (!isLoopbackAddress(address) && !allowRemote)
    throw new Error(
      `refusing to listen on ${address}, which is not a loopback address: pass --allow-remote to allow other machines (and put a TLS proxy in front)`,
    );
  allowedOrigins(new Set(), allowOrigins); // a bad --allow-origin throws before anything is bound
  const pages = uiDir === undefined ? undefined : staticUi(uiDir);
  const tokenMatches = tokenChecker(token);
  const server = createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS });
  server.maxConnections = maxConnections;
  // A client that sends nothing or trickles its request headers holds a connection slot: bound how
  // long. Node enforces these on its check interval, which is set at creation (above).
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = HEADERS_TIMEOUT_MS;
  const sockets = new WebSocketServer({
    noServer: true,
    maxPayload: maxMessageBytes,
    perMessageDeflate: false,
    // Only msp.v1 is ever selected: the bearer entry, echoed back, would put the token in a response header.
    handleProtocols: (offered: Set<string>) => (offered.has(MSP_SUBPROTOCOL) ? MSP_SUBPROTOCOL : false),
  });
  // The checks need the real port (port 0 asks for any free one): they are built once listening.
  let hosts: ReadonlySet<string> = new Set();
  let origins: ReadonlySet<string> = new Set();
  const refused = (what: string, status: number, why: string) => logger(`refused ${what}: ${status} ${why}`);

  server.on("request", (request, response) => {
    if (!hostAllowed(request.headers.host, hosts)) {
      refused("a page request", 403, "Host is not this host");
      return plainAnswer(response, 403, "Forbidden: Host is not this host\n");
    }
    if (hasQuery(request.url) && /[?&](access_)?token=/i.test(request.url ?? "")) {
      refused("a page request", 400, "token in the query string");
      return plainAnswer(response, 400, "Bad Request: the token goes in the URL fragment (#token=...), never in the query string\n");
    }
    if (pages === undefined)
      return plainAnswer(response, 426, "Upgrade Required: this is an MSP WebSocket host (serve --ui for the page)\n", { Upgrade: "websocket" });
    pages(request, response);
  });

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    if (!hostAllowed(request.headers.host, hosts)) {
      refused("a WebSocket", 403, "Host is not this host");
      return refuseUpgrade(socket, 403, "Forbidden: Host is not this host");
    }
    if (!originAllowed(request.headers.origin, origins)) {
      refused("a WebSocket", 403, "Origin not allowed");
      return refuseUpgrade(socket, 403, "Forbidden: Origin not allowed (muse-host serve --allow-origin ORIGIN)");
    }
    if (hasQuery(request.url)) {
      refused("a WebSocket", 400, "query string");
      return refuseUpgrade(socket, 400, "Bad Request: no query string; the token goes in the Sec-WebSocket-Protocol header");
    }
    const offered = String(request.headers["sec-websocket-protocol"] ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    if (!tokenMatches(bearerTokenOf(offered))) {
      refused("a WebSocket", 401, "missing or wrong token");
      return refuseUpgrade(socket, 401, "Unauthorized: missing or wrong token");
    }
    if (!offered.includes(MSP_SUBPROTOCOL)) {
      refused("a WebSocket", 400, "msp.v1 not offered");
      return refuseUpgrade(socket, 400, `Bad Request: offer the ${MSP_SUBPROTOCOL} subprotocol`);
    }
    sockets.handleUpgrade(request, socket, head, (ws: WebSocket) => accept(ws));
  });

  const open = new Set<WebSocket>();
  const transports = new Set<MessageTransport>();
  let closedHighWater = 0;
  const accept = (ws: WebSocket) => {
    open.add(ws);
    // ws reports a bad frame (too big: 1009, bad UTF-8: 1007) here and closes the connection itself.
    ws.on("error", (error) => logger(`a WebSocket connection closed on a protocol error: ${error.message}`));
    const transport = webSocketTransport(ws, {
      maxSendQueueBytes,
      stallTimeoutMs,
      onStall: ({ stalledMs, heldBytes }) => {
        logger(
          `closed a WebSocket connection that is not reading: no progress for ${stalledMs} ms with ${heldBytes} bytes held for it ` +
            `(stall timeout ${stallTimeoutMs} ms, close ${HostCloseCodes.sendQueueFull}; it held at most ${transport.heldBytesHighWater ?? 0} bytes)`,
        );
        host.disconnect(transport);
      },
    });
    ws.once("close", () => {
      open.delete(ws);
      transports.delete(transport);
      closedHighWater = Math.max(closedHighWater, transport.heldBytesHighWater ?? 0);
      host.disconnect(transport);
    });
    transports.add(transport);
    host.connect(transport);
  };

  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(new Error(`cannot listen on ${urlHost(address)}:${port}: ${error.message}`));
    server.once("error", failed);
    server.listen(port, address, () => {
      server.off("error", failed);
      resolve();
    });
  });
  server.on("error", (error) => logger(`WebSocket server error: ${error.message}`));
  const bound = server.address();
  const realPort = typeof bound === "object" && bound !== null ? bound.port : port;
  hosts = allowedHosts(address, realPort);
  origins = allowedOrigins(hosts, allowOrigins);
  const shown = urlHost(address === "0.0.0.0" || address === "::" ? "127.0.0.1" : address);
  let closing: Promise<void> | undefined;
  return {
    address,
    port: realPort,
    pageUrl: `http://${shown}:${realPort}/`,
    url: `ws://${shown}:${realPort}/msp`,
    get connectionCount() {
      return open.size;
    },
    get heldBytesHighWater() {
      let most = closedHighWater;
      for (const transport of transports) most = Math.max(most, transport.heldBytesHighWater ?? 0);
      return most;
    },
    close(graceMs = 2_000) {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const ws of open) ws.close(1001, "the host is shutting down");
        const drained = Promise.all([...open].map((ws) => (ws.readyState === ws.CLOSED ? undefined : once(ws, "close"))));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
        clearTimeout(timer);
        for (const ws of open) ws.terminate();
        server.closeAllConnections();
        sockets.close();
        await closed;
      })();
      return closing;
    },
  };
}
