/**
 * Proof that the fault suite's guard works: a test that lets a rejection escape must FAIL, both
 * through the per-test trap (plain `npm test`) and under `--unhandled-rejections=strict`
 * (`npm run test:faults`). The escaping test, canary.fixture.ts, runs only inside the child vitest
 * started here.
 */
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { useFaultHarness } from "./harness.js";

useFaultHarness();

describe("the unhandled-rejection guard", () => {
  it.each(["vitest.config.ts", "vitest.faults.config.ts"])(
    "a test that leaks a rejection fails the run (%s)",
    async (config) => {
      const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
        execFile(
          process.execPath,
          ["node_modules/vitest/vitest.mjs", "run", "--config", config],
          { cwd: repoRoot, env: { ...process.env, MSP_TEST_ONLY: "test/faults/canary.fixture.ts", CI: "1" }, timeout: 60_000 },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), output: `${stdout}${stderr}` }),
        );
      });
      expect(result.code).not.toBe(0);
      expect(result.output).toMatch(/canary rejection escaped/);
    },
    60_000,
  );
});
