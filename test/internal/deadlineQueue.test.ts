/**
 * Tests of the deadline queue behind every bounded wait: one timer for all of them, each wait
 * still expiring on time (a shorter one queued after a longer one included), and no timer left
 * once nothing waits. Behaviour only: fake timers for the times, one real short timeout.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MspError } from "../../src/errors.js";
import { boundedWait } from "../../src/internal/boundedWait.js";
import { deadlineCount } from "../../src/internal/deadlineQueue.js";
import { connect } from "../../src/index.js";
import { createLinkedPair } from "../../src/testing/index.js";

const wait = (timeoutMs: number, onSettle: () => void = () => {}) => boundedWait<string>("test wait", { method: "test" }, { timeoutMs }, 60_000, onSettle);

/** Settles of `promise`, as "value" or the error's kind, for order checks. */
function outcome(promise: Promise<string>, into: string[], name: string): void {
  promise.then(
    () => into.push(`${name}: value`),
    (error: unknown) => into.push(`${name}: ${error instanceof MspError ? error.kind : String(error)}`),
  );
}

afterEach(() => {
  // Spies first: a spy made on a fake timer function restores that fake.
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("the deadline queue", () => {
  it("arms one timer for many waits, and each expires at its own time", async () => {
    vi.useFakeTimers();
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    const settled: string[] = [];
    const waits = Array.from({ length: 100 }, (_, i) => wait(1_000 + i));
    waits.forEach((w, i) => outcome(w.promise, settled, `w${i}`));
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    expect(deadlineCount()).toBe(100);
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(["w0: timeout"]);
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toHaveLength(50);
    await vi.advanceTimersByTimeAsync(50);
    expect(settled).toEqual(waits.map((_, i) => `w${i}: timeout`));
    expect(deadlineCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("re-arms for a shorter wait queued after a longer one: the shorter expires first, on time", async () => {
    vi.useFakeTimers();
    const settled: string[] = [];
    const long = wait(1_000);
    outcome(long.promise, settled, "long");
    await vi.advanceTimersByTimeAsync(100);
    outcome(wait(50).promise, settled, "short");
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(["short: timeout"]);
    await vi.advanceTimersByTimeAsync(849);
    expect(settled).toEqual(["short: timeout"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(["short: timeout", "long: timeout"]);
  });

  it("a wait that settles first never expires, runs its onSettle once, and leaves no timer", async () => {
    vi.useFakeTimers();
    const onSettle = vi.fn();
    const w = wait(1_000, onSettle);
    w.resolve("done");
    w.reject(new Error("too late"));
    await expect(w.promise).resolves.toBe("done");
    expect(onSettle).toHaveBeenCalledTimes(1);
    expect([deadlineCount(), vi.getTimerCount()]).toEqual([0, 0]);
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(w.promise).resolves.toBe("done");
  });

  it("keeps its one timer across back-to-back waits (a round trip in a loop), and drops it when idle", async () => {
    vi.useFakeTimers();
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    const clearTimeoutSpy = vi.spyOn(globalThis, "clearTimeout");
    for (let i = 0; i < 100; i++) {
      const w = wait(60_000);
      queueMicrotask(() => w.resolve(`r${i}`));
      await w.promise;
    }
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    await Promise.resolve();
    expect(vi.getTimerCount()).toBe(0);
    expect(clearTimeoutSpy).toHaveBeenCalled();
  });

  it("expires on time with real timers, while a longer wait stays pending", async () => {
    const long = wait(60_000);
    const started = performance.now();
    const short = wait(30);
    await expect(short.promise).rejects.toMatchObject({ kind: "timeout", data: { method: "test", timeoutMs: 30 } });
    // The timer may fire up to a millisecond before performance.now() reads 30 ms later.
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(long.settled).toBe(false);
    long.resolve("done");
    await expect(long.promise).resolves.toBe("done");
    expect(deadlineCount()).toBe(0);
  });

  it("a command with its own short timeout times out among commands on the default bound", async () => {
    vi.useFakeTimers();
    const [clientSide, hostSide] = createLinkedPair();
    hostSide.onData(() => {}); // a host that never answers
    const client = connect(clientSide, { defaultTimeoutMs: 10_000 });
    const settled: string[] = [];
    const slow = client.command("host/info", {});
    slow.catch(() => {});
    const quick = client.command("host/info", {}, { timeoutMs: 200 });
    quick.then(
      () => settled.push("quick: value"),
      (error: unknown) => settled.push(`quick: ${(error as MspError).kind} after ${(error as MspError<"timeout">).data.timeoutMs} ms`),
    );
    await vi.advanceTimersByTimeAsync(199);
    expect(settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(["quick: timeout after 200 ms"]);
    expect(client.pendingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(9_800);
    await expect(slow).rejects.toMatchObject({ kind: "timeout" });
    expect(client.pendingCount).toBe(0);
    await client.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
