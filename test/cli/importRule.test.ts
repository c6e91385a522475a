/**
 * The lint rule that keeps the muse CLI a user of the package like any other: src/node/cli/ imports the
 * public entry points, its own files, Node built-ins and npm packages; never the sources behind the
 * entry points, never the reference host, and no path that leaves src/node/cli/.
 */
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

const eslint = new ESLint({ cwd: repoRoot });
const HEADER = "/** A file. */\n";

async function problems(filePath: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${HEADER}import { x } from "${specifier}";\nexport const y = x;\n`, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe("src/node/cli/ imports", () => {
  it("may import the public entry points, its own files, Node built-ins and npm packages", async () => {
    for (const specifier of [
      "@muse-code/sdk",
      "@muse-code/sdk/node",
      "@muse-code/sdk/testing",
      "@muse-code/sdk/websocket",
      "./args.js",
      "./check/index.js",
      "node:fs",
      "ws",
    ]) {
      expect(await problems("src/node/cli/x.ts", specifier), specifier).toEqual([]);
    }
    expect(await problems("src/node/cli/check/x.ts", "./runCheck.js")).toEqual([]);
  });

  it("may not import the sources behind them, the reference host, or leave src/node/cli/", async () => {
    for (const specifier of ["../client.js", "../../src/index.js", "./check/../../client.js", "..", "@muse-code/sdk/host", "/work/src/index.ts"]) {
      expect(await problems("src/node/cli/x.ts", specifier), specifier).toEqual(["no-restricted-imports"]);
    }
    expect(await problems("src/node/cli/check/x.ts", "../../turns/cancelTurn.js")).toEqual(["no-restricted-imports"]);
  });

  it("loads the reference host only in serveCommand.ts (muse serve), with import()", async () => {
    const code = `${HEADER}export const serve = async () => (await import("@muse-code/sdk/host")).runHostCli;\n`;
    const lint = async (filePath: string) => ((await eslint.lintText(code, { filePath }))[0]?.messages ?? []).map((m) => m.ruleId ?? m.message);
    expect(await lint("src/node/cli/serveCommand.ts")).toEqual([]);
    expect(await lint("src/node/cli/x.ts")).toEqual(["no-restricted-syntax"]);
    expect(await problems("src/node/cli/serveCommand.ts", "@muse-code/sdk/host")).toEqual(["no-restricted-imports"]);
  });
});
