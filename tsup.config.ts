import { defineConfig } from "tsup";

/** The wire words: a private workspace package, bundled into the SDK (code and declarations), never a dependency. */
const PROTOCOL = /^@muse-code\/protocol(\/.*)?$/;

export default defineConfig({
  entry: {
    index: "src/index.ts",
    "framing/index": "src/framing/index.ts",
    "websocket/index": "src/websocket/index.ts",
    "ui/index": "src/ui/index.ts",
    "session/index": "src/session/index.ts",
    "react/index": "src/react/index.ts",
    "testing/index": "src/testing/index.ts",
    "node/index": "src/node/index.ts",
  },
  format: ["esm", "cjs"],
  // tsconfig.json maps @muse-code/protocol to its sources, so the declarations inline its types too.
  dts: true,
  noExternal: [PROTOCOL],
  sourcemap: true,
  target: "node20",
  treeshake: true,
  // Class names survive bundling: an error prints as MspError, not as esbuild's renamed _MspError.
  keepNames: true,
  // `npm run build` empties dist/ before tsup.
  clean: false,
  splitting: true,
  // import.meta.url works in the CJS build too (spawnReferenceHost finds the host package with it).
  shims: true,
});
