/**
 * Test your app's turn handling without a model or a process: the canned host replays a wire
 * transcript, checks every message your code sends against it, and answers as the host did.
 */
import assert from "node:assert/strict";
import type { MspClient } from "@muse-code/sdk";
import { CannedHost, checkTranscript } from "@muse-code/sdk/testing";

// #region app
/** Your app's code under test: start a turn, stop it, and say how it ended. */
async function runAndStop(msp: MspClient, sessionId: string, text: string): Promise<string> {
  const turn = msp.startTurn({ sessionId, input: [{ type: "text", text }] });
  const { turnCompleted } = await turn.cancel({ timeoutMs: 5_000 });
  return `Stopped (${turnCompleted.reason})`;
}
// #endregion app

// #region transcript
// A transcript is JSONL: one {"dir":"client"|"server","raw":"<JSON-RPC text>"} per line. Usually
// you record it from a real host; here it is written out so the program stands alone.
const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const TURN = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10"; // the commandId of turn/start, hence the turnId
const CANCEL = "018f6a21-0f0f-7aaa-bbbb-0123456789ab";
const line = (dir: "client" | "server", message: object) => JSON.stringify({ dir, raw: JSON.stringify({ jsonrpc: "2.0", ...message }) });
const transcript = [
  line("client", { id: 1, method: "turn/start", params: { sessionId: SESSION, commandId: TURN, input: [{ type: "text", text: "Run the tests" }] } }),
  line("server", { id: 1, result: { commandId: TURN, status: "accepted", turnId: TURN, startedNewTurn: true, disposition: "started" } }),
  line("client", { id: 2, method: "turn/cancel", params: { sessionId: SESSION, commandId: CANCEL, turnId: TURN } }),
  line("server", { id: 2, result: { commandId: CANCEL, status: "accepted", turnId: TURN } }),
  line("server", {
    method: "turn/completed",
    params: {
      sessionId: SESSION,
      viewCursor: `v:${SESSION}:1`,
      turnId: TURN,
      terminal: "cancelled",
      reason: "cancelled during tool execution",
      cause: { kind: "user" },
      durationMs: 5100,
    },
    emittedAtMs: 1754590945100,
  }),
];
// #endregion transcript

// #region test
const host = CannedHost.fromLines(transcript);
const msp = host.connect({ defaultTimeoutMs: 2_000 });
assert.equal(await runAndStop(msp, SESSION, "Run the tests"), "Stopped (cancelled during tool execution)");
await host.done(); // every transcript line was played, in order
await msp.close();
console.log("runAndStop matches the transcript");
// #endregion test

// #region stray
// Code that strays from the transcript gets a JSON-RPC error instead of a hang, and done() says where.
const strict = CannedHost.fromLines(transcript);
const client = strict.connect({ defaultTimeoutMs: 2_000 });
await assert.rejects(runAndStop(client, SESSION, "Run the unit tests"));
await assert.rejects(strict.done(), /params\.input\.0\.text: expected "Run the tests", got "Run the unit tests"/);
await client.close();
console.log("a stray turn/start is caught, with the field that differs");
// #endregion stray

// #region check
// checkTranscript: well-formed JSON-RPC 2.0 and the MSP invariants, each problem with its line.
// This transcript begins at turn/start, on a session created before it: mark it as beginning mid-session.
assert.deepEqual(checkTranscript(transcript, { beginsMidSession: true }), { ok: true, problems: [] });
console.log("the transcript keeps MSP's invariants");
// #endregion check
