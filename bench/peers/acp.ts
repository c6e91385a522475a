/**
 * The ACP TypeScript SDK's rows: its `client()` app API over `ndJsonStream`, on the stdio of a
 * child agent (bench/peers/children/peerHost.mjs, dialect "acp"), the way ACP's own examples
 * connect a client to an agent process. Notifications are `session/update`
 * (`agent_message_chunk`), taken two ways: by a handler registered for that method, as an ACP
 * client takes an agent's stream (`typed`: the SDK checks the params), or by the raw `"*"`
 * fallback (`fallback`: params unchecked, its fastest public path). A round trip is
 * `session/set_mode`, a request whose result is `{}`. The client sends `initialize` first, as
 * every ACP client does.
 */
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream, PROTOCOL_VERSION, type ClientConnection } from "@agentclientprotocol/sdk";
import { DeliveryCount } from "./deliveryCount.js";
import type { PeerHandler } from "./mcp.js";

const peerHost = fileURLToPath(new URL("./children/peerHost.mjs", import.meta.url));

async function open(
  n: number,
  count?: DeliveryCount,
  handler: PeerHandler = "typed",
  bytes?: number,
): Promise<{ connection: ClientConnection; close: () => Promise<void> }> {
  const child = spawn(process.execPath, [peerHost, "acp", String(n), ...(bytes === undefined ? [] : [String(bytes)])], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const app = client({ name: "muse-bench" });
  if (count !== undefined && handler === "fallback") {
    app.onNotification("*", ({ params }) => {
      count.note((params as { update?: { _meta?: { seq?: number } } }).update?._meta?.seq);
    });
  } else if (count !== undefined) {
    app.onNotification("session/update", ({ params }) => {
      count.note((params.update as { _meta?: { seq?: number } })._meta?.seq);
    });
  }
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const connection = app.connect(stream);
  await connection.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const close = async () => {
    connection.close();
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
    await exited;
    clearTimeout(timer);
  };
  return { connection, close };
}

/** Notifications/s the ACP SDK's client app delivers from a child agent flooding `n` of them (`bytes` each, else ~895). */
export async function acpThroughput(n: number, handler: PeerHandler = "typed", bytes?: number, counted?: (count: DeliveryCount) => void): Promise<number> {
  const count = new DeliveryCount(`ACP SDK (${handler})`, n);
  counted?.(count);
  const { close } = await open(n, count, handler, bytes);
  try {
    return await count.rate;
  } finally {
    await close();
  }
}

/** An ACP client connected to an echo child: `roundTrip()` is one `session/set_mode` request. */
export async function acpEcho(): Promise<{ roundTrip: () => Promise<unknown>; close: () => Promise<void> }> {
  const { connection, close } = await open(0);
  const params = { sessionId: "0198f0aa-1111-7000-8000-0000000000aa", modeId: "code" };
  return { roundTrip: () => connection.agent.request("session/set_mode", params), close };
}
