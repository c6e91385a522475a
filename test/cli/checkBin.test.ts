/**
 * `muse check --spawn …` end to end: the bin (bundled from src/node/cli/main.ts) exits 0 on the
 * reference host serving the msp-check model, and 1 on a broken host, naming the failed
 * scenario on stdout.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { hostCommand, runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
const checkable = () => `--script ${q(join(repoRoot, "models/hello.json"))} --model ${q(`msp-check=${join(repoRoot, "models/check.json")}`)}`;

describe("muse check (the bin)", () => {
  it("exits 0 on the reference host, every scenario passing", async () => {
    const result = await runMuse(bundles(), ["check", "--spawn", hostCommand(bundles(), checkable())], { timeoutMs: 150_000 });
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^muse check: 23 scenarios, each bounded by 20000 ms$/m);
    expect(result.stdout).toMatch(/^malformed input +PASS/m);
    expect(result.stdout).toMatch(/muse check: all 23 scenarios passed/);
    expect(result.code).toBe(0);
  }, 160_000);

  it("exits 1 on a host that sends an item after the terminal, naming the scenario on stdout", async () => {
    const broken = `${q(process.execPath)} ${q(join(repoRoot, "test/fixtures/broken-hosts/item-after-terminal.mjs"))} -- ${hostCommand(bundles(), checkable())}`;
    const result = await runMuse(bundles(), ["check", "--spawn", broken], { timeoutMs: 300_000 });
    expect(result.stdout).toMatch(/^start and complete +FAIL/m);
    expect(result.stdout).toMatch(/^FAIL start and complete$/m);
    expect(result.stdout).toMatch(/after its turn\/completed at line \d+ \(invariant 3\)/);
    expect(result.stdout).toMatch(/muse check: \d+ of 23 scenarios failed: .*start and complete/);
    expect(result.code).toBe(1);
  }, 310_000);
});
