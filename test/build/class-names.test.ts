/**
 * The build keeps class names: an `MspError` from the package prints as `MspError`, not as the
 * `_MspError` esbuild renames it to. Bundles every tsup entry point of both packages with esbuild
 * under the options their tsup.config.ts pass on (ESM and CJS), loads it, and checks each exported
 * class.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inspect } from "node:util";
import { build, type Plugin } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import hostTsupConfig from "../../packages/host/tsup.config.js";
import tsupConfig from "../../tsup.config.js";
import { repoRoot } from "../helpers/repoRoot.js";

type BuildConfig = { entry: Record<string, string>; target: string; keepNames?: boolean };

/** One package's tsup builds, its folder, and the entry points that are bins (they run when loaded, and export nothing: not bundled here). */
interface PackageBuild {
  dir: string;
  configs: BuildConfig[];
  bins: Set<string>;
}

function packageBuild(dir: string, tsup: unknown): PackageBuild {
  const configs = (Array.isArray(tsup) ? tsup : [tsup]) as BuildConfig[];
  // A bin's entry opens with a shebang.
  const entries = Object.entries(Object.assign({}, ...configs.map((c) => c.entry)) as Record<string, string>);
  const bins = new Set(entries.filter(([, source]) => readFileSync(join(repoRoot, dir, source), "utf8").startsWith("#!")).map(([entry]) => entry));
  return { dir, configs, bins };
}

// The SDK's build (tsup.config.ts) and the host's (packages/host/tsup.config.ts: the library entry, the muse-host and muse bins).
const PACKAGES = [packageBuild(".", tsupConfig), packageBuild("packages/host", hostTsupConfig)];
const configs = PACKAGES.flatMap((p) => p.configs);
const sdk = PACKAGES[0] as PackageBuild;
const config: BuildConfig = { ...sdk.configs[0]!, entry: Object.assign({}, ...sdk.configs.map((c) => c.entry)) as Record<string, string> };
// Inside the repo, so the bundles' external imports (vscode-jsonrpc, ws, …) resolve.
const outDir = mkdtempSync(join(repoRoot, "node_modules", ".class-names-test-"));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** npm packages stay external; the private @muse-code/protocol is bundled in, as tsup does. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@muse-code/protocol") ? undefined : { path: args.path, external: true }));
  },
};

const isClass = (value: unknown): value is abstract new (...args: never[]) => unknown =>
  typeof value === "function" && /^class\b/.test(Function.prototype.toString.call(value));

async function bundle(entry: string, format: "esm" | "cjs", pkg: PackageBuild = sdk): Promise<Record<string, unknown>> {
  const outfile = join(outDir, `${pkg.dir.replaceAll("/", "-")}-${entry.replaceAll("/", "-")}.${format === "esm" ? "mjs" : "cjs"}`);
  const source = pkg.configs.map((c) => c.entry[entry]).find((path) => path !== undefined) as string;
  await build({
    entryPoints: [join(repoRoot, pkg.dir, source)],
    outfile,
    bundle: true,
    format,
    platform: "node",
    target: config.target,
    keepNames: config.keepNames ?? false,
    plugins: [externalPackages],
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
      for (const pkg of PACKAGES) {
        const entries = Object.keys(Object.assign({}, ...pkg.configs.map((c) => c.entry)) as Record<string, string>);
        for (const entry of entries.filter((e) => !pkg.bins.has(e))) {
          for (const [name, value] of Object.entries(await bundle(entry, format, pkg))) {
            if (!isClass(value)) continue;
            classes += 1;
            if (value.name !== name) renamed.push(`${pkg.dir}: ${entry}: ${name} is named ${value.name}`);
          }
        }
      }
      expect(classes).toBeGreaterThan(10);
      expect(renamed).toEqual([]);
    });
  }
});
