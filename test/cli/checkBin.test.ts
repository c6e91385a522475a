/**
 * `muse check --spawn …` end to end: the bin (bundled from packages/host/src/cli/main.ts) exits 0 on the
 * reference host serving the msp-check model, and 1 on a broken host, naming the failed
 * scenario on stdout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { hostCommand, runMuse, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const q = (word: string) => JSON.stringify(word);
const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});
/** The reference host's checkable flags, its data in a fresh temp dir ("restart mid-tree" starts it again on the same data). */
const checkable = () => {
  const data = mkdtempSync(join(tmpdir(), "muse-check-bin-"));
  dataDirs.push(data);
  return `--data ${q(data)} --script ${q(join(repoRoot, "packages/host/models/hello.json"))} --model ${q(`msp-check=${join(repoRoot, "packages/host/models/check.json")}`)}`;
};

describe("muse check (the bin)", () => {
  it("exits 0 on the reference host, every scenario passing", async () => {
    const result = await runMuse(bundles(), ["check", "--spawn", hostCommand(bundles(), checkable())], { timeoutMs: 150_000 });
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^muse check: 30 scenarios, each bounded by 20000 ms$/m);
    expect(result.stdout).toMatch(/^malformed input +PASS/m);
    expect(result.stdout).toMatch(/muse check: all 30 scenarios passed/);
    expect(result.code).toBe(0);
  }, 160_000);

  it("exits 1 on a host that sends an item after the terminal, naming the scenario on stdout", async () => {
    const broken = `${q(process.execPath)} ${q(join(repoRoot, "test/fixtures/broken-hosts/item-after-terminal.mjs"))} -- ${hostCommand(bundles(), checkable())}`;
    const result = await runMuse(bundles(), ["check", "--spawn", broken], { timeoutMs: 300_000 });
    expect(result.stdout).toMatch(/^start and complete +FAIL/m);
    expect(result.stdout).toMatch(/^FAIL start and complete$/m);
    expect(result.stdout).toMatch(/after its turn\/completed at line \d+ \(invariant 3\)/);
    expect(result.stdout).toMatch(/muse check: \d+ of 30 scenarios failed: .*start and complete/);
    expect(result.code).toBe(1);
  }, 310_000);
});
