/**
 * dependency-cruiser config for `npm run graph:check`: the import graph of src/, resolved as
 * TypeScript resolves it (tsconfig.json paths, so `@muse-code/sdk/…` reaches its src/ entry file),
 * type-only imports included. It fails on any import circle and on the ARCHITECTURE.md "never"
 * arrows that read off resolved paths. ESLint (eslint.config.js) holds the same arrows by import
 * specifier; this gate sees where each import lands, and the whole graph for circles.
 */

/** The browser-safe core: src/ outside node/, host/ and testing/. */
const CORE = { path: "^src/", pathNot: "^src/(node|host|testing)/" };

/** The public entry points' source files: all that src/node/cli/ may import outside itself. */
const PUBLIC_ENTRIES = "^src/(index|framing/index|websocket/index|ui/index|session/index|react/index|node/index|testing/index)\\.ts$";

/** `muse serve`: the one file of the muse CLI that runs the reference host, through its public entry point. */
const SERVE_COMMAND = "^src/node/cli/serveCommand\\.ts$";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle, anywhere in src/ (type-only imports count): a lower floor never imports a higher one.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "core-no-node-builtins",
      severity: "error",
      comment: "The browser-safe core imports no Node built-in (node:* or a bare name such as fs), static or import().",
      from: CORE,
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "core-no-node-only-code",
      severity: "error",
      comment: "The browser-safe core imports nothing from src/node/, src/host/ or src/testing/.",
      from: CORE,
      to: { path: "^src/(node|host|testing)/" },
    },
    {
      name: "client-no-host",
      severity: "error",
      comment: "Client code (src/ outside host/) never imports the reference host; `muse serve` (cli-serve-host-entry-only) is the host.",
      from: { path: "^src/", pathNot: ["^src/host/", SERVE_COMMAND] },
      to: { path: "^src/host/" },
    },
    {
      name: "host-shares-only-protocol",
      severity: "error",
      comment: "src/host/ shares only protocol/ and internal/boundedMap.ts with the client.",
      from: { path: "^src/host/" },
      to: { path: "^src/", pathNot: "^src/(host/|protocol/|internal/boundedMap\\.ts$)" },
    },
    {
      name: "cli-public-entries-only",
      severity: "error",
      comment: "src/node/cli/ (the muse CLI) uses only the package's public entry points, never the reference host's.",
      from: { path: "^src/node/cli/", pathNot: SERVE_COMMAND },
      to: { path: "^src/", pathNot: [PUBLIC_ENTRIES, "^src/node/cli/"] },
    },
    {
      name: "cli-serve-host-entry-only",
      severity: "error",
      comment:
        "`muse serve` (src/node/cli/serveCommand.ts) runs the reference host through its public entry point, @muse-code/sdk/host, and otherwise uses what the rest of the CLI may.",
      from: { path: SERVE_COMMAND },
      to: { path: "^src/", pathNot: [PUBLIC_ENTRIES, "^src/host/index\\.ts$", "^src/node/cli/"] },
    },
    {
      name: "endpoint-knows-only-json-rpc",
      severity: "error",
      comment: "rpc/ (the JSON-RPC endpoint) knows nothing of MSP's state or the client: it imports only protocol/, framing/, internal/, types/ and errors.ts.",
      from: { path: "^src/rpc/" },
      to: { path: "^src/", pathNot: "^src/(rpc/|protocol/|framing/|internal/|types/|errors\\.ts$)" },
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
      from: { path: "^src/" },
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
