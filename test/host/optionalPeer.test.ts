/**
 * Optional peers: a package that is not installed fails with one line naming the package, what
 * needed it, and the command that installs it; an installed one loads (async and sync). And
 * `muse-host` with `ws` hidden (a module hook that says it is not installed): `serve --stdio`
 * never loads it and runs; `serve --ws` says how to install it and exits 2.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { importOptionalPeer, MissingPeerError, requireOptionalPeer } from "../../packages/host/src/server/optionalPeer.js";
import { repoRoot } from "../helpers/repoRoot.js";

const MISSING = "muse-no-such-package-7f3a";

describe("optional peers", () => {
  it("importOptionalPeer: a missing package rejects with a MissingPeerError that says how to install it", async () => {
    const error = await importOptionalPeer(MISSING, "muse-host serve --ws").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MissingPeerError);
    expect((error as MissingPeerError).message).toBe(`muse-host serve --ws needs the optional package "${MISSING}": npm install ${MISSING}`);
    expect(error).toMatchObject({ code: "MISSING_PEER_DEPENDENCY", packageName: MISSING });
  });

  it("requireOptionalPeer: a missing package throws the same error, synchronously", () => {
    expect(() => requireOptionalPeer(MISSING, "the data-dir lock")).toThrow(new MissingPeerError(MISSING, "the data-dir lock", undefined));
  });

  it("an installed package loads, both ways", async () => {
    const ws = await importOptionalPeer<typeof import("ws")>("ws", "muse-host serve --ws");
    expect(typeof ws.WebSocketServer).toBe("function");
    const lockfile = requireOptionalPeer<typeof import("proper-lockfile")>("proper-lockfile", "the data-dir lock");
    expect(typeof lockfile.lockSync).toBe("function");
  });

  it("muse-host without ws installed: serve --stdio never loads it; serve --ws exits 2 saying how to install it", () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-optional-peer-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // A resolve hook that answers for "ws" what Node answers for a package that is not installed.
    const hooks = join(dir, "hooks.mjs");
    writeFileSync(
      hooks,
      `export async function resolve(specifier, context, next) {
  if (specifier !== "ws") return next(specifier, context);
  throw Object.assign(new Error("Cannot find package 'ws' imported from " + context.parentURL), { code: "ERR_MODULE_NOT_FOUND" });
}
`,
    );
    const register = join(dir, "register.mjs");
    writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ["--import", pathToFileURL(register).href, "--import", "tsx", join(repoRoot, "packages/host/src/serve/main.ts"), "serve", ...args], {
        cwd: repoRoot,
        input: "",
        encoding: "utf8",
        timeout: 30_000,
      });
    const stdio = run("--stdio", "--script", "packages/host/models/hello.json");
    expect(stdio.stderr).not.toMatch(/optional package/);
    expect(stdio.status).toBe(0);
    const ws = run("--ws", "127.0.0.1:0", "--script", "packages/host/models/hello.json");
    expect(ws.stderr).toContain('muse-host: muse-host serve --ws needs the optional package "ws": npm install ws\n');
    expect(ws.status).toBe(2);
  });
});
