/**
 * The canary: a test that lets a rejection escape. It is not part of the suite (its name does
 * not end in .test.ts); canary.test.ts runs it in a child vitest and expects that run to FAIL.
 */
import { it } from "vitest";
import { useFaultHarness } from "./harness.js";

useFaultHarness();

it("canary: lets a rejection escape (must fail)", async () => {
  void Promise.reject(new Error("canary rejection escaped"));
  await new Promise((r) => setTimeout(r, 10));
});
