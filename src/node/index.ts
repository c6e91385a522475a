/**
 * @muse-code/sdk/node: Node-only transports. Spawn a host as a child process and talk to it
 * over stdio; `spawnReferenceHost` does so for the reference host of `@muse-code/host`.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards.
 *
 * @packageDocumentation
 */
export { spawnHost, SpawnedHost } from "./spawnHost.js";
export type { SpawnHostOptions, HostExit } from "./spawnHost.js";
export { streamChannel } from "./streamChannel.js";
export type { StreamChannel, StreamChannelOptions } from "./streamChannel.js";
export { signalGroup, groupAlive } from "./processGroup.js";
export { tokenFromFile, TokenFileError } from "@muse-code/protocol/tokenFile.js";
export { fileStorage } from "./fileStorage.js";
export { spawnReferenceHost, exampleModelPath } from "./spawnReferenceHost.js";
export type {
  SpawnReferenceHostOptions,
  ExampleModelName,
  ReferenceHostWebSocketOptions,
  ReferenceHostWebSocket,
  SpawnedReferenceHost,
} from "./spawnReferenceHost.js";
