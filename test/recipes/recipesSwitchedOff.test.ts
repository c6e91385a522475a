/**
 * An operator's off in the environment does not change what the cookbook proves: with
 * MUSE_EXPERIMENTAL_SDK_ENABLED=0, `muse-host serve` refuses, yet `npm run recipes` passes every
 * recipe, live arms included, because the harness spawns each host with the switch on.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recipes } from "../../recipes/index.js";
import { hasLiveArm } from "../../recipes/recipe.js";
import { repoRoot } from "../helpers/repoRoot.js";

/** Every recipe, canned and live, on 2 shared cores: about half a minute; a hang fails here. */
const RUN_TIMEOUT_MS = 240_000;

const switchedOff = { ...process.env, MUSE_EXPERIMENTAL_SDK_ENABLED: "0" };

describe("the recipes with the switch off in the environment", () => {
  it("the environment is really off: the host refuses with exit 4", () => {
    const host = spawnSync(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "packages/host/src/serve/main.ts"), "serve", "--stdio", "--script", "packages/host/models/hello.json"],
      {
        cwd: repoRoot,
        env: switchedOff,
        encoding: "utf8",
        input: "",
        timeout: 30_000,
      },
    );
    expect(host.status).toBe(4);
    expect(host.stderr).toMatch(/^muse-host: muse serve is switched off \(MUSE_EXPERIMENTAL_SDK_ENABLED=0\)/);
  }, 30_000);

  it(
    "npm run recipes passes every recipe, canned and live",
    () => {
      const run = spawnSync("npm", ["run", "recipes"], { cwd: repoRoot, env: switchedOff, encoding: "utf8", timeout: RUN_TIMEOUT_MS });
      const arms = recipes.length + recipes.filter(hasLiveArm).length;
      expect(run.stdout, run.stdout + run.stderr).toMatch(new RegExp(`\\n${arms} passed, 0 failed\\n$`));
      for (const recipe of recipes.filter(hasLiveArm)) expect(run.stdout).toMatch(new RegExp(`^✓ ${recipe.name} \\(live\\) `, "m"));
      expect(run.status).toBe(0);
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
