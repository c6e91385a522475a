/**
 * InputGate (issue 20): a transport's input stops past its bound, what was read waits in order, and
 * reading resumes below half the bound; answers owed (waiting on their log sync) count as held.
 */
import { describe, expect, it } from "vitest";
import { InputGate } from "../../packages/host/src/transport/messageTransport.js";

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

  it("an owed answer counts as held from when it is reserved: past the bound it stops reading, and reads again once it is paid and sent", async () => {
    const state = { held: 0, paused: false, handled: [] as string[] };
    const pays: Array<() => void> = [];
    const gate: InputGate<string> = new InputGate<string>({
      heldBytes: () => state.held,
      maxHeldBytes: 100,
      pause: () => (state.paused = true),
      resume: () => (state.paused = false),
      // Each command's answer of 40 bytes waits on a log sync: owed, nothing sent yet.
      handle: (message) => (state.handled.push(message), pays.push(gate.reserve(40))),
    });
    for (const m of ["a", "b", "c", "d", "e"]) gate.take(m);
    // a, b, c: 120 bytes owed, past 100: paused with nothing sent; d and e wait.
    expect(state.handled).toEqual(["a", "b", "c"]);
    expect(state.paused).toBe(true);
    expect(gate.owedBytes).toBe(120);
    expect(gate.drained()).toBe(false); // nothing held, but owed: still paused
    // The syncs finish: each answer is paid, then sent (now held by the transport).
    for (const pay of pays.splice(0)) {
      pay();
      state.held += 40;
    }
    expect(gate.owedBytes).toBe(0);
    expect(gate.drained()).toBe(false); // 120 held
    state.held = 0; // the peer read them
    expect(gate.drained()).toBe(true); // d, e: 80 owed, within the bound: reading again
    expect(state.handled).toEqual(["a", "b", "c", "d", "e"]);
    expect(state.paused).toBe(false);
    // A payment while paused checks for progress itself on the next turn of the event loop.
    gate.take("f"); // 120 owed: paused
    expect(state.paused).toBe(true);
    for (const pay of pays.splice(0)) {
      pay();
      pay(); // paying twice does nothing
    }
    expect(gate.owedBytes).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.paused).toBe(false);
  });

  it("a single owed answer larger than the bound: it stops reading, and reads again once it is paid; none is lost", async () => {
    const state = { held: 0, paused: false, handled: [] as string[] };
    let pay = () => {};
    const gate = new InputGate<string>({
      heldBytes: () => state.held,
      maxHeldBytes: 100,
      pause: () => (state.paused = true),
      resume: () => (state.paused = false),
      handle: (message) => (state.handled.push(message), (pay = gate.reserve(500))),
    });
    gate.take("a");
    gate.take("b");
    expect(state).toMatchObject({ paused: true, handled: ["a"] });
    pay(); // the answer is sent and written out at once: no progress notice from the transport
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.handled).toEqual(["a", "b"]);
    expect(gate.owedBytes).toBe(500); // b's, owed now: paused again until it is paid
    expect(state.paused).toBe(true);
    gate.close();
    expect(gate.owedBytes).toBe(0);
    pay(); // after close: nothing
    expect(gate.owedBytes).toBe(0);
  });
});
