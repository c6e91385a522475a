/**
 * Test helper for the muse CLI: one in-process reference host behind a plain `ws` server (the
 * `msp.v1` subprotocol, no token), every connection attached to that one host, so a session, and
 * a question it asks, outlive the muse process that started it.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { MessageTransport } from "../../packages/host/src/transport/messageTransport.js";
import type { MuseHost } from "../../packages/host/src/server/museHost.js";

/** A listening server in front of one host. */
export interface SharedHostServer {
  /** `ws://127.0.0.1:PORT/msp`, for `muse --ws`. */
  url: string;
  /** Drop every connection, stop listening, then shut the host down. */
  close(): Promise<void>;
}

/** Listen on a free loopback port and attach each accepted socket to `host` as one more connection. */
export async function serveSharedHost(host: MuseHost): Promise<SharedHostServer> {
  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    handleProtocols: (protocols: Set<string>) => (protocols.has("msp.v1") ? "msp.v1" : false),
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  server.on("connection", (socket) => {
    let onMessage: (text: string) => void = () => {};
    let onClose: () => void = () => {};
    const transport: MessageTransport = {
      onMessage: (callback) => void (onMessage = callback),
      onClose: (callback) => void (onClose = callback),
      send: (message) => socket.send(JSON.stringify(message)),
      close: () => socket.close(),
    };
    socket.on("message", (data) => onMessage(String(data)));
    socket.on("close", () => {
      onClose();
      host.disconnect(transport);
    });
    host.connect(transport);
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/msp`,
    async close() {
      for (const client of server.clients) client.terminate();
      await new Promise((resolve) => server.close(resolve));
      await host.shutdown();
    },
  };
}
