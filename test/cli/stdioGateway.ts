/**
 * Test helper for the muse CLI: a WebSocket gateway in front of stdio hosts. A `ws` server (the
 * `msp.v1` subprotocol) gives each connection its own host child process and relays one message
 * per text frame to and from the child's NDJSON stdin and stdout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { WebSocketServer, type ServerOptions } from "ws";

/** A listening gateway. */
export interface StdioGateway {
  /** `ws://127.0.0.1:PORT/msp`. */
  url: string;
  /** Drop every connection, kill the hosts still running (SIGKILL), stop listening. */
  close(): Promise<void>;
}

/**
 * Listen on a free loopback port; each connection starts `node ...hostArgs` (its stderr ignored)
 * and ends with it: the socket's close ends the host's stdin, the host's exit closes the socket.
 * `verifyClient` (ws's own option) may refuse an upgrade.
 */
export async function serveStdioGateway(hostArgs: readonly string[], options: { verifyClient?: ServerOptions["verifyClient"] } = {}): Promise<StdioGateway> {
  const server = new WebSocketServer({
    host: "127.0.0.1",
    port: 0,
    ...(options.verifyClient === undefined ? {} : { verifyClient: options.verifyClient }),
    handleProtocols: (protocols: Set<string>) => (protocols.has("msp.v1") ? "msp.v1" : false),
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const hosts = new Set<ChildProcess>();
  server.on("connection", (socket) => {
    const host = spawn(process.execPath, [...hostArgs], { stdio: ["pipe", "pipe", "ignore"] });
    hosts.add(host);
    host.on("exit", () => {
      hosts.delete(host);
      socket.close();
    });
    host.stdin.on("error", () => {});
    createInterface({ input: host.stdout, crlfDelay: Infinity }).on("line", (line) => socket.send(line));
    socket.on("message", (data) => host.stdin.write(`${String(data)}\n`));
    socket.on("close", () => host.stdin.end());
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/msp`,
    async close() {
      for (const client of server.clients) client.terminate();
      for (const host of hosts) host.kill("SIGKILL");
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
