/**
 * `@muse-code/host`: the reference MSP host (scripted model, real shell tool, session log),
 * served over stdio or WebSocket (`serveWebSocket`); its bins are `muse` (`muse serve` is this
 * host) and `muse-host`. To start it as a child process from an app, use `spawnReferenceHost`
 * from `@muse-code/sdk/node`.
 *
 * Any new export added here becomes public API. Use named exports, not wildcards. The host's
 * machinery (session agents, phase machine, shell tool, session log, command cache, JSON-RPC
 * helpers) stays internal: the protocol is the contract, not the host's insides.
 *
 * @packageDocumentation
 */
export { MuseHost, createHost } from "./server/museHost.js";
export { DEFAULT_MAX_LIVE_SESSIONS, HOST_NAME, HOST_VERSION } from "./server/hostOptions.js";
export type { MuseHostOptions } from "./server/hostOptions.js";
export { loadScriptedModel, parseScriptedModel } from "./model/modelLoader.js";
export type { ScriptedModel, ScriptedTurn, ScriptedStep, ScriptedToolCall } from "./model/scriptedModel.js";
export { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES } from "./tools/shellTool.js";
export type { RecoveredSession } from "./log/sessionRecovery.js";
export { createStdioTransport } from "./transport/stdioTransport.js";
export type { MessageTransport } from "./transport/messageTransport.js";
export { serveWebSocket } from "./transport/webSocketServer.js";
export type { WebSocketServeOptions, WebSocketHostServer } from "./transport/webSocketServer.js";
export { runHostCli } from "./serve/runHostCli.js";
export { CODEX_MODEL_NAME, codexModels } from "./bridge/codexModels.js";
export type { CodexAgentOptions } from "./bridge/codexTurnDriver.js";
export { ACP_MODEL_NAME, acpModels } from "./bridge/acpModels.js";
export type { AcpAgentOptions } from "./bridge/acpTurnDriver.js";
// The wire types the scripted model's shapes use: the same declarations `@muse-code/sdk` exports.
export type { ApprovalOffer, TextInput, TurnInput, TurnUsage } from "@muse-code/protocol";
