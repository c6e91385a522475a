import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@muse-code\/sdk\/framing$/, replacement: src("framing/index.ts") },
      { find: /^@muse-code\/sdk\/testing$/, replacement: src("testing/index.ts") },
      { find: /^@muse-code\/sdk\/node$/, replacement: src("node/index.ts") },
      { find: /^@muse-code\/sdk\/host$/, replacement: src("host/index.ts") },
      { find: /^@muse-code\/sdk$/, replacement: src("index.ts") },
    ],
  },
  test: {
    // MSP_TEST_ONLY runs one file outside the suite (the fault suite's canary uses it).
    include: process.env["MSP_TEST_ONLY"] ? [process.env["MSP_TEST_ONLY"]] : ["test/**/*.test.ts"],
    // Every suite runs in forked workers under --unhandled-rejections=strict: a rejection that
    // escapes crashes its worker and fails the run (the fault suite's canary proves it).
    pool: "forks",
    execArgv: ["--unhandled-rejections=strict"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
