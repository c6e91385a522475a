import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));
// MSP_TEST_ONLY runs one file outside the suite (the fault suite's canary uses it).
const only = process.env["MSP_TEST_ONLY"];
const BROWSER = "test/browser/**/*.test.ts";

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@muse-code\/sdk\/framing$/, replacement: src("framing/index.ts") },
      { find: /^@muse-code\/sdk\/websocket$/, replacement: src("websocket/index.ts") },
      { find: /^@muse-code\/sdk\/ui$/, replacement: src("ui/index.ts") },
      { find: /^@muse-code\/sdk\/session$/, replacement: src("session/index.ts") },
      { find: /^@muse-code\/sdk\/react$/, replacement: src("react/index.ts") },
      { find: /^@muse-code\/sdk\/testing$/, replacement: src("testing/index.ts") },
      { find: /^@muse-code\/sdk\/node$/, replacement: src("node/index.ts") },
      { find: /^@muse-code\/host$/, replacement: fileURLToPath(new URL("./packages/host/src/index.ts", import.meta.url)) },
      { find: /^@muse-code\/sdk$/, replacement: src("index.ts") },
    ],
  },
  test: {
    // Every suite runs in forked workers under --unhandled-rejections=strict: a rejection that
    // escapes crashes its worker and fails the run (the fault suite's canary proves it).
    pool: "forks",
    execArgv: ["--unhandled-rejections=strict"],
    // Every host a test spawns runs whatever the environment says of muse serve's off-switch (a test of the switch sets its own).
    env: { MUSE_EXPERIMENTAL_SDK_ENABLED: "1" },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Two projects so that the browser's global setup (provisioning Chromium) runs only when a
    // browser test is part of the run: vitest calls a project's globalSetup only if it has tests.
    projects: [
      { extends: true, test: { name: "node", include: only ? [only] : ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, BROWSER] } },
      { extends: true, test: { name: "browser", include: only ? [] : [BROWSER], globalSetup: ["test/browser/globalSetup.ts"] } },
    ],
  },
});
