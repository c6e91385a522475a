/**
 * The barrel test of each package: every entry point's public names, values and types alike, listed
 * exactly, so that nothing leaks out of an entry point and nothing goes missing from one unnoticed.
 * The names are read with the TypeScript checker from each entry's source (re-exports resolved),
 * and each published package's package.json "exports" must list exactly the entry points below.
 * A change to a public surface changes a list here, on purpose (and its API report: npm run api:update).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

/** One entry point's public names. */
interface Surface {
  src: string;
  values: readonly string[];
  types: readonly string[];
}

/** Every entry point, by the name it is imported by. @muse-code/protocol is private: its list is what the SDK and the host may import. */
const SURFACES: Record<string, Surface> = {
  "@muse-code/sdk": {
    src: "src/index.ts",
    values: [
      "ApprovalDecisions",
      "ApprovalStates",
      "COMMAND_REJECTED_CODE",
      "CancelCauseKinds",
      "ClientCloseCodes",
      "Commands",
      "HOST_RESTARTED_REASON",
      "HostCloseCodes",
      "HostRequests",
      "ItemKinds",
      "ItemStatuses",
      "MspClient",
      "MspError",
      "MspErrorKinds",
      "Notifications",
      "PROTOCOL_VERSION",
      "RejectionReasons",
      "TOOL_ABORTED_BEFORE_DISPATCH",
      "TOOL_DENIED_REASON",
      "Terminals",
      "TurnHandle",
      "TurnReasons",
      "cancelTurn",
      "connect",
      "foldItem",
      "isCompatibleProtocol",
      "isItem",
      "isNotification",
      "isTurnCompleted",
      "uuidv7",
    ],
    types: [
      "AbortedData",
      "AnyMspError",
      "ApprovalContext",
      "ApprovalDecision",
      "ApprovalGrant",
      "ApprovalGrantRule",
      "ApprovalHandler",
      "ApprovalOffer",
      "ApprovalQuestion",
      "ApprovalState",
      "ByteChannel",
      "CancelCause",
      "CancelCauseKind",
      "CancelOutcome",
      "CancelTurnParams",
      "ChildCursors",
      "CloseInfo",
      "CommandMap",
      "CommandMethod",
      "CommandParams",
      "CommandParamsBase",
      "CommandRejectedData",
      "CommandResult",
      "CommandResultBase",
      "ConnectOptions",
      "ConnectionClosedData",
      "EndDetails",
      "EventArgsMap",
      "Framing",
      "HostRequestMap",
      "HostRequestMethod",
      "InboxCancelledParams",
      "Item",
      "ItemBase",
      "ItemDeltaEvent",
      "ItemDeltaField",
      "ItemDeltaParams",
      "ItemKind",
      "ItemNotificationParams",
      "ItemPatch",
      "ItemStatus",
      "ItemUpdatedParams",
      "JsonObject",
      "JsonValue",
      "LedgerItem",
      "MessageItem",
      "ModelInfo",
      "MspClientOptions",
      "MspErrorDataMap",
      "MspErrorKind",
      "MspEventEmitter",
      "MspEvents",
      "MspNotification",
      "NotificationBase",
      "NotificationHandler",
      "NotificationMethod",
      "NotificationParamsMap",
      "ParentTurnLink",
      "ProtocolData",
      "ReasoningItem",
      "RecordedTurns",
      "RejectionData",
      "RejectionReason",
      "RpcErrorData",
      "SourceRange",
      "StartTurnParams",
      "SubagentLink",
      "TableCapacities",
      "Terminal",
      "TextInput",
      "TimeoutData",
      "ToolApproveParams",
      "ToolApproveResult",
      "ToolCallItem",
      "TurnApprovals",
      "TurnCancelOptions",
      "TurnCanceller",
      "TurnClient",
      "TurnCompletedParams",
      "TurnInput",
      "TurnItems",
      "TurnReason",
      "TurnStartResult",
      "TurnStartedParams",
      "TurnUsage",
      "TypedEventEmitter",
      "Unsubscribe",
      "WaitOptions",
    ],
  },
  "@muse-code/sdk/framing": {
    src: "src/framing/index.ts",
    values: [
      "ContentLengthMessageReader",
      "ContentLengthMessageWriter",
      "DEFAULT_MAX_MESSAGE_BYTES",
      "DEFAULT_MAX_WRITE_BUFFER_BYTES",
      "FramedMessageReader",
      "FramedMessageWriter",
      "MessageEncodingError",
      "NdjsonMessageReader",
      "NdjsonMessageWriter",
      "WriteBufferFullError",
      "createFraming",
    ],
    types: ["ByteChannel", "EndDetails", "Framing", "FramingLimits", "FramingProblem", "ReaderOptions", "Unsubscribe", "WriterOptions"],
  },
  "@muse-code/sdk/websocket": {
    src: "src/websocket/index.ts",
    values: ["connectWebSocket", "keptToken"],
    types: [
      "KeptTokenOptions",
      "TokenStorage",
      "WebSocketCloseEventLike",
      "WebSocketConnectOptions",
      "WebSocketConstructor",
      "WebSocketLike",
      "WebSocketMessageEventLike",
    ],
  },
  "@muse-code/sdk/ui": {
    src: "src/ui/index.ts",
    values: [
      "StopController",
      "StopStates",
      "TurnTree",
      "canStop",
      "describeEnding",
      "describePhase",
      "describeTerminal",
      "describeTreeProgress",
      "describeUsage",
      "followTurnTree",
      "offeredDecisions",
      "problemWithDecision",
    ],
    types: [
      "EndedTree",
      "FollowTurnTreeOptions",
      "StopControllerOptions",
      "StopSnapshot",
      "StopState",
      "TreeProgress",
      "TreeTurn",
      "TreeTurnState",
      "TurnPhaseView",
      "TurnTreeFollower",
      "TurnTreeOptions",
    ],
  },
  "@muse-code/sdk/session": {
    src: "src/session/index.ts",
    values: ["SessionStorageError", "memoryStorage", "openSession"],
    types: [
      "KeyValueStorage",
      "MspSession",
      "ReconnectOptions",
      "SessionApproval",
      "SessionCloseKind",
      "SessionCloseReason",
      "SessionConnection",
      "SessionConnectionState",
      "SessionLimits",
      "SessionModel",
      "SessionOptions",
      "SessionSnapshot",
      "SessionStopState",
      "SessionStorageErrorKind",
      "SessionTurn",
      "SessionTurnHandle",
      "SessionTurnPhase",
    ],
  },
  "@muse-code/sdk/react": {
    src: "src/react/index.ts",
    values: ["useSession", "useSessionConnection", "useSessionTurn"],
    types: ["SessionTurnView"],
  },
  "@muse-code/sdk/node": {
    src: "src/node/index.ts",
    values: [
      "SpawnedHost",
      "TokenFileError",
      "exampleModelPath",
      "fileStorage",
      "groupAlive",
      "signalGroup",
      "spawnHost",
      "spawnReferenceHost",
      "streamChannel",
      "tokenFromFile",
    ],
    types: [
      "ExampleModelName",
      "HostExit",
      "ReferenceHostWebSocket",
      "ReferenceHostWebSocketOptions",
      "SpawnHostOptions",
      "SpawnReferenceHostOptions",
      "SpawnedReferenceHost",
      "StreamChannel",
      "StreamChannelOptions",
    ],
  },
  "@muse-code/sdk/testing": {
    src: "src/testing/index.ts",
    values: [
      "CannedHost",
      "TRANSCRIPT_MISMATCH_CODE",
      "checkTranscript",
      "checkTranscriptParts",
      "createLinkedPair",
      "formatTranscriptEntry",
      "parseTranscript",
      "readTranscript",
      "recordingChannel",
      "recordingWebSocket",
    ],
    types: [
      "CannedHostOptions",
      "CheckTranscriptOptions",
      "DoneOptions",
      "LinkedChannel",
      "RecordingChannelOptions",
      "TranscriptCheck",
      "TranscriptEntry",
      "TranscriptInput",
      "TranscriptLine",
    ],
  },
  "@muse-code/host": {
    src: "packages/host/src/index.ts",
    values: [
      "ACP_MODEL_NAME",
      "CODEX_MODEL_NAME",
      "DEFAULT_KILL_GRACE_MS",
      "DEFAULT_MAX_LIVE_SESSIONS",
      "DEFAULT_OUTPUT_CAP_BYTES",
      "HOST_NAME",
      "HOST_VERSION",
      "MuseHost",
      "acpModels",
      "codexModels",
      "createHost",
      "createStdioTransport",
      "loadScriptedModel",
      "parseScriptedModel",
      "runHostCli",
      "serveWebSocket",
    ],
    types: [
      "AcpAgentOptions",
      "ApprovalOffer",
      "CodexAgentOptions",
      "MessageTransport",
      "MuseHostOptions",
      "RecoveredSession",
      "ScriptedModel",
      "ScriptedStep",
      "ScriptedToolCall",
      "ScriptedTurn",
      "TextInput",
      "TurnInput",
      "TurnUsage",
      "WebSocketHostServer",
      "WebSocketServeOptions",
    ],
  },
  "@muse-code/protocol": {
    src: "packages/protocol/src/index.ts",
    values: [
      "ApprovalDecisions",
      "ApprovalStates",
      "BEARER_SUBPROTOCOL_PREFIX",
      "COMMAND_REJECTED_CODE",
      "CancelCauseKinds",
      "ClientCloseCodes",
      "Commands",
      "HOST_RESTARTED_REASON",
      "HostCloseCodes",
      "HostRequests",
      "ItemKinds",
      "ItemStatuses",
      "MSP_SUBPROTOCOL",
      "Notifications",
      "PROTOCOL_VERSION",
      "RejectionReasons",
      "TOOL_ABORTED_BEFORE_DISPATCH",
      "TOOL_DENIED_REASON",
      "Terminals",
      "TurnReasons",
      "bearerSubprotocol",
      "bearerTokenOf",
      "foldItem",
      "formatViewCursor",
      "isCompatibleProtocol",
      "isItem",
      "isNotification",
      "isObject",
      "isTurnCompleted",
      "parseViewCursor",
      "problemWithApprovalAnswer",
      "problemWithItem",
      "problemWithNotification",
      "problemWithSubagentLinks",
      "problemWithToolApprove",
      "uuidv7",
    ],
    types: [
      "ApprovalDecision",
      "ApprovalGrant",
      "ApprovalGrantRule",
      "ApprovalOffer",
      "ApprovalState",
      "CancelCause",
      "CancelCauseKind",
      "ChildCursors",
      "CommandMap",
      "CommandMethod",
      "CommandParams",
      "CommandParamsBase",
      "CommandResult",
      "CommandResultBase",
      "HostRequestMap",
      "HostRequestMethod",
      "InboxCancelledParams",
      "Item",
      "ItemBase",
      "ItemDeltaField",
      "ItemDeltaParams",
      "ItemKind",
      "ItemNotificationParams",
      "ItemPatch",
      "ItemStatus",
      "ItemUpdatedParams",
      "JsonObject",
      "JsonValue",
      "MessageItem",
      "ModelInfo",
      "NotificationBase",
      "NotificationMethod",
      "NotificationParamsMap",
      "ParentTurnLink",
      "ReasoningItem",
      "RejectionData",
      "RejectionReason",
      "SourceRange",
      "SubagentLink",
      "Terminal",
      "TextInput",
      "ToolApproveParams",
      "ToolApproveResult",
      "ToolCallItem",
      "TurnCompletedParams",
      "TurnInput",
      "TurnReason",
      "TurnStartedParams",
      "TurnUsage",
    ],
  },
};

