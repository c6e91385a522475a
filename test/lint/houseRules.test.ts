/**
 * The house never-rules in eslint.config.js fire where they should and stay quiet where they
 * should not: Node built-ins in the browser-safe core (the protocol package included), the
 * reference host in the SDK, the protocol package reaching out of itself, the host reaching beyond
 * itself and @muse-code/protocol, the muse CLI and demo/ bypassing the SDK's public entry points,
 * `export *`, and a missing header comment.
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
    ["packages/protocol/src/x.ts", 'import { readFileSync } from "node:fs";'],
  ])("the browser-safe core imports no Node built-in (%s: %s)", async (file, code) => {
    expect(await problems(file, HEADER + code)).toEqual([expect.stringMatching(/^no-restricted-(imports|syntax)$/)]);
  });

  it.each(["src/node/x.ts", "src/testing/x.ts", "packages/host/src/server/x.ts", "packages/host/src/cli/x.ts", "test/x.test.ts", "scripts/x.ts"])(
    "%s may import Node built-ins",
    async (file) => {
      expect(
        await problems(file, `${HEADER}import { readFileSync } from "node:fs";\nimport { join } from "path";\nexport const f = [readFileSync, join];`),
      ).toEqual([]);
    },
  );

  it.each([
    ["src/client.ts", 'import { x } from "@muse-code/host";'],
    ["src/node/x.ts", 'import { x } from "../../packages/host/src/server/museHost.js";'],
    ["src/testing/x.ts", 'import { x } from "@muse-code/host";'],
  ])("the SDK never imports the reference host (%s: %s)", async (file, code) => {
    expect(await problems(file, `${HEADER}${code}\nexport const y = x;`)).toEqual(["no-restricted-imports"]);
  });

  it("the protocol package imports nothing outside itself", async () => {
    expect(await problems("packages/protocol/src/x.ts", `${HEADER}import { a } from "./cursor.js";\nexport const y = a;`)).toEqual([]);
    for (const spec of ["../../../src/errors.js", "@muse-code/sdk", "@muse-code/host"]) {
      expect(await problems("packages/protocol/src/x.ts", `${HEADER}import { x } from "${spec}";\nexport const y = x;`), spec).toEqual([
        "no-restricted-imports",
      ]);
    }
  });

  it("the host imports, of the shared code, only @muse-code/protocol", async () => {
    const allowed =
      'import { a } from "@muse-code/protocol/cursor.js";\nimport { b } from "@muse-code/protocol/boundedMap.js";\nimport { c } from "../log/sessionLog.js";\n';
    expect(await problems("packages/host/src/server/x.ts", `${HEADER}${allowed}export const y = [a, b, c];`)).toEqual([]);
    for (const spec of ["../../../../src/internal/boundedWait.js", "@muse-code/sdk", "@muse-code/sdk/node", "../../../protocol/src/cursor.js"]) {
      expect(await problems("packages/host/src/server/x.ts", `${HEADER}import { x } from "${spec}";\nexport const y = x;`), spec).toEqual([
        "no-restricted-imports",
      ]);
    }
  });

  it("the muse CLI and demo/ use only the SDK's public entry points", async () => {
    for (const file of ["packages/host/src/cli/x.ts", "demo/x.ts"]) {
      expect(
        await problems(
          file,
          `${HEADER}import { connect } from "@muse-code/sdk";\nimport { spawnHost } from "@muse-code/sdk/node";\nexport const y = [connect, spawnHost];`,
        ),
      ).toEqual([]);
      const reach = file.startsWith("demo/") ? "../src/client.js" : "../server/museHost.js";
      expect(await problems(file, `${HEADER}import { connect } from "${reach}";\nexport const y = connect;`), file).toEqual(["no-restricted-imports"]);
    }
    expect(await problems("packages/host/src/cli/x.ts", `${HEADER}import { connect } from "@muse-code/protocol";\nexport const y = connect;`)).toEqual([
      "no-restricted-imports",
    ]);
  });

  it('no package\'s src/ uses "export *"', async () => {
    expect(await problems("src/node/index.ts", `${HEADER}export * from "./spawnHost.js";`)).toEqual(["no-restricted-syntax"]);
    expect(await problems("packages/host/src/index.ts", `${HEADER}export * from "./server/museHost.js";`)).toEqual(["no-restricted-syntax"]);
    expect(await problems("packages/protocol/src/index.ts", `${HEADER}export * from "./types.js";`)).toEqual(["no-restricted-syntax"]);
    expect(await problems("src/index.ts", `${HEADER}export * from "./client.js";`)).toEqual(["no-restricted-syntax"]);
  });

  it("every source file opens with a /** header */ (after a shebang or /// directives)", async () => {
    expect(await problems("src/turns/x.ts", "export const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("packages/host/src/log/x.ts", "export const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("packages/protocol/src/x.ts", "export const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("src/turns/x.ts", "// a line comment is not a header\nexport const a = 1;\n")).toEqual(["house/file-header"]);
    expect(await problems("packages/host/src/serve/main.ts", `#!/usr/bin/env node\n${HEADER}export const a = 1;\n`)).toEqual([]);
    expect(await problems("src/internal/x.ts", `/// <reference lib="esnext.disposable" />\n${HEADER}export const a = 1;\n`)).toEqual([]);
    expect(await problems("test/x.test.ts", "export const a = 1;\n")).toEqual([]);
  });
});
