/**
 * Openers for runCheck: a spawned stdio host or a WebSocket host, each connection with the
 * check's wire hooks attached. `muse check --spawn …` and `--ws …` are these two.
 */
import { groupAlive, spawnHost, type SpawnHostOptions } from "@muse-code/sdk/node";
import { connectWebSocket, type WebSocketConnectOptions, type WebSocketConstructor } from "@muse-code/sdk/websocket";
import type { CheckWire } from "./checkWire.js";
import type { CheckedHost } from "./runCheck.js";

/**
 * An `open` for {@link runCheck} that spawns a fresh host per scenario (`spawnHost` with
 * `options`) and records its stdio wire. Closing a connection stops that host's process group.
 * The result's `spawned` lets "shutdown mid-tool" SIGTERM the host's process.
 */
export function spawnForCheck(options: Omit<SpawnHostOptions, "wrapChannel">): (wire: CheckWire) => Promise<CheckedHost> {
  return async (wire) => {
    const host = spawnHost({ ...options, wrapChannel: (channel) => wire.wrapChannel(channel, options.framing ?? "ndjson") });
    return {
      client: host,
      close: async () => void (await host.close()),
      // The host's own process, not its group: a host that relays to a child forwards the signal itself.
      spawned: { signal: (signal) => void host.process.kill(signal), exited: host.exited, groupAlive: () => groupAlive(host.pid) },
    };
  };
}

/**
 * An `open` for {@link runCheck} that connects to a WebSocket host (`connectWebSocket(url,
 * options)`) once per scenario and records its frames. On Node 20, pass the `ws` package's
 * class as `options.WebSocket`.
 */
export function webSocketForCheck(url: string | URL, options: WebSocketConnectOptions = {}): (wire: CheckWire) => Promise<CheckedHost> {
  return async (wire) => {
    const base = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (base === undefined) throw new TypeError("this runtime has no global WebSocket: pass options.WebSocket (on Node 20, the ws package's WebSocket)");
    const client = await connectWebSocket(url, { ...options, WebSocket: wire.webSocket(base) });
    return { client, close: async () => void (await client.close()) };
  };
}
