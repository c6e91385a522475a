/**
 * The build keeps class names: an `MspError` from the package prints as `MspError`, not as the
 * `_MspError` esbuild renames it to. Bundles every tsup entry point with esbuild under the
 * options tsup.config.ts passes on (ESM and CJS), loads it, and checks each exported class.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inspect } from "node:util";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import tsupConfig from "../../tsup.config.js";
import { repoRoot } from "../helpers/repoRoot.js";

type BuildConfig = { entry: Record<string, string>; target: string; keepNames?: boolean };
// tsup.config.ts holds two builds: the library's entry points (with the muse-host bin) and the muse bin.
const configs = (Array.isArray(tsupConfig) ? tsupConfig : [tsupConfig]) as BuildConfig[];
const config: BuildConfig = { ...configs[0]!, entry: Object.assign({}, ...configs.map((c) => c.entry)) as Record<string, string> };
// Inside the repo, so the bundles' external imports (eventemitter3, vscode-jsonrpc, uuid) resolve.
const outDir = mkdtempSync(join(repoRoot, "node_modules", ".class-names-test-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

// The bins (muse-host, muse) run when loaded, and export nothing: not bundled here.
const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { bin: Record<string, string> };
const BIN_ENTRIES = new Set(Object.values(manifest.bin).map((path) => path.replace(/^\.\/dist\//, "").replace(/\.js$/, "")));

const isClass = (value: unknown): value is abstract new (...args: never[]) => unknown =>
  typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value));

async function bundle(entry: string, format: "esm" | "cjs"): Promise<Record<string, unknown>> {
  const outfile = join(outDir, `${entry.replaceAll("/", "-")}.${format === "esm" ? "mjs" : "cjs"}`);
  await build({
    entryPoints: [join(repoRoot, config.entry[entry] as string)],
    outfile,
    bundle: true,
    format,
    platform: "node",
    target: config.target,
    keepNames: config.keepNames ?? false,
    packages: "external",
    logLevel: "silent",
  });
  return format === "esm"
    ? ((await import(pathToFileURL(outfile).href)) as Record<string, unknown>)
    : (createRequire(outfile)(outfile) as Record<string, unknown>);
}

describe("the build keeps class names", () => {
  it("tsup.config.ts asks esbuild to keep names, in each of its builds", () => {
    expect(configs.length).toBeGreaterThan(0);
    for (const c of configs) expect(c.keepNames).toBe(true);
  });

  for (const format of ["esm", "cjs"] as const) {
    it(`${format}: MspError reads MspError everywhere a person sees it`, async () => {
      const { MspError } = (await bundle("index", format)) as { MspError: new (kind: string, message: string) => Error };
      const error = new MspError("timeout", "waiting for the ack timed out after 5 ms");
      expect(error.name).toBe("MspError");
      expect(error.constructor.name).toBe("MspError");
      expect(String(error)).toBe("MspError: waiting for the ack timed out after 5 ms");
      expect(inspect(error).split("\n")[0]).toBe("MspError: waiting for the ack timed out after 5 ms");
    });

    it(`${format}: every exported class of every entry point keeps its export name`, async () => {
      const renamed: string[] = [];
      let classes = 0;
      for (const entry of Object.keys(config.entry).filter((e) => !BIN_ENTRIES.has(e))) {
        for (const [name, value] of Object.entries(await bundle(entry, format))) {
          if (!isClass(value)) continue;
          classes += 1;
          if (value.name !== name) renamed.push(`${entry}: ${name} is named ${value.name}`);
        }
      }
      expect(classes).toBeGreaterThan(10);
      expect(renamed).toEqual([]);
    });
  }
});
