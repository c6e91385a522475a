/**
 * `@muse-code/sdk/host`: the reference MSP host (scripted model, real shell tool, session log),
 * served over stdio or WebSocket (`serveWebSocket`), and `spawnReferenceHost` to start the copy
 * bundled in this package with its example models.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards. The host's
 * machinery (session agents, phase machine, shell tool, session log, command cache, JSON-RPC
 * helpers) stays internal: the protocol is the contract, not the host's insides.
 *
 * @packageDocumentation
 */
export { spawnReferenceHost, exampleModelPath } from "./spawnReferenceHost.js";
export type {
  SpawnReferenceHostOptions,
  ExampleModelName,
  ReferenceHostWebSocketOptions,
  ReferenceHostWebSocket,
  SpawnedReferenceHost,
} from "./spawnReferenceHost.js";
export { MuseHost, createHost, DEFAULT_MAX_LIVE_SESSIONS, HOST_NAME, HOST_VERSION } from "./muse-host.js";
export type { MuseHostOptions } from "./muse-host.js";
export { loadScriptedModel, parseScriptedModel } from "./scripted-model.js";
export type { ScriptedModel, ScriptedTurn, ScriptedStep, ScriptedToolCall } from "./scripted-model.js";
export { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES } from "./shell-tool.js";
export type { RecoveredSession } from "./session-recovery.js";
export { createStdioTransport } from "./stdio-transport.js";
export type { MessageTransport } from "./message-transport.js";
export { serveWebSocket } from "./web-socket-server.js";
export type { WebSocketServeOptions, WebSocketHostServer } from "./web-socket-server.js";
