/**
 * ESLint (flat config): typescript-eslint's recommended rules plus the house never-rules, which
 * are import boundaries per package and directory:
 * - the browser-safe core (src/ outside node/ and testing/, and packages/protocol/src/) imports no
 *   Node built-in, neither `node:*` nor a bare name such as `fs`, statically or with `import()`;
 * - the SDK (src/) never imports the reference host (`@muse-code/host`, packages/);
 * - @muse-code/protocol (packages/protocol/src/) imports nothing outside itself;
 * - the host (packages/host/src/ outside cli/) imports the client package never, and of the
 *   shared code only `@muse-code/protocol`;
 * - the muse CLI (packages/host/src/cli/) and demo/ use only the SDK's public entry points
 *   (`@muse-code/sdk`, `@muse-code/sdk/*`), and the CLI no path that leaves its folder; only
 *   cli/serveCommand.ts (`muse serve`, which is the host) loads `@muse-code/host`, with import();
 * - demo/ (the Stop-button app, browser code) imports no Node built-in either;
 * - no `export *` in any package's src/: public surfaces name every export;
 * - every source file in src/, packages/NAME/src/ and demo/ opens with a `/** header *\/` saying what it is for.
 * Formatting is Prettier's job (`npm run format:check`), so no stylistic rules here.
 */
import { builtinModules } from "node:module";
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

const CORE = { files: ["src/**/*.ts", "packages/protocol/src/**/*.ts"], ignores: ["src/node/**", "src/testing/**"] };

const builtins = builtinModules.filter((name) => !name.startsWith("_"));
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const builtinRegex = `^(node:.*|${builtins.map(escape).join("|")})$`;

const noHost = {
  regex: "^@muse-code/host(/|$)|(^|/)packages/",
  message: "The SDK never imports the reference host (@muse-code/host) or another package's files.",
};
const noNodeBuiltins = [
  { regex: builtinRegex, message: "The browser-safe core imports no Node built-in; Node-only code lives in src/node/, src/testing/ or @muse-code/host." },
];
const noExportAll = { selector: "ExportAllDeclaration", message: 'Use named exports, not "export *": every export of a public surface is named.' };
const noDynamicBuiltins = {
  // esquery ends a regex at the first "/", so the one in names like "fs/promises" is written \x2F.
  selector: `ImportExpression[source.value=/${builtinRegex.replaceAll("/", "\\x2F")}/]`,
  message: "The browser-safe core imports no Node built-in, not even with import().",
};
const noDynamicHost = {
  selector: "ImportExpression[source.value=/^@muse-code\\x2Fhost(\\x2F|$)/]",
  message: "The muse CLI is a client: only serveCommand.ts (`muse serve`) loads the reference host (@muse-code/host).",
};
const publicEntriesOnly = (where) => ({
  regex: "^\\.\\./|(^|/)src/",
  message: `${where} uses only the package's public entry points: import from "@muse-code/sdk" or "@muse-code/sdk/<subpath>".`,
});

/** Every src/ file opens with a `/** … *\/` header (after a shebang or `///` compiler directives). */
const fileHeader = {
  meta: { type: "suggestion", schema: [], messages: { missing: "A source file opens with a /** header comment */ saying what it is for." } },
  create(context) {
    return {
      Program(node) {
        const opensWithHeader = /^(#![^\n]*\n)?(\s*\/\/\/[^\n]*\n)*\s*\/\*\*/.test(context.sourceCode.text);
        if (!opensWithHeader) context.report({ node, loc: { line: 1, column: 0 }, messageId: "missing" });
      },
    };
  },
};

export default defineConfig(
  {
    ignores: [
      "dist/",
      "coverage/",
      "docs/api/",
      ".tmp/",
      "etc/",
      "transcripts/",
      "node_modules/",
      "bench/scratch/",
      "packages/*/dist/",
      "packages/*/etc/",
      "docs/design/bridges-research/",
      // codex app-server generate-ts output, committed unedited (scripts/codex-types.ts).
      "packages/host/src/bridge/codex/generated/",
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  tseslint.configs.recommended,
  // Plain JavaScript files (configs, fixtures, bench children) run on Node; TypeScript files get their globals from tsconfig.
  { files: ["**/*.{js,mjs,cjs}"], languageOptions: { globals: globals.node } },
  {
    plugins: { house: { rules: { "file-header": fileHeader } } },
    rules: {
      // `_name` marks a parameter or binding that is deliberately unused (a callback's position, a destructured leftover).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  // The SDK (src/): no reference host; no `export *`.
  {
    files: ["src/**/*.ts"],
    rules: {
      "house/file-header": "error",
      "no-restricted-imports": ["error", { patterns: [noHost] }],
      "no-restricted-syntax": ["error", noExportAll],
    },
  },
  // Every package's sources: a header per file, no `export *`.
  {
    files: ["packages/*/src/**/*.ts"],
    rules: { "house/file-header": "error", "no-restricted-syntax": ["error", noExportAll] },
  },
  // The browser-safe core: additionally no Node built-ins, static or dynamic.
  {
    ...CORE,
    rules: {
      "no-restricted-imports": ["error", { patterns: [noHost, ...noNodeBuiltins] }],
      "no-restricted-syntax": ["error", noExportAll, noDynamicBuiltins],
    },
  },
  // @muse-code/protocol, the words both sides share: nothing outside itself.
  {
    files: ["packages/protocol/src/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: "^\\.\\./|^@muse-code/", message: "@muse-code/protocol imports nothing outside itself: neither the SDK nor the host." },
            ...noNodeBuiltins,
          ],
        },
      ],
    },
  },
  // The reference host: of the shared code only @muse-code/protocol, never the client package.
  {
    files: ["packages/host/src/**/*.ts"],
    ignores: ["packages/host/src/cli/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { regex: "^\\.\\./\\.\\./|(^|/)src/", message: "The host imports nothing outside packages/host/src/ but @muse-code/protocol." },
            { regex: "^@muse-code/sdk(/|$)", message: "The host does not import the client package; the two share only @muse-code/protocol." },
          ],
        },
      ],
    },
  },
  // The muse CLI is a fourth kind of user: the SDK's public entry points only, never the reference
  // host nor the protocol package, and no path that leaves cli/ (a `..` segment anywhere, so not even
  // "./check/../../server/museHost.js").
  {
    files: ["packages/host/src/cli/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)\\.\\.(/|$)|(^|/)src/|^@muse-code/protocol(/|$)",
              message: 'The muse CLI uses only the SDK\'s public entry points: import from "@muse-code/sdk" or "@muse-code/sdk/<subpath>".',
            },
            { regex: "^@muse-code/host(/|$)", message: "The muse CLI is a client: it never imports the reference host (@muse-code/host)." },
          ],
        },
      ],
      "no-restricted-syntax": ["error", noExportAll, noDynamicHost],
    },
  },
  // `muse serve` is the host: it loads @muse-code/host on demand (import(), never a static import).
  { files: ["packages/host/src/cli/serveCommand.ts"], rules: { "no-restricted-syntax": ["error", noExportAll] } },
  // The Stop-button app is browser code on the public entry points: no Node built-ins, and a header per file.
  {
    files: ["demo/**/*.{ts,tsx,js,mjs}"],
    rules: {
      "house/file-header": "error",
      "no-restricted-imports": ["error", { patterns: [publicEntriesOnly("demo/"), ...noNodeBuiltins] }],
      "no-restricted-syntax": ["error", noDynamicBuiltins],
    },
  },
);
