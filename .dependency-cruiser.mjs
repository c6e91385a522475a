/**
 * dependency-cruiser config for `npm run graph:check`: the import graph of the SDK (src/) and of
 * each workspace package (packages/protocol/src/, packages/host/src/), resolved as TypeScript
 * resolves it (tsconfig.json paths, so `@muse-code/sdk/…`, `@muse-code/protocol/…` and
 * `@muse-code/host` reach their source files), type-only imports included. It fails on any import
 * circle and on the ARCHITECTURE.md "never" arrows between the packages and inside the SDK. ESLint
 * (eslint.config.js) holds the same arrows by import specifier; this gate sees where each import
 * lands, and the whole graph for circles.
 */

/** Every source file this gate reads: the SDK's and each package's. */
const SOURCES = "^(src|packages/[^/]+/src)/";

/** The browser-safe core: the SDK outside node/ and testing/, and the protocol package. */
const CORE = { path: ["^src/", "^packages/protocol/src/"], pathNot: "^src/(node|testing)/" };

/** The SDK's public entry points' source files: all that the muse CLI may import outside itself. */
const PUBLIC_ENTRIES = "^src/(index|framing/index|websocket/index|ui/index|session/index|react/index|node/index|testing/index)\\.ts$";

/** The muse CLI, which lives in the host's package but is a client of the SDK. */
const CLI = "^packages/host/src/cli/";

/** `muse serve`: the one file of the muse CLI that runs the reference host, through its public entry point. */
const SERVE_COMMAND = "^packages/host/src/cli/serveCommand\\.ts$";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle, anywhere in any package (type-only imports count): a lower floor never imports a higher one.",
      from: { path: SOURCES },
      to: { circular: true },
    },
    {
      name: "core-no-node-builtins",
      severity: "error",
      comment: "The browser-safe core (and @muse-code/protocol) imports no Node built-in (node:* or a bare name such as fs), static or import().",
      from: CORE,
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "core-no-node-only-code",
      severity: "error",
      comment: "The browser-safe core imports nothing from src/node/, src/testing/ or the host.",
      from: CORE,
      to: { path: ["^src/(node|testing)/", "^packages/host/"] },
    },
    {
      name: "sdk-no-host",
      severity: "error",
      comment: "The SDK (src/) never imports the reference host (@muse-code/host); spawnReferenceHost only resolves its bin's path.",
      from: { path: "^src/" },
      to: { path: "^packages/host/" },
    },
    {
      name: "protocol-imports-neither",
      severity: "error",
      comment: "@muse-code/protocol imports neither the SDK nor the host: both depend on it, it on nothing of ours.",
      from: { path: "^packages/protocol/src/" },
      to: { path: SOURCES, pathNot: "^packages/protocol/src/" },
    },
    {
      name: "host-no-client",
      severity: "error",
      comment: "The host (packages/host/src/ outside cli/) never imports the client: of our code only itself and @muse-code/protocol; and never the muse CLI.",
      from: { path: "^packages/host/src/", pathNot: CLI },
      to: { path: SOURCES, pathNot: ["^packages/host/src/", "^packages/protocol/src/"] },
    },
    {
      name: "host-not-cli",
      severity: "error",
      comment: "The host (packages/host/src/ outside cli/) never imports the muse CLI, which sits above it.",
      from: { path: "^packages/host/src/", pathNot: CLI },
      to: { path: CLI },
    },
    {
      name: "cli-public-entries-only",
      severity: "error",
      comment: "The muse CLI (packages/host/src/cli/) uses only the SDK's public entry points, never the host's insides or @muse-code/protocol.",
      from: { path: CLI, pathNot: SERVE_COMMAND },
      to: { path: SOURCES, pathNot: [PUBLIC_ENTRIES, CLI] },
    },
    {
      name: "cli-serve-host-entry-only",
      severity: "error",
      comment:
        "`muse serve` (packages/host/src/cli/serveCommand.ts) runs the reference host through its public entry point, @muse-code/host, and otherwise uses what the rest of the CLI may.",
      from: { path: SERVE_COMMAND },
      to: { path: SOURCES, pathNot: [PUBLIC_ENTRIES, "^packages/host/src/index\\.ts$", CLI] },
    },
    {
      name: "endpoint-knows-only-json-rpc",
      severity: "error",
      comment:
        "rpc/ (the JSON-RPC endpoint) knows nothing of MSP's state or the client: it imports only @muse-code/protocol, framing/, internal/, types/ and errors.ts.",
      from: { path: "^src/rpc/" },
      to: { path: SOURCES, pathNot: "^(src/(rpc/|framing/|internal/|types/|errors\\.ts$)|packages/protocol/src/)" },
    },
    {
      name: "turns-not-above",
      severity: "error",
      comment: "turns/ (the state each client owns, and its dispatcher) knows nothing of the client: it never imports client/, ui/ or the public index.",
      from: { path: "^src/turns/" },
      to: { path: "^src/(client/|ui/|index\\.ts$)" },
    },
    {
      name: "client-not-above",
      severity: "error",
      comment: "client/ (MspClient, TurnHandle, cancelTurn) never imports ui/ (StopController sits above it) or the public index.",
      from: { path: "^src/client/" },
      to: { path: "^src/(ui/|index\\.ts$)" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "An import this config cannot resolve is an edge the gate cannot see: fix the path or the resolution options.",
      from: { path: SOURCES },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    exclude: { path: "\\.d\\.ts$" },
    doNotFollow: { path: "node_modules" },
    // Type-only imports are edges too: a circle through `import type` is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types"],
    },
  },
};
