import { describe, expect, it } from "vitest";
import { StopController, type StopState } from "../../src/ui/index.js";
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
    expect(final).toMatchObject({ state: "ended", ack: "accepted", turnCompleted: { terminal: "cancelled" } });
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
    expect(await pressed).toMatchObject({ state: "ended", ack: "already_terminal", turnCompleted: { terminal: "completed" } });
    await peer.client.close();
  });

  it("a turn that ends on its own disables Stop; a failed stop is reported, not swallowed", async () => {
    const peer = makePeer();
    const a = started(peer);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: a.turn.commandId, turnId: a.turn.commandId, startedNewTurn: true, disposition: "started" }));
    peer.send(terminal(a.turn.commandId, 1));
    await a.turn.completed;
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
    expect(final.error).toMatchObject({ kind: "commandRejected", data: { reason: "unknown_session" } });
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

describe("StopController over a stand-in for a TurnHandle", () => {
  it("a wrapper with no client still drives the button: no questions, the turn's own end", async () => {
    const peer = makePeer();
    const real = peer.client.startTurn({ sessionId: SESSION, input: [{ type: "text", text: "go" }] });
    // What an app's own wrapper might forward: no `client`.
    const standIn = { accepted: real.accepted, completed: real.completed, cancel: real.cancel.bind(real), turnId: undefined, commandId: real.commandId };
    const stop = new StopController(standIn as unknown as typeof real);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: real.commandId, turnId: real.commandId, startedNewTurn: true, disposition: "started" }));
    await real.accepted;
    const pressed = stop.stop();
    const cancel = await peer.nth(2);
    peer.send(result(cancel["id"], { commandId: "c", turnId: real.commandId }));
    peer.send(terminal(real.commandId, 1, "cancelled", "cancelled during model stream"));
    const final = await pressed;
    expect(final).toMatchObject({ state: "ended", ack: "accepted", turnCompleted: { terminal: "cancelled" } });
    expect(final.approval).toBeUndefined();
    await peer.client.close();
  });
});

describe("StopController keeps its word", () => {
  function acked(peer: ReturnType<typeof makePeer>, options: ConstructorParameters<typeof StopController>[1] = {}) {
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const stop = new StopController(turn, options);
    return { turn, stop };
  }

  it("a subscriber that throws does not make stop() throw or reject; the others still see every change; the throw is reported", async () => {
    const peer = makePeer();
    const reported: unknown[] = [];
    const { turn, stop } = acked(peer, { onSubscriberError: (error) => reported.push(error) });
    const seen: StopState[] = [];
    stop.subscribe(() => {
      throw new Error("render failed");
    });
    stop.subscribe((s) => seen.push(s.state));
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    await Promise.resolve();
    const pressed = stop.stop(); // the "stopping" change runs the throwing subscriber synchronously
    const cancel = await peer.nth(2);
    peer.send(result(cancel["id"], { commandId: "c", turnId: turn.commandId }));
    peer.send(terminal(turn.commandId, 1, "cancelled", "cancelled"));
    await expect(pressed).resolves.toMatchObject({ state: "ended", ack: "accepted" });
    expect(seen).toEqual(["running", "stopping", "ended"]);
    expect(reported.map((e) => (e as Error).message)).toEqual(["render failed", "render failed", "render failed"]);
    await peer.client.close();
  });

  it("without onSubscriberError a throwing subscriber goes to console.error, not into stop()", async () => {
    const peer = makePeer();
    const { turn, stop } = acked(peer);
    const errors: unknown[][] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      stop.subscribe(() => {
        throw new TypeError("bad render");
      });
      const pressed = stop.stop(); // held until the ack
      const start = await peer.nth(1);
      peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
      const cancel = await peer.nth(2);
      peer.send(result(cancel["id"], { commandId: "c", turnId: turn.commandId }));
      peer.send(terminal(turn.commandId, 1, "cancelled", "cancelled"));
      await expect(pressed).resolves.toMatchObject({ state: "ended" });
    } finally {
      console.error = original;
    }
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]?.[0]).toMatch(/StopController subscriber threw/);
    expect((errors[0]?.[1] as Error).message).toBe("bad render");
    await peer.client.close();
  });

  it("an onSubscriberError that throws itself still cannot reach stop()", async () => {
    const peer = makePeer();
    const original = console.error;
    console.error = () => {};
    try {
      const { stop } = acked(peer, {
        onSubscriberError: () => {
          throw new Error("reporter broke too");
        },
      });
      stop.subscribe(() => {
        throw new Error("render failed");
      });
      await peer.nth(1);
      const pressed = stop.stop();
      await peer.client.close();
      await expect(pressed).resolves.toMatchObject({ state: "failed", error: { kind: "connectionClosed" } });
    } finally {
      console.error = original;
    }
  });

  it("a function subscribed twice is called once per change; its unsubscribe removes it", async () => {
    const peer = makePeer();
    const { stop } = acked(peer);
    const seen: StopState[] = [];
    const listener = (s: { state: StopState }) => void seen.push(s.state);
    stop.subscribe(listener);
    const off = stop.subscribe(listener);
    await peer.nth(1);
    void stop.stop();
    expect(seen).toEqual(["stopping"]);
    off();
    await peer.client.close();
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(["stopping"]);
  });

  it("a bad stopTimeoutMs is the caller's mistake: the constructor throws a RangeError before any async work", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    for (const bad of [-1, Number.NaN]) {
      expect(() => new StopController(turn, { stopTimeoutMs: bad })).toThrow(RangeError);
    }
    expect(() => new StopController(turn, { stopTimeoutMs: "10" as unknown as number })).toThrow(TypeError);
    expect(() => new StopController(turn, { onSubscriberError: 1 as unknown as () => void })).toThrow(TypeError);
    expect(() => new StopController(undefined as unknown as typeof turn)).toThrow(TypeError);
    expect(new StopController(turn, { stopTimeoutMs: Infinity }).getSnapshot().state).toBe("starting");
    await peer.client.close();
  });

  it("a TypeError or RangeError from the turn (the caller's own mistake) is kept as is, not relabelled as a protocol error", async () => {
    const peer = makePeer();
    const badParams = peer.client.startTurn({ sessionId: SESSION, input: 1n as unknown as typeof input });
    const a = new StopController(badParams);
    const badTimeout = peer.client.startTurn({ sessionId: SESSION, input }, { timeoutMs: -5 });
    const b = new StopController(badTimeout);
    await badParams.accepted.catch(() => {});
    await badTimeout.accepted.catch(() => {});
    await Promise.resolve();
    const ea = a.getSnapshot().error;
    const eb = b.getSnapshot().error;
    expect(a.getSnapshot().state).toBe("failed");
    expect(ea).toBeInstanceOf(TypeError);
    expect(b.getSnapshot().state).toBe("failed");
    expect(eb).toBeInstanceOf(RangeError);
    expect(await a.stop()).toMatchObject({ state: "failed", canStop: false });
    await peer.client.close();
  });
});
