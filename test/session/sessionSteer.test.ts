/**
 * The session layer's steer (MSP 2.1 `turn/steer`) against the real reference host over a real
 * WebSocket: sent on the live connection and consumed by the turn (its steering item shows in the
 * snapshot); refused with the terminal once the turn ended; rejected at once, typed, while the
 * session is disconnected (steering is not kept for the reconnect).
 */
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { MspError } from "../../src/errors.js";
import { openSession, type MspSession, type SessionSnapshot } from "../../src/session/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startProxy, startWsHost } from "../helpers/wsHost.js";

const STEER = join(repoRoot, "test/fixtures/models/steer.json");
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function until(session: MspSession, predicate: (s: SessionSnapshot) => boolean, what: string, timeoutMs = 15_000): Promise<SessionSnapshot> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const snapshot = session.getSnapshot();
      if (!predicate(snapshot)) return;
      clearTimeout(timer);
      off();
      resolve(snapshot);
    };
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    const off = session.subscribe(check);
    check();
  });
}

it("steers the running turn on the live connection; refused with the terminal once it ended; rejected at once, typed, while disconnected", async () => {
  const h = await startWsHost(STEER);
  cleanups.push(() => h.stop());
  const proxy = await startProxy(() => h.port);
  cleanups.push(() => proxy.close());
  const session = await openSession({
    connect: () =>
      connectWebSocket(`ws://127.0.0.1:${proxy.port}/`, { token: h.token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 10_000 }),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 50 },
    onWarning: () => {},
  });
  cleanups.push(() => session.close());

  const started = session.startTurn("go");
  const answer = await started.steer("use pnpm", { timeoutMs: 10_000 });
  expect(answer).toMatchObject({ turnId: started.turnId, steerId: answer.commandId });
  const turn = await started.settled({ timeoutMs: 20_000 });
  expect(turn.terminal?.terminal).toBe("completed");
  const texts = turn.items.map((item) => (item.kind === "message" ? `${item.author ?? "model"}: ${item.text} (${item.status})` : item.kind));
  // The steer may land before or after the first reply (no timing is assumed); the last reply heard it.
  expect([...texts].sort()).toEqual(["model: Heard you: use pnpm. Done. (completed)", "model: Looking at the repo. (completed)", "user: use pnpm (completed)"]);
  expect(texts.at(-1)).toBe("model: Heard you: use pnpm. Done. (completed)");

  const late = await started.steer("too late", { timeoutMs: 10_000 }).catch((e: unknown) => e);
  expect(MspError.is(late) && late.kind === "commandRejected" && late.data["reason"]).toBe("already_terminal");
  expect((late as MspError<"commandRejected">).data["terminal"]).toBe("completed");

  proxy.refuse(true);
  proxy.cut();
  await until(session, (s) => s.connection.state !== "open", "the drop");
  const offline = await session.steer(started.turnId, "while down").catch((e: unknown) => e);
  expect(MspError.is(offline) && offline.kind).toBe("connectionClosed");
  await expect(session.steer(started.turnId, [])).rejects.toThrow(TypeError);
  // Empty text is an empty input too: refused, typed, before anything is sent.
  await expect(session.steer(started.turnId, "")).rejects.toThrow(TypeError);
  await expect(session.steer(started.turnId, [{ type: "text", text: "" }])).rejects.toThrow(TypeError);
}, 40_000);
