/**
 * useSessionTurn's steer: the hook hands the component the session's steer for its turn (rendered
 * with react-dom/server over a stand-in session that records what it was asked).
 */
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { expect, it } from "vitest";
import { useSessionTurn, type SessionTurnView } from "../../src/react/index.js";
import type { MspSession } from "../../src/session/index.js";

it("useSessionTurn exposes steer, bound to its turn, resolving with the session's answer", async () => {
  const asked: unknown[][] = [];
  const snapshot = { turns: [] };
  const session = {
    getSnapshot: () => snapshot,
    subscribe: () => () => {},
    steer: (...args: unknown[]) => {
      asked.push(args);
      return Promise.resolve({ commandId: "c1", status: "accepted", turnId: "t1", steerId: "c1" });
    },
  } as unknown as MspSession;
  let view: SessionTurnView | undefined;
  function Probe() {
    view = useSessionTurn(session, "t1");
    return null;
  }
  renderToString(createElement(Probe));
  expect(view?.turn).toBeUndefined();
  await expect(view?.steer("use pnpm", { timeoutMs: 5_000 })).resolves.toMatchObject({ turnId: "t1", steerId: "c1" });
  expect(asked).toEqual([["t1", "use pnpm", { timeoutMs: 5_000 }]]);
});
