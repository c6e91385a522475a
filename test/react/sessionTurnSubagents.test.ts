/**
 * useSessionTurn's subagent tree (issue 23): rendered with react-dom/server over a real session
 * on the real reference host (a 3-level tree of shell tools), the hook gives the turn's child
 * turns, every turn below it, and progress ready for describeTreeProgress, while the tree runs
 * and once a Stop of the turn has settled; a turn with no subagents gives empty, stable values.
 */
import { join } from "node:path";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import WebSocket from "ws";
import { afterEach, expect, it } from "vitest";
import { useSessionTurn, type SessionTurnView } from "../../src/react/index.js";
import { openSession, type MspSession } from "../../src/session/index.js";
import { describeTreeProgress } from "../../src/ui/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { startWsHost } from "../helpers/wsHost.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Render one component reading `useSessionTurn(session, turnId)`; returns what the hook gave and the HTML. */
function render(session: MspSession, turnId: string): { view: SessionTurnView; html: string } {
  let view: SessionTurnView | undefined;
  function Tree() {
    view = useSessionTurn(session, turnId);
    const { turn, children, subagents, progress } = view;
    return createElement(
      "section",
      null,
      createElement("p", null, describeTreeProgress(progress, { stopping: turn?.stopRequested === true })),
      createElement("p", null, `${children.length} children`),
      createElement(
        "ul",
        null,
        subagents.map((s) => createElement("li", { key: s.turnId }, `${s.depth}:${s.state}`)),
      ),
    );
  }
  const html = renderToString(createElement(Tree));
  return { view: view as SessionTurnView, html };
}

it("useSessionTurn gives the turn's child turns, every turn below it and their progress, running and after a Stop", async () => {
  const h = await startWsHost(join(repoRoot, "test/fixtures/models/subagents-tree.json"));
  cleanups.push(() => h.stop());
  const session = await openSession({
    connect: () =>
      connectWebSocket(`ws://127.0.0.1:${h.port}/`, { token: h.token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 15_000 }),
    reconnect: false,
    onWarning: () => {},
  });
  cleanups.push(() => session.close());

  const idle = render(session, "not-a-turn");
  expect(idle.view.children).toEqual([]);
  expect(idle.view.subagents).toEqual([]);
  expect(idle.view.progress).toEqual({ started: 0, ended: 0, running: 0 });
  expect(idle.html).toContain("no subagents");

  const started = session.startTurn("go");
  await untilSnapshot(session, (s) => s.turns[0]?.subagents.filter((t) => t.state === "running").length === 3, "three subagents running");
  session.stop(started.turnId);
  const stopping = render(session, started.turnId);
  expect(stopping.view.children.map((c) => c.depth)).toEqual([1, 1]);
  expect(stopping.view.children.every((c) => c.parent?.turnId === started.turnId)).toBe(true);
  expect(stopping.view.subagents.map((s) => s.depth).sort()).toEqual([1, 1, 2]);
  expect(stopping.html).toContain("stopping 3 of 3 subagents…");

  await started.settled({ timeoutMs: 60_000 });
  const ended = render(session, started.turnId);
  expect(ended.view.progress).toEqual({ started: 3, ended: 3, running: 0 });
  for (const s of ended.view.subagents) expect(s.terminal).toMatchObject({ terminal: "cancelled", cause: { kind: "parent" } });
  expect(ended.html).toContain("all 3 subagents ended");
  expect(ended.html).toContain("2 children");
  // Nothing changed since: the same arrays, so a memoized child does not re-render.
  expect(render(session, started.turnId).view.subagents).toBe(ended.view.subagents);
}, 90_000);
