/**
 * `npm run test:faults`: the fault, fuzz and leak suites on their own, in forked workers run
 * under `--unhandled-rejections=strict`, so an unhandled rejection crashes the worker and fails
 * the run (each file also traps them per test; see test/faults/harness.ts). These suites run in
 * plain `npm test` (CI) as well.
 */
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

const config = mergeConfig(base, defineConfig({ test: { pool: "forks", execArgv: ["--unhandled-rejections=strict"] } }));
// mergeConfig concatenates arrays: replace `include` rather than extend it. Drop the base's
// node/browser projects (they would bring their own includes); these suites need no browser.
const test = { ...config.test };
delete test.projects;
config.test = {
  ...test,
  include: process.env["MSP_TEST_ONLY"] ? [process.env["MSP_TEST_ONLY"]] : ["test/faults/**/*.test.ts", "test/fuzz/**/*.test.ts", "test/leaks/**/*.test.ts"],
};
export default config;
