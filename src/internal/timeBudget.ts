/**
 * timeBudget: one time bound shared by the steps of an operation (an ack, then a terminal), read
 * on the clock the deadline queue uses, so each step waits only for what is left of it.
 */
import type { WaitOptions } from "../types/waitOptions.js";
import { timeoutProblem } from "./boundedWait.js";

/**
 * Starts the budget `options.timeoutMs` (else `defaultTimeoutMs`) now, or throws the RangeError
 * of a bad one before anything is sent. The function returned gives the next step's options:
 * the caller's options with what is left of the budget as `timeoutMs`.
 */
export function timeBudget(options: WaitOptions, defaultTimeoutMs: number): () => WaitOptions {
  const budget = options.timeoutMs ?? defaultTimeoutMs;
  const problem = timeoutProblem(budget);
  if (problem !== undefined) throw problem;
  const end = performance.now() + budget;
  return () => ({ ...options, timeoutMs: Math.max(0, end - performance.now()) });
}
