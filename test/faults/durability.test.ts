/**
 * Durability, with real `muse-host` processes: nothing acknowledged is lost. A client works
 * through 8 `kill -9` restarts of the host on one --data, reconnecting each time the way a real
 * one does (resume after the last cursor it saw, retry the turn/starts it got no answer to). Every
 * acknowledged turn ends with exactly one terminal, and the whole history, read as one, keeps MSP's
 * invariants 1–5 (checkTranscriptParts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { uuidv7 } from "../../packages/protocol/src/uuidv7.js";
import { describe, expect, it } from "vitest";
import { parseViewCursor } from "../../packages/protocol/src/cursor.js";
import { checkTranscriptParts } from "../../src/testing/index.js";
import { useHostProcesses, type HostProcess } from "../host/hostProcess.js";
import { createSession, serving } from "./hostHelpers.js";
import { seededRandom } from "../helpers/seededRandom.js";

const { start, tempDir } = useHostProcesses("muse-host-durable-");

const RESTARTS = 8;

/** How many `turn/completed` each turn got in these transcript lines (both directions, as HostProcess records them). */
function terminalCounts(lines: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const entry = JSON.parse(line) as { dir: string; raw: string };
    const message = JSON.parse(entry.raw) as { method?: string; params?: { turnId?: string } };
    if (entry.dir === "server" && message.method === "turn/completed" && message.params?.turnId !== undefined) {
      counts.set(message.params.turnId, (counts.get(message.params.turnId) ?? 0) + 1);
    }
  }
  return counts;
}

describe("durability: nothing acknowledged is lost", () => {
  it(`durability: after ${RESTARTS} kill -9 restarts, every acknowledged turn has exactly one terminal`, async () => {
    const data = tempDir();
    const model = join(data, "model.json");
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          { steps: [{ reasoning: "Thinking it over.", text: "A streamed answer, a few characters at a time.", chunkSize: 3, chunkDelayMs: 15 }] },
          {
            steps: [
              { text: "Running it.", toolCalls: [{ tool: "shell", args: { command: "for i in 1 2 3 4 5; do echo line $i; sleep 0.05; done" } }] },
              { text: "Done." },
            ],
          },
        ],
      }),
    );
    const next = seededRandom(0x5eed);
    const parts: string[][] = [];
    const sessions: string[] = [];
    const lastSeen = new Map<string, string>();
    const acked = new Set<string>();
    /** turn/starts sent but never answered: retried, with the same commandId, after the restart. */
    let unanswered: Array<{ sessionId: string; commandId: string }> = [];

    const remember = (host: HostProcess) => {
      for (const m of host.wire) {
        const cursor = m.params?.["viewCursor"];
        const sessionId = m.params?.["sessionId"];
        if (m.method === undefined || typeof cursor !== "string" || typeof sessionId !== "string") continue;
        const seen = lastSeen.get(sessionId);
        if (seen === undefined || (parseViewCursor(cursor, sessionId) ?? 0) > (parseViewCursor(seen, sessionId) ?? 0)) lastSeen.set(sessionId, cursor);
      }
    };

    for (let run = 0; run <= RESTARTS; run++) {
      const host = start(["--script", model, "--data", data]);
      await serving(host);
      if (run === 0) for (let i = 0; i < 2; i++) sessions.push(await createSession(host));
      // Reconnect as a client does: resume after the last cursor seen; retry what got no answer.
      for (const sessionId of sessions) {
        const afterCursor = lastSeen.get(sessionId);
        await host.request("session/resume", afterCursor === undefined ? { sessionId } : { sessionId, afterCursor });
      }
      const sent = new Map<number, { sessionId: string; commandId: string }>();
      for (const retry of unanswered) sent.set(host.send("turn/start", { ...retry, input: [{ type: "text", text: "again" }] }), retry);
      if (run === RESTARTS) {
        await Promise.all([...sent.keys()].map((id) => host.waitFor((m) => m.id === id && m.method === undefined)));
        for (const [id, turn] of sent) if (host.wire.some((m) => m.id === id && m.result !== undefined)) acked.add(turn.commandId);
        // Everything is closed by now, or will be by the turns just retried: let them finish.
        await host.waitFor(() => {
          const ended = terminalCounts([...parts.flat(), ...host.transcript]);
          return [...acked].every((t) => ended.has(t));
        }, 15_000);
        expect(await host.stop()).toEqual({ code: 0, signal: null });
        parts.push(host.transcript);
        break;
      }
      // New work, some of it queued behind the running turn, then a kill at a random moment.
      for (const sessionId of sessions) {
        for (let k = 0; k < 2; k++) {
          const turn = { sessionId, commandId: uuidv7() };
          sent.set(host.send("turn/start", { ...turn, input: [{ type: "text", text: `run ${run}` }] }), turn);
        }
      }
      await new Promise((r) => setTimeout(r, 20 + Math.floor(next() * 1200)));
      await host.kill();
      remember(host);
      parts.push(host.transcript);
      unanswered = [];
      for (const [id, turn] of sent) {
        const answer = host.wire.find((m) => m.id === id && m.method === undefined);
        if (answer?.result !== undefined) acked.add(turn.commandId);
        else if (answer === undefined) unanswered.push(turn);
      }
    }

    expect(acked.size).toBeGreaterThan(RESTARTS); // the kills did not all land before any work
    const terminals = terminalCounts(parts.flat());
    for (const turnId of acked) expect(terminals.get(turnId), `turn ${turnId}`).toBe(1);
    for (const [turnId, count] of terminals) expect(count, `turn ${turnId}`).toBe(1);
    const verdicts = checkTranscriptParts(parts);
    expect(verdicts.flatMap((v) => v.problems)).toEqual([]);
  }, 120_000);
});
