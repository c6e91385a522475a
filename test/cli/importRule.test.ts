/**
 * The lint rule that keeps the muse CLI a user of the SDK like any other: packages/host/src/cli/
 * imports the SDK's public entry points, its own files, Node built-ins and npm packages; never the
 * sources behind the entry points, never the reference host or @muse-code/protocol, and no path
 * that leaves packages/host/src/cli/.
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

describe("the muse CLI's imports (packages/host/src/cli/)", () => {
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
      expect(await problems("packages/host/src/cli/x.ts", specifier), specifier).toEqual([]);
    }
    expect(await problems("packages/host/src/cli/check/x.ts", "./runCheck.js")).toEqual([]);
  });

  it("may not import the sources behind them, the reference host, or leave packages/host/src/cli/", async () => {
    for (const specifier of [
      "../client.js",
      "../../src/index.js",
      "./check/../../client.js",
      "..",
      "@muse-code/host",
      "@muse-code/protocol",
      "/work/src/index.ts",
    ]) {
      expect(await problems("packages/host/src/cli/x.ts", specifier), specifier).toEqual(["no-restricted-imports"]);
    }
    expect(await problems("packages/host/src/cli/check/x.ts", "../../server/museHost.js")).toEqual(["no-restricted-imports"]);
  });

  it("loads the reference host only in serveCommand.ts (muse serve), with import()", async () => {
    const code = `${HEADER}export const serve = async () => (await import("@muse-code/host")).runHostCli;\n`;
    const lint = async (filePath: string) => ((await eslint.lintText(code, { filePath }))[0]?.messages ?? []).map((m) => m.ruleId ?? m.message);
    expect(await lint("packages/host/src/cli/serveCommand.ts")).toEqual([]);
    expect(await lint("packages/host/src/cli/x.ts")).toEqual(["no-restricted-syntax"]);
    expect(await problems("packages/host/src/cli/serveCommand.ts", "@muse-code/host")).toEqual(["no-restricted-imports"]);
  });
});
