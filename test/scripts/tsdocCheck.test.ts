import { describe, expect, it } from "vitest";
import { checkTsdoc } from "../../scripts/tsdoc-check.js";

const root = process.cwd();
const fixture = { subpath: "./tsdoc-fixture", src: "test/fixtures/tsdoc/brokenExample.ts" };

describe("tsdoc:check", () => {
  it("type-checks each ts block of an @example and reports a failure at its source line", () => {
    const result = checkTsdoc({ root, entries: [fixture] });
    expect(result.ok).toBe(false);
    expect(result.exports).toBe(3);
    // twice's block and REFUSED's ts block; the json block is not compiled.
    expect(result.examples).toBe(2);
    expect(result.problems).toHaveLength(2);
    expect(result.problems[0]).toBe("test/fixtures/tsdoc/brokenExample.ts:37 UNSHOWN: missing @example");
    // The line of `error.code` in the fixture; the type's name depends on how MspError narrows.
    expect(result.problems[1]).toMatch(
      /^test\/fixtures\/tsdoc\/brokenExample\.ts:25 \(export REFUSED\): TS2339: Property 'code' does not exist on type '\w*MspError/,
    );
  }, 120_000);
});
