/**
 * When the host dies mid-turn: every wait settles at once as `connectionClosed`, nothing hangs.
 * Start the host again on the same data directory and `session/resume` from the last
 * `viewCursor` you saw: the replay brings what you missed, including the terminal the restarted
 * host gave the interrupted turn (`failed`, "host restarted").
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { MspError } from "@muse-code/sdk";
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

// The reference host keeps its session logs here; a restarted host reads them back.
const data = mkdtempSync(join(tmpdir(), "my-app-sessions-"));
const script = exampleModelPath("run-tests");
try {
  await using first = spawnReferenceHost({ script, data });
  const { sessionId } = await first.command("session/create", {});
  const turn = first.startTurn({ sessionId, input: [{ type: "text", text: "Run the tests" }] });
  const { turnId } = await turn.accepted;
  await sleep(500); // the tests run for a while

  // #region settle
  // The host dies (here we kill it; in life it crashes). Every wait settles now.
  const waiting = turn.waitForTerminal({ timeoutMs: 30_000 }).catch((error: unknown) => error);
  process.kill(-first.pid, "SIGKILL");
  const error = await waiting;
  if (!(error instanceof MspError && error.kind === "connectionClosed")) throw error;
  console.log(`the wait settled at once: ${error.kind} (${error.data.reason})`);
  // #endregion settle

  // #region resume
  // Remember where you were: the last viewCursor this connection saw for the session.
  const afterCursor = first.lastViewCursor(sessionId);
  await using again = spawnReferenceHost({ script, data });
  const resumed = await again.command("session/resume", afterCursor === undefined ? { sessionId } : { sessionId, afterCursor });
  // The replay follows the result on the wire; the turn's terminal is part of it.
  const ended = await again.turns.terminalOf(turnId, { timeoutMs: 10_000 });
  console.log(`resumed (${resumed.replayed > 0 ? "with a replay" : "nothing missed"}); the turn ${ended.terminal}: ${ended.reason}`);
  // #endregion resume
} finally {
  rmSync(data, { recursive: true, force: true });
}
