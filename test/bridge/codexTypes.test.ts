/**
 * The Codex bridge's generated types are the pinned binary's: the committed folder is byte for byte
 * what `codex app-server generate-ts --experimental` of @openai/codex (the version pinned in
 * packages/host/package.json) writes, so a bump of the pin without a regeneration fails here.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CODEX_VERSION, resolveCodexBinary } from "../../packages/host/src/bridge/codex/codexBinary.js";
import { checkCodexTypes } from "../../scripts/codex-types.js";

// A real app-server on a loaded 2-core machine: each test waits within its own bounds, under a roomy test timeout.
describe("Codex generated types", { timeout: 90_000 }, () => {
  it("pins @openai/codex exactly, at the version the bridge names, and the installed binary is that version", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../packages/host/package.json", import.meta.url), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies["@openai/codex"]).toBe(CODEX_VERSION);
    const version = execFileSync(resolveCodexBinary(), ["--version"], { encoding: "utf8", timeout: 30_000 });
    expect(version.trim()).toBe(`codex-cli ${CODEX_VERSION}`);
  });

  it("the committed folder is exactly what the pinned binary generates", () => {
    expect(checkCodexTypes()).toEqual({ missing: [], extra: [], changed: [] });
  });
});
