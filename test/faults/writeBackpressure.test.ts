/**
 * Finding 7 (issue 10), write backpressure: a real child host that never reads its stdin. The
 * client used to queue every byte in the child's stdin stream (300 commands of 1 MiB: 300 MB,
 * each command only timing out). Now the writer waits for `drain`, holds at most
 * `maxWriteBufferBytes` for the host, and past that closes the connection saying the host is not
 * reading; every pending command settles at once.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_WRITE_BUFFER_BYTES } from "../../src/framing/index.js";
import { expectClosed, outcome, spawnFaulty, useFaultHarness } from "./harness.js";

useFaultHarness();

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const MiB = 1024 * 1024;
/** Bytes the process holds in JS: the heap plus ArrayBuffers (where queued frames live), after a full GC. */
const held = async () => {
  // ArrayBuffers are freed a moment after the GC that found them dead: collect twice, a tick apart.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

describe("finding 7: write backpressure", () => {
  it("finding 7: 300 commands of 1 MiB to a host that never reads: memory stays under maxWriteBufferBytes, and the connection closes saying the host is not reading", async () => {
    const host = spawnFaulty([["stopReading"], ["hang"]]);
    const big = "x".repeat(MiB); // one string, shared by every command: only the queued frames grow
    const before = await held();
    const buffersBefore = process.memoryUsage().arrayBuffers;
    let peak = 0; // the most bytes in ArrayBuffers (queued frames) seen while sending
    const sample = () => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - buffersBefore));
    const sending = Array.from({ length: 300 }, (_, i) => {
      const sent = outcome(host.command("host/info", { big, i }, { timeoutMs: 3_000 }));
      if (i % 10 === 0) sample();
      return sent;
    });
    sample();
    const results = await Promise.all(sending);
    const heldAfter = (await held()) - before;
    // Never more than the bound (plus the frame in flight and some slack) was held.
    expect(peak).toBeLessThan(DEFAULT_MAX_WRITE_BUFFER_BYTES + 16 * MiB);
    const reasons = new Set(results.map((r) => expectClosed(r.error).data.reason));
    expect(reasons.size).toBe(1);
    const [reason] = reasons;
    expect(reason).toMatch(/^the host is not reading its input: \d+ bytes queued \(maxWriteBufferBytes 67108864\)$/);
    expect(Number(/(\d+) bytes queued/.exec(reason as string)?.[1])).toBeLessThanOrEqual(DEFAULT_MAX_WRITE_BUFFER_BYTES);
    expect((await host.closed).reason).toBe(reason);
    expect(host.pendingCount).toBe(0);
    // Once closed, the queue is released.
    expect(heldAfter).toBeLessThan(16 * MiB);
  }, 30_000);

  it("finding 7: maxWriteBufferBytes is an option of spawnHost: 8 MiB closes after about 8 commands of 1 MiB", async () => {
    const host = spawnFaulty([["stopReading"], ["hang"]], { maxWriteBufferBytes: 8 * MiB });
    const big = "y".repeat(MiB);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => outcome(host.command("host/info", { big, i }, { timeoutMs: 3_000 }))));
    for (const r of results)
      expect(expectClosed(r.error).data.reason).toMatch(/^the host is not reading its input: \d+ bytes queued \(maxWriteBufferBytes 8388608\)$/);
  });

  it("finding 7: a host that reads gets every message: 10 MiB through a 4 MiB bound, each batch waiting for drain behind a full pipe", async () => {
    // The scripted host answers each request as soon as it has read it.
    const actions: Array<[string, ...unknown[]]> = [];
    for (let n = 1; n <= 40; n++) actions.push(["await", n], ["respond", n, { n }]);
    actions.push(["hang"]);
    const host = spawnFaulty(actions, { maxWriteBufferBytes: 4 * MiB });
    const big = "z".repeat(MiB / 4);
    const answered: unknown[] = [];
    // 5 batches of 8 × 256 KiB: each batch (2 MiB) is far more than a pipe holds, so most of it
    // waits in the writer for drain; in all, 10 MiB pass a 4 MiB bound.
    for (let batch = 0; batch < 5; batch++) {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => host.command("host/info", { big, i }, { timeoutMs: 10_000 })));
      answered.push(...results.map((r) => r["n"]));
    }
    expect(answered).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(host.isClosed).toBe(false);
  });
});
