import { describe, expect, it } from "vitest";
import { StopController, type MspError, type StopState } from "../../src/index.js";
import { makePeer, rejection, result, SESSION, terminal } from "../helpers/peer.js";

const input = [{ type: "text" as const, text: "hi" }];

function started(peer: ReturnType<typeof makePeer>) {
  const turn = peer.client.startTurn({ sessionId: SESSION, input });
  const stop = new StopController(turn);
  const states: StopState[] = [stop.getSnapshot().state];
  stop.subscribe((s) => states.push(s.state));
  return { turn, stop, states };
}

describe("StopController", () => {
  it("starting → running → stopping → ended(cancelled, accepted)", async () => {
    const peer = makePeer();
    const { turn, stop, states } = started(peer);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    const pressed = stop.stop();
    expect(stop.getSnapshot().canStop).toBe(false);
    expect(stop.stop()).toBe(pressed); // a double click shares the first press
    const cancel = await peer.nth(2);
    peer.send(result(cancel["id"], { commandId: "c", turnId: turn.commandId }));
    expect(stop.getSnapshot().state).toBe("stopping"); // the ack is not the outcome
    peer.send(terminal(turn.commandId, 1, "cancelled", "cancelled during tool execution"));
    const final = await pressed;
    expect(final).toMatchObject({ state: "ended", ack: "accepted", terminal: { terminal: "cancelled" } });
    expect(states).toEqual(["starting", "running", "stopping", "ended"]);
    expect(peer.received).toHaveLength(2);
    await peer.client.close();
  });

  it("the race: Stop as the turn finishes reads as ended, not an error", async () => {
    const peer = makePeer();
    const { turn, stop } = started(peer);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    const pressed = stop.stop();
    const cancel = await peer.nth(2);
    peer.send(terminal(turn.commandId, 1, "completed", "completed"));
    peer.send(rejection(cancel["id"], { commandId: "c", reason: "already_terminal", turnId: turn.commandId, terminal: "completed" }));
    expect(await pressed).toMatchObject({ state: "ended", ack: "already_terminal", terminal: { terminal: "completed" } });
    await peer.client.close();
  });

  it("a turn that ends on its own disables Stop; a failed stop is reported, not swallowed", async () => {
    const peer = makePeer();
    const a = started(peer);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: a.turn.commandId, turnId: a.turn.commandId, startedNewTurn: true, disposition: "started" }));
    peer.send(terminal(a.turn.commandId, 1));
    await a.turn.terminal;
    expect(a.stop.getSnapshot()).toMatchObject({ state: "ended", canStop: false });
    expect((await a.stop.stop()).state).toBe("ended");

    const b = started(peer);
    const start2 = await peer.nth(2);
    peer.send(result(start2["id"], { commandId: b.turn.commandId, turnId: b.turn.commandId, startedNewTurn: true, disposition: "started" }));
    await b.turn.accepted;
    const pressed = b.stop.stop();
    const cancel = await peer.nth(3);
    peer.send(rejection(cancel["id"], { commandId: "c", reason: "unknown_session" }));
    const final = await pressed;
    expect(final.state).toBe("failed");
    expect((final.error as MspError<"commandRejected"> | undefined)?.data["reason"]).toBe("unknown_session");
    await peer.client.close();
  });

  it("the connection closing mid-turn fails the button instead of leaving it spinning", async () => {
    const peer = makePeer();
    const { stop } = started(peer);
    await peer.nth(1);
    await peer.client.close();
    await new Promise((r) => setTimeout(r, 0));
    expect(stop.getSnapshot()).toMatchObject({ state: "failed", canStop: false, error: { kind: "connectionClosed" } });
  });
});
