import { defineConfig, type Options } from "tsup";

/** The wire words: a private workspace package, bundled into this one (code and declarations), never a dependency. */
const PROTOCOL = /^@muse-code\/protocol(\/.*)?$/;

/** What both builds share. */
const common: Options = {
  sourcemap: true,
  target: "node20",
  treeshake: true,
  // Class names survive bundling: an error prints as its class name, not as esbuild's renamed one.
  keepNames: true,
  clean: false,
  noExternal: [PROTOCOL],
};

export default defineConfig([
  // The library entry (createHost, serveWebSocket, …) in both module formats, and the muse-host bin.
  {
    ...common,
    entry: { index: "src/index.ts", "serve/main": "src/serve/main.ts" },
    format: ["esm", "cjs"],
    dts: { entry: { index: "src/index.ts" }, resolve: [PROTOCOL] },
    splitting: true,
    shims: true,
  },
  // The muse bin: an ES module run by node. It imports the SDK by name, as an app would, and
  // `muse serve` loads this package's own entry by name: both resolve at run time, never bundled in.
  {
    ...common,
    entry: { "cli/main": "src/cli/main.ts" },
    format: ["esm"],
    dts: false,
    external: [/^@muse-code\/(sdk|host)(\/.*)?$/],
  },
]);
