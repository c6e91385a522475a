/**
 * The core's byte budget that docs/architecture.md records: the browser bundle of `@muse-code/sdk`
 * (esbuild, minified, gzip -9) stays at or under 24 KB, with no `node:` import.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildCoreBundle } from "../../bench/coreBundle.js";

const root = process.cwd();
const BUDGET_BYTES = 24 * 1024;

describe("the core bundle budget", () => {
  it("is the one docs/architecture.md states", () => {
    expect(readFileSync(join(root, "docs/architecture.md"), "utf8")).toContain("**The core bundle stays at or under 24 KB min+gz**");
  });

  it("holds: the browser core, minified and gzipped, is at most 24 KB and imports nothing from node:", async () => {
    const { gzipBytes, metafile } = await buildCoreBundle();
    expect(gzipBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(Object.keys(metafile.inputs).filter((path) => path.startsWith("node:"))).toEqual([]);
  });
});
