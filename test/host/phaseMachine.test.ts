/** Tests of the phase machine: one controller per non-idle phase, first cause wins, no-op when idle. */
import { describe, expect, it } from "vitest";
import { PhaseMachine } from "../../packages/host/src/agent/phaseMachine.js";

describe("PhaseMachine", () => {
  it("starts idle, and a cancel while idle is a no-op that arms nothing", () => {
    const machine = new PhaseMachine();
    expect(machine.phase.kind).toBe("idle");
    expect(machine.cancel({ kind: "user" })).toBe(false);
    const signal = machine.enterRunning("t1", 0);
    expect(signal.aborted).toBe(false); // the earlier cancel did not arm the next turn
    expect(machine.cause).toBeUndefined();
  });

  it("first cause wins for the active activity", () => {
    const machine = new PhaseMachine();
    const signal = machine.enterRunning("t1", 0);
    expect(machine.cancel({ kind: "hook", reason: "policy" })).toBe(true);
    expect(machine.cancel({ kind: "user" })).toBe(false);
    expect(signal.reason).toEqual({ kind: "hook", reason: "policy" });
    expect(machine.cause).toEqual({ kind: "hook", reason: "policy" });
  });

  it("gives each non-idle phase its own controller", () => {
    const machine = new PhaseMachine();
    const first = machine.enterRunning("t1", 0);
    machine.cancel({ kind: "user" });
    machine.toIdle();
    expect(machine.phase).toEqual({ kind: "idle", lastTurn: 0 });
    const maintenance = machine.enterMaintenance();
    expect(maintenance).not.toBe(first);
    expect(maintenance.aborted).toBe(false);
    expect(machine.cancel({ kind: "disposed" })).toBe(true);
    expect(maintenance.reason).toEqual({ kind: "disposed" });
    machine.toIdle();
    const second = machine.enterRunning("t2", 1);
    expect(second.aborted).toBe(false);
  });

  it("tracks the step and refuses to enter a phase unless idle", () => {
    const machine = new PhaseMachine();
    machine.enterRunning("t1", 3);
    machine.setStep(2);
    expect(machine.phase).toMatchObject({ kind: "running", turnId: "t1", turn: 3, step: 2 });
    expect(() => machine.enterRunning("t2", 4)).toThrow(/while running/);
    expect(() => machine.enterMaintenance()).toThrow(/while running/);
  });
});
