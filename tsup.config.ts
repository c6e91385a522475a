import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "framing/index": "src/framing/index.ts",
    "transports/index": "src/transports/index.ts",
    "testing/index": "src/testing/index.ts",
    "node/index": "src/node/index.ts",
    "host/index": "src/host/index.ts",
    "host/cli": "src/host/cli.ts",
    "cli/main": "src/node/cli/main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  splitting: true,
  treeshake: true,
  // Class names survive bundling: an error prints as MspError, not as esbuild's renamed _MspError.
  keepNames: true,
  // import.meta.url works in the CJS build too (spawnReferenceHost finds the package's own files with it).
  shims: true,
  // The muse CLI (src/node/cli/) imports the package by its own name, as an app would: at run time it
  // resolves to this package's own public entry points (package.json "exports"), never bundled in.
  external: [/^@muse-code\/sdk(\/.*)?$/],
});
