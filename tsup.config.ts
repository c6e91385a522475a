import { defineConfig, type Options } from "tsup";

/** What both builds share. */
const common: Options = {
  sourcemap: true,
  target: "node20",
  treeshake: true,
  // Class names survive bundling: an error prints as MspError, not as esbuild's renamed _MspError.
  keepNames: true,
};

export default defineConfig([
  {
    ...common,
    entry: {
      index: "src/index.ts",
      "framing/index": "src/framing/index.ts",
      "websocket/index": "src/websocket/index.ts",
      "ui/index": "src/ui/index.ts",
      "session/index": "src/session/index.ts",
      "react/index": "src/react/index.ts",
      "testing/index": "src/testing/index.ts",
      "node/index": "src/node/index.ts",
      "host/index": "src/host/index.ts",
      "host/cli": "src/host/cli.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    // Not here: the two builds run side by side, and `npm run build` empties dist/ before them.
    clean: false,
    splitting: true,
    // import.meta.url works in the CJS build too (spawnReferenceHost finds the package's own files with it).
    shims: true,
  },
  // The muse bin: an ES module run by node, no types, no CommonJS twin. It imports the package by its
  // own name, as an app would: at run time that resolves to this package's own public entry points
  // (package.json "exports"), never bundled in.
  {
    ...common,
    entry: { "cli/main": "src/node/cli/main.ts" },
    format: ["esm"],
    dts: false,
    clean: false,
    external: [/^@muse-code\/sdk(\/.*)?$/],
  },
]);
