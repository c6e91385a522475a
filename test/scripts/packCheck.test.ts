/**
 * pack:check's import rule (scripts/pack-check.ts importProblems): what the shipped code and types
 * import must install with the package, and the browser-safe entry points reach no peer dependency.
 * Its link rule (linkProblems): a shipped markdown file links only to files that ship.
 * Run on small trees written to a temp dir.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { importProblems, installedNames, linkProblems, linkTargets, packageOf, PACKAGES, SDK_INSTALL, type Manifest } from "../../scripts/pack-check.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Writes `files` under a temp dir; returns the dir. */
function write(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "pack-check-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Writes `files` under a temp dir and runs the import rule on them as the shipped set. */
function check(files: Record<string, string>, manifest: Manifest): string[] {
  return importProblems(write(files), new Set(Object.keys(files)), manifest);
}

/** Writes `files` (all of them shipped) and runs the link rule. */
function checkLinks(files: Record<string, string>): string[] {
  return linkProblems(write(files), new Set(Object.keys(files)));
}

const manifest: Manifest = {
  name: "@muse-code/sdk",
  exports: {
    ".": { import: { types: "./dist/index.d.ts", default: "./dist/index.js" }, require: { types: "./dist/index.d.cts", default: "./dist/index.cjs" } },
    "./host": { import: { types: "./dist/host/index.d.ts", default: "./dist/host/index.js" } },
  },
  dependencies: { "vscode-jsonrpc": "^10.0.0" },
  peerDependencies: { ws: "^8.17.1" },
};

describe("pack:check imports", () => {
  it("names the package of a specifier, and nothing for paths and Node built-ins", () => {
    expect(["ws", "ws/wrapper.mjs", "@scope/name/sub", "./chunk.js", "node:fs", "fs/promises", "events"].map(packageOf)).toEqual([
      "ws",
      "ws",
      "@scope/name",
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("passes dependencies everywhere, a peer outside the browser entries, the package's own name, and imports in comments", () => {
    const problems = check(
      {
        "dist/index.js":
          'import { createMessageConnection } from "vscode-jsonrpc";\nimport { x } from "./chunk-A.js";\nexport { x, createMessageConnection };\n',
        "dist/index.cjs": 'const rpc = require("vscode-jsonrpc");\nmodule.exports = rpc;\n',
        "dist/index.d.ts": '/**\n * @example\n * import { WebSocket } from "ws";\n */\nexport declare const x: number;\n',
        "dist/index.d.cts": "export declare const x: number;\n",
        "dist/chunk-A.js": 'import "node:fs";\nexport const x = 1;\n',
        "dist/host/index.js": 'import { WebSocketServer } from "ws";\nimport "./../chunk-A.js";\nexport { WebSocketServer };\n',
        "dist/host/index.d.ts": 'import type { WebSocket } from "ws";\nexport type S = WebSocket;\n',
        "dist/cli/main.js": 'import { connect } from "@muse-code/sdk";\nconst ws = await import("ws");\nexport { connect, ws };\n',
      },
      manifest,
    );
    expect(problems).toEqual([]);
  });

  it("fails on a package that installs with neither dependencies nor peers, in code or in types", () => {
    const problems = check(
      {
        "dist/index.js": 'import { v7 } from "uuid";\nexport { v7 };\n',
        "dist/index.d.ts": "import 'eventemitter3';\nexport declare const x: number;\n",
        "dist/host/index.js": 'const lock = require("proper-lockfile");\nexport { lock };\n',
      },
      manifest,
    );
    expect(problems).toEqual([
      "dist/host/index.js imports proper-lockfile, which is neither a dependency nor a peer dependency: an app that installs the package does not get it",
      "dist/index.d.ts imports eventemitter3, which is neither a dependency nor a peer dependency: an app that installs the package does not get it",
      "dist/index.js imports uuid, which is neither a dependency nor a peer dependency: an app that installs the package does not get it",
    ]);
  });

  it("fails on a peer dependency that a browser-safe entry point reaches through its chunks, code or types", () => {
    const problems = check(
      {
        "dist/index.js": 'export { x } from "./chunk-A.js";\n',
        "dist/chunk-A.js": 'export { x } from "./chunk-B.js";\n',
        "dist/chunk-B.js": 'const ws = await import("ws");\nexport const x = ws;\n',
        "dist/index.d.ts": 'export type { T } from "./types-C.js";\n',
        "dist/types-C.d.ts": 'import type { WebSocket } from "ws";\nexport type T = WebSocket;\n',
      },
      manifest,
    );
    expect(problems).toEqual([
      "dist/chunk-B.js (reached from ., browser-safe) imports ws, a peer dependency a browser app does not install",
      "dist/types-C.d.ts (reached from ., browser-safe) imports ws, a peer dependency a browser app does not install",
    ]);
  });
});

describe("pack:check packages and installs", () => {
  it("checks the SDK and the host, and only the SDK has browser-safe entry points", () => {
    expect(PACKAGES.map((p) => [p.dir, p.browserSubpaths.length > 0])).toEqual([
      [".", true],
      ["packages/host", false],
    ]);
    const sdk = PACKAGES[0];
    expect(sdk?.allowed.some((re) => re.test("models/hello.json"))).toBe(false);
    expect(PACKAGES[1]?.allowed.some((re) => re.test("models/hello.json"))).toBe(true);
  });

  it("fails an import of the bundled @muse-code/protocol: it is neither a dependency nor a peer", () => {
    const problems = check({ "dist/index.js": 'import { uuidv7 } from "@muse-code/protocol";\nexport { uuidv7 };\n' }, manifest);
    expect(problems).toEqual([
      "dist/index.js imports @muse-code/protocol, which is neither a dependency nor a peer dependency: an app that installs the package does not get it",
    ]);
  });

  it("counts what npm ls --all installed: an unmet optional peer is not installed", () => {
    const tree = {
      dependencies: {
        "@muse-code/sdk": { version: "0.1.0", dependencies: { "@muse-code/host": {}, react: {}, "vscode-jsonrpc": { version: "10.0.0" } } },
      },
    };
    expect(installedNames(tree)).toEqual(SDK_INSTALL);
    expect(installedNames({ dependencies: { a: { version: "1", dependencies: { b: { version: "2" }, a: { version: "1" } } } } })).toEqual(["a", "b"]);
  });
});

describe("pack:check links of shipped markdown", () => {
  it("reads inline links, images, reference definitions and HTML src/href, not inline code", () => {
    expect(linkTargets('See [a](a.md), ![b](img/b.png "B"), [c](<c d.md>) and `[e](e.md)`.')).toEqual(["a.md", "img/b.png", "c d.md"]);
    expect(linkTargets("[ref]: ../src/index.ts")).toEqual(["../src/index.ts"]);
    expect(linkTargets('<img src="images/x.png" alt=""> <a href=\'y.md\'>y</a>')).toEqual(["images/x.png", "y.md"]);
  });

  it("passes links to shipped files and folders, anchors and URLs", () => {
    const problems = checkLinks({
      "README.md": "[guide](docs/guide.md#setup) · [docs](docs/) · [home](https://example.com/x.md) · [mail](mailto:a@b.c) · [top](#install)\n",
      "docs/guide.md":
        "[back](../README.md) ![chart](./chart.svg) [api](https://github.com/meta-models/muse-code-sdk/blob/main/src/index.ts)\n[other](other%20guide.md)\n",
      "docs/other guide.md": "[ref]: guide.md\n",
      "docs/chart.svg": "<svg/>",
    });
    expect(problems).toEqual([]);
  });

  it("fails on a link or an image to a file that does not ship, or outside the package, and ignores code blocks", () => {
    const problems = checkLinks({
      "README.md": '[demo](demo/main.ts)\n\n```md\n[in a fence](nowhere.md)\n```\n\n<img src="docs/images/logo.png">\n',
      "docs/guide.md":
        "![running](images/running.png)\n\nAPI: [`x`](../src/index.ts), [up](../../elsewhere.md) and [root](/docs/guide.md)\n[ex]: examples/a.ts\n",
    });
    expect(problems).toEqual([
      "README.md:1: links to demo/main.ts, which is not in the package: ship it, or link to https://github.com/meta-models/muse-code-sdk/blob/main/demo/main.ts",
      "README.md:7: links to docs/images/logo.png, which is not in the package: ship it, or link to https://github.com/meta-models/muse-code-sdk/blob/main/docs/images/logo.png",
      "docs/guide.md:1: links to images/running.png, which is not in the package: ship it, or link to https://github.com/meta-models/muse-code-sdk/blob/main/docs/images/running.png",
      "docs/guide.md:3: links to ../src/index.ts, which is not in the package: ship it, or link to https://github.com/meta-models/muse-code-sdk/blob/main/src/index.ts",
      "docs/guide.md:3: links to ../../elsewhere.md, which is outside the package: link to https://github.com/meta-models/muse-code-sdk/blob/main/<path> instead",
      "docs/guide.md:3: links to /docs/guide.md, which is outside the package: link to https://github.com/meta-models/muse-code-sdk/blob/main/<path> instead",
      "docs/guide.md:4: links to examples/a.ts, which is not in the package: ship it, or link to https://github.com/meta-models/muse-code-sdk/blob/main/docs/examples/a.ts",
    ]);
  });
});
