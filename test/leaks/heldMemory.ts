/**
 * What a leak probe holds: heap plus ArrayBuffers after a full GC, for the probes that run in a
 * child `node --expose-gc` (ArrayBuffers are freed a tick after the GC that found them dead, so
 * it collects three times with a pause between).
 */
export async function heldMemory(): Promise<{ heap: number; arrayBuffers: number; total: number; rss: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with node --expose-gc");
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, arrayBuffers: m.arrayBuffers, total: m.heapUsed + m.arrayBuffers, rss: m.rss };
}
