/**
 * canned-host-test: test your own app code against the canned host. The host replays a
 * committed transcript, checks every message your code sends against it, and fails with a
 * diff when your code strays. checkTranscript() verifies a transcript keeps MSP's invariants.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { MspClient } from "@muse-code/sdk";
import { CannedHost, checkTranscript } from "@muse-code/sdk/testing";
import type { Recipe } from "./recipe.js";

// Recorded from the reference host (the cancel-mid-turn recipe's live arm): a session, a turn, Stop.
const transcriptPath = fileURLToPath(new URL("../transcripts/cancel-mid-turn.jsonl", import.meta.url));

// #region app
/** Your app's code under test: open a session, start a turn, and a Stop button that reports how it ended. */
async function runAndStop(msp: MspClient, text: string): Promise<string> {
  const { sessionId } = await msp.command("session/create", {});
  const turn = msp.startTurn({ sessionId, input: [{ type: "text", text }] });
  const { turnCompleted } = await turn.cancel({ timeoutMs: 5_000 });
  return `Stopped (${turnCompleted.reason})`;
}
// #endregion app

export const recipe: Recipe = {
  name: "canned-host-test",
  summary: "Test your own app against the canned host; a stray message fails with a diff",
  transcript: "cancel-mid-turn.jsonl",
  async run(env) {
    // #region test
    const host = CannedHost.fromFile(transcriptPath);
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    assert.equal(await runAndStop(msp, "Run the flaky integration suite"), "Stopped (cancelled during tool execution)");
    await host.done(); // every transcript line was played, in order
    await msp.close();
    // #endregion test

    // #region stray
    const strict = CannedHost.fromFile(transcriptPath);
    const client = strict.connect({ defaultTimeoutMs: 2_000 });
    await assert.rejects(runAndStop(client, "Run the unit tests")); // not what the transcript says
    await assert.rejects(strict.done(), /params\.input\.0\.text: expected "Run the flaky integration suite", got "Run the unit tests"/);
    // #endregion stray

    // #region check
    const verdict = checkTranscript(readFileSync(transcriptPath, "utf8"));
    assert.deepEqual(verdict, { ok: true, problems: [] });
    // #endregion check
    env.log("app code passed against the canned host; a stray message failed with a diff");
  },
};