/** The published packages: name, folder. */
const PACKAGES = [
  ["@muse-code/sdk", "."],
  ["@muse-code/host", "packages/host"],
] as const;

function exportedNames(): Map<string, { values: string[]; types: string[] }> {
  const config = ts.getParsedCommandLineOfConfigFile(join(repoRoot, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (config === undefined) throw new Error("tsconfig.json does not parse");
  const files = Object.values(SURFACES).map((s) => resolve(repoRoot, s.src));
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const found = new Map<string, { values: string[]; types: string[] }>();
  for (const [name, surface] of Object.entries(SURFACES)) {
    const file = program.getSourceFile(resolve(repoRoot, surface.src));
    const module = file && checker.getSymbolAtLocation(file);
    if (module === undefined) throw new Error(`${surface.src} is not a module`);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.getName());
    }
    found.set(name, { values: values.sort(), types: types.sort() });
  }
  return found;
}

describe("the barrels: each entry point's public names, exactly", () => {
  const found = exportedNames();
  for (const [name, surface] of Object.entries(SURFACES)) {
    it(`${name} (${surface.src})`, () => {
      expect(found.get(name)).toEqual({ values: [...surface.values], types: [...surface.types] });
    });
  }

  // What the modules really export at runtime is the checker's values, no more (a type-only name never becomes a value).
  it.each(Object.entries(SURFACES))("%s: its runtime exports are exactly its values", async (_name, surface) => {
    const loaded = (await import(resolve(repoRoot, surface.src))) as Record<string, unknown>;
    expect(Object.keys(loaded).sort()).toEqual([...surface.values]);
  });

  it.each(PACKAGES)("%s: package.json exports exactly the entry points listed here", (packageName, dir) => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
    expect(manifest.name).toBe(packageName);
    // Files shipped as they are (the manifest, the SDK's wire schema) are not entry points: they export no names.
    const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== "./package.json" && subpath !== "./msp.schema.json");
    const listed = Object.keys(SURFACES).filter((name) => name === packageName || name.startsWith(`${packageName}/`));
    expect(subpaths.map((subpath) => `${packageName}${subpath.slice(1)}`).sort()).toEqual(listed.sort());
  });

  it("the SDK exports the protocol's words it re-exports under the same names, and the host only the wire types its own shapes use", () => {
    const protocol = new Set([...(SURFACES["@muse-code/protocol"]?.values ?? []), ...(SURFACES["@muse-code/protocol"]?.types ?? [])]);
    const host = SURFACES["@muse-code/host"];
    expect([...(host?.types ?? [])].filter((name) => protocol.has(name)).sort()).toEqual(["ApprovalOffer", "TextInput", "TurnInput", "TurnUsage"]);
    expect([...(host?.values ?? [])].filter((name) => protocol.has(name))).toEqual([]);
  });
});
