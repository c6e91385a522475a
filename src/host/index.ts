/**
 * `@muse-code/sdk/host`: the reference MSP host (scripted model, real shell tool, session log).
 * Any new export added here becomes public API. Use named exports, not wildcards.
 */
export { MuseHost, createHost, HOST_NAME, HOST_VERSION } from "./muse-host.js";
export type { MuseHostOptions } from "./muse-host.js";
export { runCli, parseServeArgs, loadServeModels, USAGE } from "./run-cli.js";
export type { ServeOptions } from "./run-cli.js";
export { loadScriptedModel, parseScriptedModel, streamStep } from "./scripted-model.js";
export type { ScriptedModel, ScriptedTurn, ScriptedStep, ScriptedToolCall, ModelChunk } from "./scripted-model.js";
export { PhaseMachine } from "./phase-machine.js";
export type { AgentPhase } from "./phase-machine.js";
export { SessionAgent, TurnReasons, TOOL_ABORTED_BEFORE_DISPATCH } from "./session-agent.js";
export type { SessionAgentOptions, TurnState } from "./session-agent.js";
export { runShell, killAllToolGroups, DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES, TOOL_PROCESSES_ESCAPED } from "./shell-tool.js";
export type { ToolExecution, ToolResult, ShellOptions } from "./shell-tool.js";
export { SessionLog, readSessionLog, summarizeSessionLog, sessionLogPath } from "./session-log.js";
export type { SessionLogRecord, SessionLogSummary, OpenTurn } from "./session-log.js";
export { recoverSessions, HOST_RESTARTED_REASON } from "./session-recovery.js";
export type { RecoveredSession } from "./session-recovery.js";
export { CommandCache, DEFAULT_COMMAND_CACHE_CAPACITY } from "./command-cache.js";
export type { CommandOutcome, ReplayRange } from "./command-cache.js";
export { createStdioTransport } from "./stdio-transport.js";
export type { MessageTransport } from "./message-transport.js";
export { JsonRpcErrorCodes, CommandError, errorResponse, notificationMessage } from "./json-rpc.js";
export type { JsonRpcId, JsonRpcError, JsonRpcResponse, JsonRpcNotification } from "./json-rpc.js";
