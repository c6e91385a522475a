import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MspError, type TurnCompletedParams } from "../../src/index.js";
import { TurnRecorder } from "../../src/turns/turnRecorder.js";

const terminal = (turnId: string, kind: TurnCompletedParams["terminal"] = "completed"): TurnCompletedParams => ({
  sessionId: "s",
  viewCursor: "v:s:1",
  turnId,
  terminal: kind,
  reason: kind,
  durationMs: 1,
});

describe("TurnRecorder", () => {
  it("answers from the record first when the terminal is already in", async () => {
    const r = new TurnRecorder();
    r.record(terminal("t"));
    expect(await r.terminalOf("t", { timeoutMs: 0 })).toEqual(terminal("t"));
    expect(r.waiterCount).toBe(0);
  });

  it("wakes every waiter of a turn: a list, never a single slot", async () => {
    const r = new TurnRecorder();
    const stop = r.terminalOf("t");
    const indicator = r.terminalOf("t");
    const other = r.terminalOf("u", { timeoutMs: 20 }).catch((e: unknown) => (e as MspError).kind);
    expect(r.waiterCount).toBe(3);
    r.record(terminal("t", "cancelled"));
    expect((await stop).terminal).toBe("cancelled");
    expect((await indicator).terminal).toBe("cancelled");
    expect(await other).toBe("timeout");
    expect(r.waiterCount).toBe(0);
  });

  it("reports a duplicate terminal and keeps the first", () => {
    const r = new TurnRecorder();
    expect(r.record(terminal("t", "completed"))).toBe(true);
    expect(r.record(terminal("t", "failed"))).toBe(false);
    expect(r.get("t")?.terminal).toBe("completed");
  });

  it("timeout and abort are distinct kinds; an already-aborted signal rejects at once", async () => {
    const r = new TurnRecorder();
    const t = (await r.terminalOf("t", { timeoutMs: 1 }).catch((e: unknown) => e)) as MspError<"timeout">;
    expect([t.kind, t.data["turnId"], t.data["timeoutMs"]]).toEqual(["timeout", "t", 1]);
    const reason = new Error("gone");
    const a = (await r.terminalOf("t", { signal: AbortSignal.abort(reason) }).catch((e: unknown) => e)) as MspError;
    expect([a.kind, a.cause]).toEqual(["aborted", reason]);
    expect(r.waiterCount).toBe(0);
  });

  it("rejects a bad timeout with a RangeError, as a rejection (never a synchronous throw), leaving no waiter", async () => {
    const r = new TurnRecorder();
    await expect(r.terminalOf("t", { timeoutMs: -1 })).rejects.toThrow(RangeError);
    await expect(r.terminalOf("t", { timeoutMs: Number.NaN })).rejects.toThrow(RangeError);
    expect(r.waiterCount).toBe(0);
  });

  it("treats a timeoutMs beyond the runtime's timer range as unbounded, not as 1 ms", async () => {
    const r = new TurnRecorder();
    const wait = r.terminalOf("t", { timeoutMs: 2 ** 31 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.waiterCount).toBe(1);
    r.record(terminal("t"));
    expect((await wait).turnId).toBe("t");
  });

  it("keeps at most `capacity` terminals, evicting the oldest", () => {
    const r = new TurnRecorder({ capacity: 3 });
    for (const id of ["a", "b", "c", "d"]) r.record(terminal(id));
    expect(r.size).toBe(3);
    expect(r.get("a")).toBeUndefined();
    expect(r.get("d")).toBeDefined();
  });

  it("closeAll settles every waiter and later waits for unrecorded turns, but recorded ones stay readable", async () => {
    const r = new TurnRecorder();
    r.record(terminal("done"));
    const waiting = [r.terminalOf("x"), r.terminalOf("x"), r.terminalOf("y", { timeoutMs: Infinity })];
    const closed = new MspError("connectionClosed", "closed", { reason: "closed" });
    r.closeAll(closed);
    for (const w of waiting) await expect(w).rejects.toBe(closed);
    await expect(r.terminalOf("z")).rejects.toBe(closed);
    expect((await r.terminalOf("done")).terminal).toBe("completed");
  });

  it("any interleaving of terminal arrival, terminalOf, abort and close settles every waiter exactly once", async () => {
    type Step = { op: "wait"; turn: number; abortable: boolean } | { op: "record"; turn: number } | { op: "abort"; index: number } | { op: "close" };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ op: fc.constant("wait" as const), turn: fc.integer({ min: 0, max: 3 }), abortable: fc.boolean() }),
      fc.record({ op: fc.constant("record" as const), turn: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ op: fc.constant("abort" as const), index: fc.nat() }),
      fc.constant({ op: "close" as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        const r = new TurnRecorder();
        const waits: Array<{ turn: number; controller: AbortController; settled: number; outcome: string | undefined; promise: Promise<void> }> = [];
        const recorded = new Set<number>();
        let closed = false;
        for (const s of steps) {
          if (s.op === "wait") {
            const controller = new AbortController();
            const entry = { turn: s.turn, controller, settled: 0, outcome: undefined as string | undefined, promise: Promise.resolve() };
            entry.promise = r.terminalOf(`t${s.turn}`, s.abortable ? { signal: controller.signal, timeoutMs: Infinity } : { timeoutMs: Infinity }).then(
              (t) => {
                entry.settled += 1;
                entry.outcome = `terminal:${t.turnId}`;
              },
              (e: unknown) => {
                entry.settled += 1;
                entry.outcome = (e as MspError).kind;
              },
            );
            waits.push(entry);
          } else if (s.op === "record") {
            r.record(terminal(`t${s.turn}`));
            recorded.add(s.turn);
          } else if (s.op === "abort") {
            waits[s.index % Math.max(1, waits.length)]?.controller.abort();
          } else {
            r.closeAll(new MspError("connectionClosed", "closed", { reason: "closed" }));
            closed = true;
          }
        }
        r.closeAll(new MspError("connectionClosed", "closed", { reason: "closed" }));
        await Promise.all(waits.map((w) => w.promise));
        for (const w of waits) {
          expect(w.settled).toBe(1);
          expect(["terminal:t" + w.turn, "aborted", "connectionClosed"]).toContain(w.outcome);
        }
        void closed;
        void recorded;
        expect(r.waiterCount).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
