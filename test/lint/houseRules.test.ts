/**
 * The house never-rules in eslint.config.js fire where they should and stay quiet where they
 * should not: Node built-ins in the browser-safe core, the reference host in client code, host/
 * reaching beyond protocol/ and internal/boundedMap.js, cli/ and demo/ bypassing the public entry
 * points, `export *`, and a missing header comment.
 */
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint();
const HEADER = "/** A header. */\n";
const HOUSE_RULES = new Set(["no-restricted-imports", "no-restricted-syntax", "house/file-header"]);

/** The house-rule findings for `code` linted as if it were `filePath` (a parse error shows as its message). */
async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === null || HOUSE_RULES.has(m.ruleId)).map((m) => m.ruleId ?? m.message);
}

describe("the house never-rules", () => {
  it.each([
    ["src/turns/x.ts", 'import { readFileSync } from "node:fs";'],
    ["src/turns/x.ts", 'import { readFileSync } from "fs";'],
    ["src/framing/x.ts", 'import { readFile } from "fs/promises";'],
    ["src/x.ts", 'export { join } from "path";'],
    ["src/ui/x.ts", 'export async function f() { return import("node:child_process"); }'],
    ["src/ui/x.ts", 'export async function f() { return import("fs/promises"); }'],
  ])("the browser-safe core imports no Node built-in (%s: %s)", async (file, code) => {
    expect(await problems(file, HEADER + code)).toEqual([expect.stringMatching(/^no-restricted-(imports|syntax)$/)]);
  });

  it.each(["src/node/x.ts", "src/host/x.ts", "src/testing/x.ts", "src/node/cli/x.ts", "test/x.test.ts", "scripts/x.ts"])(
    "%s may import Node built-ins",
    async (file) => {
      expect(
        await problems(file, `${HEADER}import { readFileSync } from "node:fs";\nimport { join } from "path";\nexport const f = [readFileSync, join];`),
      ).toEqual([]);
    },
  );

  it.each([
    ["src/client.ts", 'import { x } from "./host/x.js";'],
    ["src/node/x.ts", 'import { x } from "../host/museHost.js";'],
    ["src/testing/x.ts", 'import { x } from "@muse-code/sdk/host";'],
  ])("client code never imports the reference host (%s: %s)", async (file, code) => {
    expect(await problems(file, `${HEADER}${code}\nexport const y = x;`)).toEqual(["no-restricted-imports"]);
  });

  it("src/host/ imports, of our own code, only protocol/ and internal/boundedMap.js", async () => {
    const allowed = 'import { a } from "../protocol/cursor.js";\nimport { b } from "../internal/boundedMap.js";\nimport { c } from "./sessionLog.js";\n';
    expect(await problems("src/host/x.ts", `${HEADER}${allowed}export const y = [a, b, c];`)).toEqual([]);
    for (const spec of ["../internal/boundedWait.js", "../client.js", "../protocol/deeper/x.js", "../node/spawnHost.js", "@muse-code/sdk"]) {
      expect(await problems("src/host/x.ts", `${HEADER}import { x } from "${spec}";\nexport const y = x;`), spec).toEqual(["no-restricted-imports"]);
    }
  });

  it("src/node/cli/ and demo/ use only the public entry points", async () => {
    for (const file of ["src/node/cli/x.ts", "demo/x.ts"]) {
      expect(
        await problems(
          file,
          `${HEADER}import { connect } from "@muse-code/sdk";\nimport { spawnHost } from "@muse-code/sdk/node";\nexport const y = [connect, spawnHost];`,
        ),
      ).toEqual([]);
      const reach = file.startsWith("demo/") ? "../src/client.js" : "../client.js";
      expect(await problems(file, `${HEADER}import { connect } from "${reach}";\nexport const y = connect;`), file).toEqual(["no-restricted-imports"]);
    }
  });

  it('src/ never uses "export *"', async () => {
    expect(await problems("src/node/index.ts", `${HEADER}export * from "./spawnHost.js";`)).toEqual(["no-restricted-syntax"]);
    expect(await problems("src/index.ts", `${HEADER}export * from "./client.js";`)).toEqual(["no-restricted-syntax"]);
  });

  it("every src/ file opens with a /** header */ (after a shebang or /// directives)", async () => {
    expect(await problems("src/turns/x.ts", "export const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("src/turns/x.ts", "// a line comment is not a header\nexport const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("packages/host/src/serve/main.ts", `#!/usr/bin/env node\n${HEADER}export const a = 1;\n`)).toEqual([]);
    expect(await problems("src/internal/x.ts", `/// <reference lib="esnext.disposable" />\n${HEADER}export const a = 1;\n`)).toEqual([]);
    expect(await problems("test/x.test.ts", "export const a = 1;\n")).toEqual([]);
  });
});
