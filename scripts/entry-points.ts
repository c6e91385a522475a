/**
 * The public entry points of @muse-code/sdk and @muse-code/host, one row each: the table that
 * api:check (scripts/api-report.ts) and tsdoc:check (scripts/tsdoc-check.ts) both walk. Adding an
 * entry point is one row here.
 */

/**
 * One public entry point: its package (name and folder), its subpath in that package's
 * package.json "exports", its source, its built .d.ts, and its report's name under the package's
 * etc/. Paths are from the repository root.
 */
export interface EntryPoint {
  /** The package's name. @defaultValue "@muse-code/sdk" */
  packageName?: string;
  /** The package's folder, from the repository root. @defaultValue "." */
  packageDir?: string;
  subpath: string;
  src: string;
  dts: string;
  report: string;
}

/** Every public entry point. A script skips, with a message, one whose source is not on this branch yet. */
export const ENTRY_POINTS: readonly EntryPoint[] = [
  { subpath: ".", src: "src/index.ts", dts: "dist/index.d.ts", report: "sdk" },
  { subpath: "./framing", src: "src/framing/index.ts", dts: "dist/framing/index.d.ts", report: "sdk-framing" },
  { subpath: "./websocket", src: "src/websocket/index.ts", dts: "dist/websocket/index.d.ts", report: "sdk-websocket" },
  { subpath: "./ui", src: "src/ui/index.ts", dts: "dist/ui/index.d.ts", report: "sdk-ui" },
  { subpath: "./session", src: "src/session/index.ts", dts: "dist/session/index.d.ts", report: "sdk-session" },
  { subpath: "./react", src: "src/react/index.ts", dts: "dist/react/index.d.ts", report: "sdk-react" },
  { subpath: "./node", src: "src/node/index.ts", dts: "dist/node/index.d.ts", report: "sdk-node" },
  { subpath: "./testing", src: "src/testing/index.ts", dts: "dist/testing/index.d.ts", report: "sdk-testing" },
  {
    packageName: "@muse-code/host",
    packageDir: "packages/host",
    subpath: ".",
    src: "packages/host/src/index.ts",
    dts: "packages/host/dist/index.d.ts",
    report: "host",
  },
];

/** The name users import an entry point by: `@muse-code/sdk`, `@muse-code/sdk/node`, `@muse-code/host`, … */
export function packageSpecifier(entry: Pick<EntryPoint, "subpath" | "packageName">): string {
  return `${entry.packageName ?? "@muse-code/sdk"}${entry.subpath.slice(1)}`;
}

/** The folder of an entry point's package, from the repository root. */
export function packageDirOf(entry: Pick<EntryPoint, "packageDir">): string {
  return entry.packageDir ?? ".";
}
