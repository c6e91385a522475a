import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { makePeer, rejection, result, SESSION, terminal } from "../helpers/peer.js";

const input = [{ type: "text" as const, text: "hi" }];

describe("TurnHandle", () => {
  it("holds a cancel pressed before the ack and sends it once the turnId is known", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    expect(turn.turnId).toBeUndefined();
    const stopped = turn.cancel();
    const start = await peer.nth(1);
    await new Promise((r) => setTimeout(r, 10));
    expect(peer.received).toHaveLength(1); // nothing sent before the ack
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    const cancel = await peer.nth(2);
    expect(cancel["method"]).toBe("turn/cancel");
    expect((cancel["params"] as Record<string, unknown>)["turnId"]).toBe(turn.commandId);
    peer.send(result(cancel["id"], { commandId: "c", turnId: turn.commandId }));
    peer.send(terminal(turn.commandId, 1, "cancelled", "cancelled before start"));
    const outcome = await stopped;
    expect(outcome.ack).toBe("accepted");
    expect((await turn.completed).reason).toBe("cancelled before start");
    expect(turn.turnId).toBe(turn.commandId);
    await peer.client.close();
  });

  it("a failed turn/start rejects accepted, cancel and terminal with the same typed error", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: "nope", input });
    const start = await peer.nth(1);
    peer.send(rejection(start["id"], { commandId: turn.commandId, reason: "unknown_session" }));
    for (const p of [turn.accepted, turn.cancel(), turn.completed]) {
      const e = (await p.catch((x: unknown) => x)) as MspError<"commandRejected">;
      expect([e.kind, e.data["reason"]]).toEqual(["commandRejected", "unknown_session"]);
    }
    await peer.client.close();
  });

  it("an ignored failed start raises no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const peer = makePeer();
      peer.client.startTurn({ sessionId: SESSION, input });
      await peer.nth(1);
      await peer.client.close();
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("two waiters on one turn (Stop handler and status indicator) both resolve", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    const { turnId } = await turn.accepted;
    const indicator = peer.client.turns.terminalOf(turnId);
    const stop = turn.cancel();
    const cancel = await peer.nth(2);
    peer.send(result(cancel["id"], { commandId: "c", turnId }));
    peer.send(terminal(turnId, 1, "cancelled", "cancelled"));
    const [a, b] = await Promise.all([indicator, stop]);
    expect(a).toBe(b.turnCompleted);
    expect(await turn.completed).toBe(a);
    // The turn's client is the one that started it: StopController reads its approvals through it.
    expect(turn.client).toBe(peer.client);
    await peer.client.close();
  });
});
