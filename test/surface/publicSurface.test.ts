import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as core from "../../src/index.js";
import * as node from "../../src/node/index.js";
import * as testing from "../../src/testing/index.js";

describe("public surface", () => {
  it("pins the sorted list of runtime exports of each entry point", () => {
    expect(Object.keys(core).sort()).toEqual([
      "COMMAND_REJECTED_CODE",
      "CancelCauseKinds",
      "Commands",
      "ContentLengthMessageReader",
      "ContentLengthMessageWriter",
      "DEFAULT_MAX_MESSAGE_BYTES",
      "DEFAULT_TERMINAL_CAPACITY",
      "FramedMessageReader",
      "FramedMessageWriter",
      "ItemKinds",
      "ItemLedger",
      "ItemStatuses",
      "MessageEncodingError",
      "MspClient",
      "MspConnection",
      "MspError",
      "MspErrorKinds",
      "NdjsonMessageReader",
      "NdjsonMessageWriter",
      "Notifications",
      "PROTOCOL_VERSION",
      "RejectionReasons",
      "StopController",
      "StopStates",
      "Terminals",
      "TurnHandle",
      "TurnRecorder",
      "cancelTurn",
      "connect",
      "isCompatibleProtocol",
      "isItem",
      "isNotification",
      "isTurnCompleted",
      "problemWithNotification",
    ]);
    expect(Object.keys(node).sort()).toEqual(["SpawnedHost", "groupAlive", "signalGroup", "spawnHost", "streamChannel"]);
    expect(Object.keys(testing).sort()).toEqual(
      ["CannedHost", "TRANSCRIPT_MISMATCH_CODE", "checkTranscript", "checkTranscriptParts", "createLinkedPair", "formatTranscriptEntry", "parseTranscript", "readTranscript", "recordingChannel"].sort(),
    );
  });

  // Its size is a benchmark target (npm run bench), not a unit test.
  it("the browser bundle of the core imports no node: module and nothing Node-only of ours", async () => {
    const out = await build({
      entryPoints: ["src/index.ts"],
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
  });
});
