/** InputGate (issue 20): a transport's input stops past its bound, what was read waits in order, and reading resumes below half the bound. */
import { describe, expect, it } from "vitest";
import { InputGate } from "../../src/host/messageTransport.js";

/** A gate over a fake transport whose every handled message adds `replyBytes` held bytes. */
function fakeTransport(bound: number, replyBytes: number) {
  const state = { held: 0, paused: false, pauses: 0, resumes: 0, handled: [] as string[] };
  const gate: InputGate<string> = new InputGate<string>({
    heldBytes: () => state.held,
    maxHeldBytes: bound,
    pause: () => ((state.paused = true), state.pauses++),
    resume: () => ((state.paused = false), state.resumes++),
    handle: (message) => {
      state.handled.push(message);
      state.held += replyBytes; // its reply
      gate.sent();
    },
  });
  return { gate, state };
}

describe("InputGate", () => {
  it("pauses once the replies pass the bound, keeps what was read in order, and answers it below half the bound", () => {
    const { gate, state } = fakeTransport(100, 30);
    for (const m of ["a", "b", "c", "d", "e", "f", "g"]) gate.take(m);
    // a, b, c, d: 120 bytes held, past 100: paused, the rest waits.
    expect(state.handled).toEqual(["a", "b", "c", "d"]);
    expect(state).toMatchObject({ paused: true, pauses: 1 });
    expect(gate.reading).toBe(false);
    expect(gate.waiting).toBe(3);
    state.held = 60; // above half the bound: nothing yet
    expect(gate.drained()).toBe(false);
    expect(state.handled).toHaveLength(4);
    state.held = 50; // half: e, f (110 > 100) answered, g waits
    expect(gate.drained()).toBe(false);
    expect(state.handled).toEqual(["a", "b", "c", "d", "e", "f"]);
    state.held = 0; // g answered, 30 held: it reads again
    expect(gate.drained()).toBe(true);
    expect(state.handled).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
    expect(state).toMatchObject({ paused: false, resumes: 1 });
    gate.take("h");
    expect(state.handled.at(-1)).toBe("h");
  });

  it("stays paused when the last waiting reply takes it past the bound, until the next progress", () => {
    const { gate, state } = fakeTransport(100, 80);
    for (const m of ["a", "b", "c"]) gate.take(m); // a: 80; b: 160, paused; c waits
    expect(state.handled).toEqual(["a", "b"]);
    state.held = 40;
    expect(gate.drained()).toBe(false); // c: 120 held, past the bound
    expect(state.handled).toEqual(["a", "b", "c"]);
    expect(state.paused).toBe(true);
    gate.take("d");
    expect(state.handled).toHaveLength(3);
    state.held = 0;
    expect(gate.drained()).toBe(true);
    expect(state.handled).toEqual(["a", "b", "c", "d"]);
  });

  it("once closed it drops what waits, takes nothing, and never resumes", () => {
    const { gate, state } = fakeTransport(10, 20);
    for (const m of ["a", "b", "c"]) gate.take(m);
    expect(gate.waiting).toBe(2);
    gate.close();
    expect(gate.waiting).toBe(0);
    state.held = 0;
    expect(gate.drained()).toBe(false);
    gate.take("d");
    expect(state).toMatchObject({ handled: ["a"], resumes: 0 });
  });

  it("a transport without replies over the bound is never paused", () => {
    const { gate, state } = fakeTransport(1_000, 10);
    for (let i = 0; i < 50; i++) gate.take(String(i));
    expect(state).toMatchObject({ pauses: 0, paused: false });
    expect(state.handled).toHaveLength(50);
  });
});
