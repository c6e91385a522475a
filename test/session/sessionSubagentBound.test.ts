/**
 * Past `limits.subagentSessions` (issue 23), against the real reference host over a real
 * WebSocket: a subagent session the session had to stop following while it still ran keeps its
 * place. Its question still reaches the app on the session's turn (never a denial the host acts
 * on), its answer runs the tool, and its terminal still ends it in the snapshot (never shown
 * running forever).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { memoryStorage, openSession, type SessionSnapshot, type SessionTurn } from "../../src/session/index.js";
import { describeTreeProgress } from "../../src/ui/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startWsHost } from "../helpers/wsHost.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";

const MODEL = join(repoRoot, "test/fixtures/models/subagents-bound-asker.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("a running subagent the session stopped following (past limits.subagentSessions) still asks on the session's turn, and its end still shows", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muse-session-bound-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const marker = join(dir, "marker");
  const h = await startWsHost(MODEL, { env: { ...process.env, MUSE_MARKER: marker } });
  cleanups.push(() => h.stop());
  const warnings: string[] = [];
  const session = await openSession({
    connect: () =>
      connectWebSocket(`ws://127.0.0.1:${h.port}/`, { token: h.token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 15_000 }),
    storage: memoryStorage(),
    limits: { subagentSessions: 1 },
    onWarning: (w) => warnings.push(w),
  });
  cleanups.push(() => session.close());
  const started = session.startTurn("go");
  const turnOf = (s: SessionSnapshot) => s.turns.find((t) => t.turnId === started.turnId);
  const asking = await untilSnapshot(session, (s) => (turnOf(s)?.approvals.length ?? 0) > 0, "the first subagent's question");
  // Both subagent sessions ran at once, one followed at most: the asker was forgotten while running (warned).
  expect(warnings.some((w) => /more than 1 subagent sessions running/.test(w))).toBe(true);
  const turn = turnOf(asking) as SessionTurn;
  const [question] = turn.approvals;
  const asker = turn.subagents.find((t) => t.turnId === question?.turnId);
  expect(asker).toMatchObject({ depth: 1 });
  expect(question).toMatchObject({ tool: "shell", live: true, subagent: { sessionId: asker?.sessionId, depth: 1 } });
  session.answerApproval(question?.itemId as string, "approve");
  const done = await started.settled({ timeoutMs: 60_000 });
  expect(done.terminal?.terminal).toBe("completed");
  expect(existsSync(marker)).toBe(true);
  // Every subagent's own terminal is in the snapshot, the forgotten one's included.
  expect(done.subagents).toHaveLength(2);
  for (const t of done.subagents) expect(t).toMatchObject({ state: "ended", terminal: { terminal: "completed" } });
  expect(describeTreeProgress(done.subagentProgress)).toBe("all 2 subagents ended");
}, 90_000);
