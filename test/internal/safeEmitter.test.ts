/**
 * SafeEmitter behaves as eventemitter3 does (the type `client.events` is published as): random
 * sequences of on, once, off (with and without fn, context, once), removeAllListeners, emit
 * (including listeners that subscribe, unsubscribe or emit while an emit runs) give the same
 * calls, `this`, return values, listener lists and event names on both. And unlike
 * eventemitter3, a listener that throws is reported and the others still run.
 */
import { EventEmitter } from "eventemitter3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SafeEmitter } from "../../src/internal/safeEmitter.js";

type Op =
  | { t: "on" | "once" | "addListener"; event: number; fn: number; ctx: number; during: number }
  | { t: "off" | "removeListener"; event: number; fn: number | null; ctx: number; once: boolean }
  | { t: "removeAll"; event: number | null }
  | { t: "emit"; event: number; args: number };

const EVENTS = ["a", "b", Symbol.for("s")] as const;
const event = fc.nat(EVENTS.length - 1);
const fnIndex = fc.nat(3);
const ctx = fc.nat(2); // 0: none, 1 and 2: two context objects
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constantFrom("on" as const, "once" as const, "addListener" as const), event, fn: fnIndex, ctx, during: fc.nat(3) }),
  fc.record({ t: fc.constantFrom("off" as const, "removeListener" as const), event, fn: fc.option(fnIndex), ctx, once: fc.boolean() }),
  fc.record({ t: fc.constant("removeAll" as const), event: fc.option(event) }),
  fc.record({ t: fc.constant("emit" as const), event, args: fc.nat(6) }),
);

type Emitter = {
  on(e: unknown, fn: (...a: unknown[]) => void, c?: unknown): unknown;
  once(e: unknown, fn: (...a: unknown[]) => void, c?: unknown): unknown;
  addListener(e: unknown, fn: (...a: unknown[]) => void, c?: unknown): unknown;
  off(e: unknown, fn?: (...a: unknown[]) => void, c?: unknown, once?: boolean): unknown;
  removeListener(e: unknown, fn?: (...a: unknown[]) => void, c?: unknown, once?: boolean): unknown;
  removeAllListeners(e?: unknown): unknown;
  emit(e: unknown, ...a: unknown[]): boolean;
  listeners(e: unknown): unknown[];
  listenerCount(e: unknown): number;
  eventNames(): unknown[];
};

/** Run `ops` on `emitter`; return everything observable. */
function run(emitter: Emitter, ops: Op[]): unknown[] {
  const log: unknown[] = [];
  const contexts = [undefined, { name: "c1" }, { name: "c2" }];
  // Listeners by index; each logs its calls; some act on the emitter while an emit runs.
  const actions = new Map<number, number>();
  const fns = [0, 1, 2, 3].map(
    (i) =>
      function (this: unknown, ...args: unknown[]) {
        log.push(["call", i, this === emitter ? "emitter" : ((this as { name?: string } | undefined)?.name ?? "other"), args]);
        const during = actions.get(i) ?? 0;
        if (during === 1) emitter.on(EVENTS[0], fns[(i + 1) % 4] as () => void);
        if (during === 2) emitter.off(EVENTS[0], fns[(i + 1) % 4] as () => void);
        if (during === 3 && log.length < 200) emitter.emit(EVENTS[1], "nested");
      },
  );
  for (const o of ops) {
    if (o.t === "on" || o.t === "once" || o.t === "addListener") {
      actions.set(o.fn, o.during);
      emitter[o.t](EVENTS[o.event], fns[o.fn] as () => void, contexts[o.ctx]);
    } else if (o.t === "off" || o.t === "removeListener") {
      emitter[o.t](EVENTS[o.event], o.fn === null ? undefined : (fns[o.fn] as () => void), contexts[o.ctx], o.once);
    } else if (o.t === "removeAll") emitter.removeAllListeners(o.event === null ? undefined : EVENTS[o.event]);
    else if (o.t === "emit") log.push(["emit", emitter.emit(EVENTS[o.event], ...Array.from({ length: o.args }, (_, i) => i))]);
    log.push([
      "state",
      EVENTS.map((e) => emitter.listenerCount(e)),
      EVENTS.map((e) => emitter.listeners(e).map((f) => fns.indexOf(f as never))),
      emitter.eventNames().map(String),
    ]);
  }
  return log;
}

describe("SafeEmitter", () => {
  it("matches eventemitter3 on random sequences (2 000 runs)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const reported: unknown[] = [];
        expect(run(new SafeEmitter((e) => reported.push(e)) as unknown as Emitter, ops)).toEqual(run(new EventEmitter() as unknown as Emitter, ops));
        expect(reported).toEqual([]);
      }),
      { numRuns: 2_000 },
    );
  });

  it("a listener that throws is reported; the next still runs; emit returns true", () => {
    const reported: unknown[] = [];
    const emitter = new SafeEmitter<{ x: [number] }>((e) => reported.push(e));
    const seen: number[] = [];
    const boom = new Error("boom");
    emitter.on("x", () => {
      throw boom;
    });
    emitter.on("x", (n) => seen.push(n));
    expect(emitter.emit("x", 7)).toBe(true);
    expect(seen).toEqual([7]);
    expect(reported).toEqual([boom]);
  });

  it("rejects a listener that is not a function, as eventemitter3 does", () => {
    const emitter = new SafeEmitter<{ x: [] }>(() => {});
    expect(() => emitter.on("x", 1 as never)).toThrow(new TypeError("The listener must be a function"));
  });
});
