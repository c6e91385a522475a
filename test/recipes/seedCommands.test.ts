/**
 * The cookbook page's "Run it yourself" commands, run verbatim in a checkout that is not this one:
 * the repository's files (tracked and untracked, minus what .gitignore keeps out: node_modules/,
 * dist/) are copied, symlinks refused, into a temp dir, and each command runs there through
 * `sh -c`. npm may answer from its cache (`npm_config_prefer_offline`), which changes where the
 * packages come from, not what the commands do. Nothing runs in the repository itself.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

/** The page's two commands, character for character. */
const SEED_COMMANDS = [
  "npm ci && npm run build --workspace @muse-code/sdk",
  "npm run recipes --workspace @muse-code/sdk-cookbook -- --only cancel-mid-turn",
] as const;

/** npm ci, the build and one recipe on 2 shared cores: about two minutes; a hang fails here. */
const COMMAND_TIMEOUT_MS = 300_000;

/** The files a clone of this work tree would hold, as git lists them (deleted ones left out). */
function checkoutFiles(): string[] {
  const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: repoRoot, encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout.split("\0").filter((path) => path !== "" && lstatSync(join(repoRoot, path), { throwIfNoEntry: false }) !== undefined);
}

/** Copy the checkout's files into a fresh temp dir, refusing symlinks; returns the dir. */
function copyCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), "muse-seed-"));
  for (const path of checkoutFiles()) {
    const from = join(repoRoot, path);
    if (lstatSync(from).isSymbolicLink()) throw new Error(`${path} is a symlink: the copy must hold files only`);
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    copyFileSync(from, join(dir, path));
  }
  return dir;
}

let checkout: string | undefined;
// The copy holds a whole node_modules: removing it takes a while on a busy machine.
afterAll(() => {
  if (checkout !== undefined) rmSync(checkout, { recursive: true, force: true });
}, 120_000);

describe("the cookbook page's Run it yourself", () => {
  it(
    "passes verbatim in a fresh copy of the checkout: npm ci and the build, then the cancel-mid-turn recipe",
    () => {
      checkout = copyCheckout();
      // Never the repository under test: npm ci would replace its node_modules.
      expect(relative(realpathSync(repoRoot), realpathSync(checkout)).startsWith("..")).toBe(true);
      expect(readFileSync(join(checkout, "package.json"), "utf8")).toContain('"workspaces"');
      const env = {
        ...process.env,
        npm_config_prefer_offline: "true",
        npm_config_audit: "false",
        npm_config_fund: "false",
        npm_config_update_notifier: "false",
      };
      const outputs: string[] = [];
      for (const command of SEED_COMMANDS) {
        const run = spawnSync("sh", ["-c", command], { cwd: checkout, env, encoding: "utf8", timeout: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
        const output = `${run.stdout}${run.stderr}`;
        outputs.push(output);
        expect(run.status, `${command}\n${output.slice(-4000)}`).toBe(0);
      }
      expect(outputs[0]).not.toMatch(/No workspaces found/);
      // The recipe ran from the copy's own build, through the workspace link (node_modules/@muse-code/sdk -> the root).
      expect(lstatSync(join(checkout, "node_modules/@muse-code/sdk")).isSymbolicLink()).toBe(true);
      expect(lstatSync(join(checkout, "dist/index.js")).isFile()).toBe(true);
      expect(outputs[1]).toMatch(/^✓ cancel-mid-turn \(canned\) /m);
      expect(outputs[1]).toMatch(/^✓ cancel-mid-turn \(live\) /m);
      expect(outputs[1]).toMatch(/^2 passed, 0 failed$/m);
    },
    2 * COMMAND_TIMEOUT_MS + 60_000,
  );
});
