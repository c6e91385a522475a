/**
 * The MCP TypeScript SDK's rows: its `Client` with `StdioClientTransport`, which spawns the child
 * server itself (bench/peers/children/peerHost.mjs, dialect "mcp"). Notifications are
 * `notifications/message` (logging), taken two ways: by a handler registered for that schema, as
 * an MCP app takes them (`typed`: the SDK checks the params), or by `fallbackNotificationHandler`
 * (`fallback`: params unchecked, its fastest public path). A round trip is `client.ping()`, the
 * cheapest request MCP defines (no params, result `{}`).
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { DeliveryCount } from "./deliveryCount.js";

const peerHost = fileURLToPath(new URL("./children/peerHost.mjs", import.meta.url));

/** How the client takes notifications: a handler for their schema, or the fallback handler. */
export type PeerHandler = "typed" | "fallback";

async function open(n: number, count?: DeliveryCount, handler: PeerHandler = "typed", bytes?: number): Promise<Client> {
  const client = new Client({ name: "muse-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [peerHost, "mcp", String(n), ...(bytes === undefined ? [] : [String(bytes)])],
    stderr: "inherit",
  });
  // Registered before connect(): the flood starts as soon as the handshake is done.
  if (count !== undefined && handler === "fallback") {
    client.fallbackNotificationHandler = (notification) => {
      count.note((notification.params?.["data"] as { seq?: number } | undefined)?.seq);
      return Promise.resolve();
    };
  } else if (count !== undefined) {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      count.note((notification.params.data as { seq?: number } | undefined)?.seq);
      return Promise.resolve();
    });
  }
  await client.connect(transport);
  return client;
}

/** Notifications/s the MCP SDK's Client delivers from a child flooding `n` of them (`bytes` each, else ~895). */
export async function mcpThroughput(n: number, handler: PeerHandler = "typed", bytes?: number, counted?: (count: DeliveryCount) => void): Promise<number> {
  const count = new DeliveryCount(`MCP SDK (${handler})`, n);
  counted?.(count);
  const client = await open(n, count, handler, bytes);
  try {
    return await count.rate;
  } finally {
    await client.close();
  }
}

/** An MCP client connected to an echo child: `roundTrip()` is one `ping()`. */
export async function mcpEcho(): Promise<{ roundTrip: () => Promise<unknown>; close: () => Promise<void> }> {
  const client = await open(0);
  return { roundTrip: () => client.ping(), close: () => client.close() };
}
