/**
 * Getting started: spawn the reference host of @muse-code/host (with its "hello" example
 * model), ask who it is, run one turn, and print the assistant's reply and how the turn ended.
 */
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

// The host is a child process; `await using` closes the connection and stops the child when
// this scope ends, even if a line below throws. Without it, call `await msp.close()` yourself:
// an open client keeps Node running.
await using msp = spawnReferenceHost({ script: exampleModelPath("hello") });

// host/info rejects with an MspError (kind "protocol") if the host speaks another major version of MSP.
const info = await msp.command("host/info", {});
console.log(`connected to ${info.name}, MSP ${info.protocolVersion}`);

const { sessionId } = await msp.command("session/create", {});

// Subscribe before the turn starts. (The SDK's own turn recorder has listened since the first byte.)
// The reply streams in as item/delta events; item/completed gives the whole message.
msp.events.on("item/completed", ({ item }) => {
  if (item.kind === "message") console.log(`assistant: ${item.text}`);
});

const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
const ended = await turn.waitForTerminal({ timeoutMs: 30_000 });
console.log(`turn ${ended.terminal}: ${ended.reason}`);
