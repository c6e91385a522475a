/**
 * A session that outlives its host process, in Node: `openSession` with a `connect` that spawns
 * the reference host over stdio on a data directory, and `fileStorage` to keep the session. The
 * host is killed mid-tool (SIGKILL, a crash); the session reconnects by spawning a new host on the
 * same data, resumes from its cursor, and shows the turn's real terminal: the one the restarted
 * host gives it ("host restarted"), never one the app made up.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exampleModelPath, fileStorage, spawnReferenceHost, type SpawnedHost } from "@muse-code/sdk/node";
import { openSession, type MspSession, type SessionSnapshot } from "@muse-code/sdk/session";

const dir = mkdtempSync(join(tmpdir(), "session-in-node-"));

// #region open
let host: SpawnedHost | undefined;
const session = await openSession({
  // Called for the first connection and again on every reconnect: a new host process on the same data.
  connect: async () => (host = spawnReferenceHost({ script: exampleModelPath("run-tests"), data: join(dir, "data") })),
  storage: fileStorage(join(dir, "session.json")), // the session id, cursor, turns and pending Stops
  reconnect: { initialDelayMs: 100, maxDelayMs: 1_000, maxAttempts: 5 },
});
// #endregion open

/** Resolves when `predicate` holds on a snapshot of `session` (bounded). */
function until(predicate: (snapshot: SessionSnapshot) => boolean, timeoutMs = 20_000): Promise<SessionSnapshot> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), timeoutMs);
    const check = () => {
      if (!predicate(session.getSnapshot())) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(session.getSnapshot());
    };
    const unsubscribe = (session as MspSession).subscribe(check);
    check();
  });
}

// #region crash
const turn = session.startTurn("Run the tests");
const phases: string[] = [];
session.subscribe(() => {
  const phase = session.getSnapshot().turns.find((t) => t.turnId === turn.turnId)?.phase;
  if (phase !== undefined && phases.at(-1) !== phase) phases.push(phase);
});
await until((s) => s.turns[0]?.items.some((item) => item.kind === "toolCall" && item.visibleOutput.includes("test 3 ... ok")) === true);
host?.process.kill("SIGKILL"); // the host crashes mid-tool
const ended = await turn.settled({ timeoutMs: 30_000 });
console.log(`phases: ${phases.join(" → ")}`);
console.log(`terminal: ${ended.terminal?.terminal} (${ended.terminal?.reason})`);
// #endregion crash

const kept = JSON.parse(readFileSync(join(dir, "session.json"), "utf8")) as Record<string, string>;
console.log(`kept in session.json: ${Object.keys(JSON.parse(kept["muse-code:session"] as string) as object).join(", ")}`);
await session.close();
await host?.close();
rmSync(dir, { recursive: true, force: true });
