/** In-process tests of the data-dir lock and the host options that bound it. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirInUseError, lockDataDir } from "../../packages/host/src/log/dataDirLock.js";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { fixture } from "./hostProcess.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "muse-lock-unit-"));
  dirs.push(d);
  return d;
}
const models = new Map([["default", loadScriptedModel(fixture("hello.json"), "default")]]);

describe("the data-dir lock (in process)", () => {
  it("a second host on a held dir throws DataDirInUseError naming the holder; after shutdown the dir is free again", async () => {
    const dataDir = tempDir();
    const first = createHost({ models, defaultModel: "default", dataDir });
    const owner = JSON.parse(readFileSync(join(dataDir, "host.lock", "owner.json"), "utf8")) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    let refused: unknown;
    try {
      createHost({ models, defaultModel: "default", dataDir });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect(refused).toMatchObject({ code: "DATA_DIR_IN_USE", dataDir, owner: { pid: process.pid } });
    await first.shutdown();
    expect(existsSync(join(dataDir, "host.lock"))).toBe(false);
    const second = createHost({ models, defaultModel: "default", dataDir });
    await second.shutdown();
  });

  it("assertHeld throws once the lock is released", () => {
    const lock = lockDataDir(tempDir());
    lock.assertHeld();
    lock.release();
    lock.release(); // idempotent
    expect(() => lock.assertHeld()).toThrow(/was released/);
  });

  it("bad bounds are typed errors, not silent clamps", () => {
    expect(() => createHost({ models, defaultModel: "default", dataDir: tempDir(), lockStaleMs: 100 })).toThrow(RangeError);
    expect(() => createHost({ models, defaultModel: "default", dataDir: tempDir(), maxOpenLogs: 0 })).toThrow(RangeError);
  });
});
