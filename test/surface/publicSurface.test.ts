import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as core from "../../src/index.js";
import type { MspClient } from "../../src/index.js";
import * as framing from "../../src/framing/index.js";
import * as host from "../../packages/host/src/index.js";
import * as node from "../../src/node/index.js";
import * as websocket from "../../src/websocket/index.js";
import * as ui from "../../src/ui/index.js";
import * as session from "../../src/session/index.js";
import * as react from "../../src/react/index.js";
import * as testing from "../../src/testing/index.js";
import { makePeer, SESSION, terminal } from "../helpers/peer.js";

describe("public surface", () => {
  it("pins the sorted list of runtime exports of each entry point", () => {
    expect(Object.keys(core).sort()).toEqual([
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
    ]);
    expect(Object.keys(framing).sort()).toEqual([
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
    ]);
    expect(Object.keys(websocket).sort()).toEqual(["connectWebSocket", "keptToken"]);
    expect(Object.keys(ui).sort()).toEqual([
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
    ]);
    expect(Object.keys(session).sort()).toEqual(["memoryStorage", "openSession"]);
    expect(Object.keys(react).sort()).toEqual(["useSession", "useSessionConnection", "useSessionTurn"]);
    expect(Object.keys(node).sort()).toEqual([
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
    ]);
    expect(Object.keys(testing).sort()).toEqual(
      [
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
      ].sort(),
    );
    expect(Object.keys(host).sort()).toEqual([
      "DEFAULT_KILL_GRACE_MS",
      "DEFAULT_MAX_LIVE_SESSIONS",
      "DEFAULT_OUTPUT_CAP_BYTES",
      "HOST_NAME",
      "HOST_VERSION",
      "MuseHost",
      "createHost",
      "createStdioTransport",
      "loadScriptedModel",
      "parseScriptedModel",
      "runHostCli",
      "serveWebSocket",
    ]);
  });

  // The `@ts-expect-error` lines are checked by `tsc -p tsconfig.json`: the mutators are not part of the views' types.
  it("client.turns and client.items are read-only views: get and terminalOf, itemsOf and get, nothing that writes", async () => {
    const { client, send } = makePeer();
    const readOnly = (c: MspClient) => {
      // @ts-expect-error only the connection records terminals
      void c.turns.record;
      // @ts-expect-error only the connection settles waiters on close
      void c.turns.closeAll;
      // @ts-expect-error only the connection applies items
      void c.items.apply;
      // @ts-expect-error only the connection closes a turn's items
      void c.items.closeTurn;
      return [c.turns.get("t")?.terminal, c.items.itemsOf("t").length, c.items.get("t", "i")];
    };
    send({
      jsonrpc: "2.0",
      method: "item/started",
      params: {
        sessionId: SESSION,
        viewCursor: `v:${SESSION}:1`,
        item: { itemId: "i", kind: "message", turnId: "t", revision: 1, status: "inProgress", text: "" },
      },
    });
    send(terminal("t", 2));
    expect((await client.turns.terminalOf("t", { timeoutMs: 1_000 })).terminal).toBe("completed");
    expect(readOnly(client)).toEqual(["completed", 1, expect.objectContaining({ status: "cancelled", synthesized: true })]);
    // Not only in the type: the objects have no writers to reach by a cast either.
    for (const view of [client.turns, client.items] as unknown as Array<Record<string, unknown>>) {
      expect(Object.isFrozen(view)).toBe(true);
      for (const writer of ["record", "closeAll", "apply", "closeTurn"]) expect(view[writer]).toBeUndefined();
    }
    await client.close();
  });

  // Its size is a benchmark target (npm run bench), not a unit test.
  it.each(["src/index.ts", "src/framing/index.ts", "src/websocket/index.ts", "src/ui/index.ts", "src/session/index.ts"])(
    "the browser bundle of %s imports no node: module and nothing Node-only of ours",
    async (entry) => {
      const out = await build({
        entryPoints: [entry],
        bundle: true,
        platform: "browser",
        format: "esm",
        minify: true,
        write: false,
        metafile: true,
        logLevel: "silent",
      });
      const inputs = Object.keys(out.metafile.inputs);
      expect(inputs.filter((i) => i.startsWith("node:") || /(^|\/)src\/(node|host|testing)\//.test(i))).toEqual([]);
      const code = out.outputFiles[0]?.contents ?? new Uint8Array();
      expect(new TextDecoder().decode(code)).not.toMatch(/from\s*"node:|require\("node:/);
    },
  );
});
