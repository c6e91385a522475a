/**
 * `npm run build` (after tsup): bundles the Stop-button app (demo/) for the browser into
 * packages/host/dist/demo/ (index.html, app.js, styles.css), which `muse serve --ws PORT --ui` serves: the app
 * ships in @muse-code/host, and `npm run build --workspace @muse-code/host` runs this after its tsup.
 *
 * The app imports `@muse-code/sdk`, `@muse-code/sdk/session` and `@muse-code/sdk/websocket` by name; they resolve through
 * package.json "exports" to the BUILT entries in dist/, exactly what an app gets from npm. (The
 * browser tests build it from the sources instead, `sdk: "src"`, so `npm test` needs no build.)
 * The bundle must be browser-only: a `node:` import, or any Node built-in, fails the build.
 *
 *   npx tsx scripts/build-demo.ts [--out DIR] [--no-minify] [--sdk dist|src]
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build, type Plugin } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The app's static files, copied as they are beside the bundle. */
const STATIC_FILES = ["index.html", "styles.css"] as const;

/** Options of {@link buildDemo}. */
export interface BuildDemoOptions {
  /** Where to write. @defaultValue `<root>/packages/host/dist/demo` */
  outDir?: string;
  /** Minify app.js. @defaultValue true */
  minify?: boolean;
  /**
   * Where the SDK comes from: `dist`, the built package through package.json "exports" (what
   * ships), or `src`, its sources through demo/tsconfig.json's paths (tests, before a build).
   * @defaultValue "dist"
   */
  sdk?: "dist" | "src";
}

/** What {@link buildDemo} wrote. */
export interface BuiltDemo {
  outDir: string;
  /** Each file written, with its size. @unit bytes */
  files: { name: string; bytes: number }[];
}

/**
 * Bundle demo/ into `outDir` (emptied first). Throws when dist/ is not built, or when anything in
 * the bundle is not browser code.
 *
 * @example
 * ```ts
 * const { files } = await buildDemo({ outDir: ".tmp/demo" });
 * ```
 */
export async function buildDemo(options: BuildDemoOptions = {}): Promise<BuiltDemo> {
  const outDir = resolve(options.outDir ?? join(ROOT, "packages", "host", "dist", "demo"));
  const sdk = options.sdk ?? "dist";
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    tsconfig: join(ROOT, "demo", "tsconfig.json"),
    entryPoints: [join(ROOT, "demo", "main.ts")],
    outfile: join(outDir, "app.js"),
    bundle: true,
    platform: "browser",
    format: "esm",
    target: ["es2022", "chrome111", "firefox111", "safari16.4"],
    minify: options.minify ?? true,
    // Class names survive minifying: an error still prints as MspError.
    keepNames: true,
    legalComments: "none",
    sourcemap: false,
    metafile: true,
    logLevel: "silent",
    plugins: sdk === "dist" ? [packageEntries(), noNodeBuiltins()] : [noNodeBuiltins()],
  });
  const sdkFiles = sdk === "dist" ? /^dist\// : /^(src\/(?!node\/|testing\/)|packages\/protocol\/src\/)/;
  const stray = Object.keys(result.metafile.inputs).filter((input) => !input.startsWith("demo/") && !sdkFiles.test(input) && !input.includes("node_modules/"));
  if (stray.length > 0)
    throw new Error(`build-demo: the app bundled files that are neither demo/, the SDK's browser code (${sdk}) nor its dependencies: ${stray.join(", ")}`);
  for (const name of STATIC_FILES) copyFileSync(join(ROOT, "demo", name), join(outDir, name));
  const files = ["app.js", ...STATIC_FILES].map((name) => ({ name, bytes: statSync(join(outDir, name)).size }));
  return { outDir, files };
}

/** `@muse-code/sdk` and `@muse-code/sdk/<subpath>` resolve through package.json "exports" (import condition) to dist/. */
function packageEntries(): Plugin {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
  return {
    name: "package-entries",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^@muse-code\/sdk(\/[a-z]+)?$/ }, ({ path }) => {
        const subpath = `.${path.slice(manifest.name.length)}`;
        const target = (manifest.exports[subpath] as { import?: { default?: string } } | undefined)?.import?.default;
        if (target === undefined) return { errors: [{ text: `${path} is not an entry point of ${manifest.name} (package.json "exports" has no ${subpath})` }] };
        const file = join(ROOT, target);
        if (!existsSync(file)) return { errors: [{ text: `${path} resolves to ${target}, which is not built: run tsup first (npm run build)` }] };
        return { path: file };
      });
    },
  };
}

/** Any Node built-in (`node:fs`, `fs`, …) fails the build: the app is browser code. */
function noNodeBuiltins(): Plugin {
  const names = builtinModules.filter((name) => !name.startsWith("_")).map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
  return {
    name: "no-node-builtins",
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: new RegExp(`^(node:.*|(${names.join("|")})(/.*)?)$`) }, ({ path, importer }) => ({
        errors: [{ text: `${relative(ROOT, importer)} imports the Node built-in "${path}": the Stop-button app is browser code` }],
      }));
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { out: { type: "string" }, "no-minify": { type: "boolean", default: false }, sdk: { type: "string", default: "dist" } },
  });
  if (values.sdk !== "dist" && values.sdk !== "src") throw new Error(`build-demo: --sdk is dist or src, got ${values.sdk}`);
  const built = await buildDemo({ ...(values.out === undefined ? {} : { outDir: values.out }), minify: !values["no-minify"], sdk: values.sdk });
  const sizes = built.files.map(({ name, bytes }) => `${name} ${(bytes / 1024).toFixed(1)} KiB`).join(", ");
  console.log(`build-demo: ${relative(process.cwd(), built.outDir) || "."}: ${sizes}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
