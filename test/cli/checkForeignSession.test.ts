/**
 * The check's foreign-session rule (foreignSession.ts) meets subagent trees (issue 23): a session
 * linked below one the connection created is heard from its link on (a delegating call's
 * `subagent` patch, or a child `turn/started` naming a heard parent session); any other session is
 * foreign, and a link from a foreign session makes nothing heard.
 */
import { describe, expect, it } from "vitest";
import type { WireLine } from "../../packages/host/src/cli/check/checkWire.js";
import { foreignSessionProblems } from "../../packages/host/src/cli/check/foreignSession.js";

function wire(messages: Array<["client" | "server", Record<string, unknown>]>): WireLine[] {
  return messages.map(([dir, message], i) => ({ line: i + 1, dir, raw: JSON.stringify(message), message }));
}

const created: Array<["client" | "server", Record<string, unknown>]> = [
  ["client", { jsonrpc: "2.0", id: 1, method: "session/create", params: { commandId: "c1" } }],
  ["server", { jsonrpc: "2.0", id: 1, result: { commandId: "c1", status: "accepted", sessionId: "parent" } }],
];
const link = (from: string, to: string): ["server", Record<string, unknown>] => [
  "server",
  {
    jsonrpc: "2.0",
    method: "item/updated",
    params: { sessionId: from, item: { itemId: "i1", turnId: "t1", revision: 2, subagent: { sessionId: to, turnId: "t2" } } },
  },
];
const started = (sessionId: string, parentSession?: string): ["server", Record<string, unknown>] => [
  "server",
  {
    jsonrpc: "2.0",
    method: "turn/started",
    params: {
      sessionId,
      turnId: `turn-of-${sessionId}`,
      ...(parentSession === undefined ? {} : { parent: { sessionId: parentSession, turnId: "t1", itemId: "i1" }, depth: 1 }),
    },
  },
];

describe("foreignSessionProblems below a tree", () => {
  it("hears a child session from the delegating call's subagent patch on, and a grandchild whose turn/started names a heard parent", () => {
    expect(
      foreignSessionProblems(wire([...created, started("parent"), link("parent", "child"), started("child", "parent"), started("grandchild", "child")])),
    ).toEqual([]);
  });

  it("calls a session foreign before its link, or when the link comes from a foreign session", () => {
    const early = foreignSessionProblems(wire([...created, started("child"), link("parent", "child")]));
    expect(early).toEqual(["line 3: turn/started for session child, which this connection neither created nor resumed (foreign session)"]);
    const viaForeign = foreignSessionProblems(wire([...created, link("stranger", "child"), started("child", "stranger")]));
    expect(viaForeign).toEqual([
      "line 3: item/updated for session stranger, which this connection neither created nor resumed (foreign session)",
      "line 4: turn/started for session child, which this connection neither created nor resumed (foreign session)",
    ]);
  });
});
