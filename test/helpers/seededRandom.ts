/**
 * A small seeded pseudo-random generator (mulberry32) for tests and bench rows that must replay:
 * the same seed gives the same sequence, so a failure replays with its seed and a bench row uses
 * the same moments every run.
 */

/**
 * A generator of numbers in [0, 1), seeded with `seed` (any 32-bit integer).
 *
 * @example
 * ```ts
 * const next = seededRandom(9);
 * const delayMs = next() * 2_000; // the same first delay every run
 * ```
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
