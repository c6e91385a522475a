import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MspError, type MspClient } from "../../src/index.js";
import { spawnHost } from "../../src/node/index.js";
import { processGone } from "../helpers/processGone.js";

async function pidFrom(file: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    try {
      const text = readFileSync(file, "utf8").trim();
      if (text !== "") return Number(text);
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid in ${file}`);
}

describe("spawnHost", () => {
  it("an unknown framing (TypeError) or a bad maxWriteBufferBytes (RangeError) throws before any process is started", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spawnhost-framing-"));
    const marker = join(dir, "started");
    try {
      expect(() => spawnHost({ command: "sh", args: ["-c", `touch ${marker}`], framing: "xml" as never })).toThrow(TypeError);
      expect(() => spawnHost({ command: "sh", args: ["-c", `touch ${marker}`], maxWriteBufferBytes: -1 })).toThrow(RangeError);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("close() ends stdin, then SIGTERMs, then SIGKILLs the whole group: no orphan, grandchildren included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-spawn-"));
    try {
      const pidFile = join(dir, "grandchild.pid");
      // A host that ignores both stdin EOF and SIGTERM, with a grandchild that does too.
      const host = spawnHost({
        command: "sh",
        args: ["-c", `trap '' TERM; sh -c 'trap "" TERM; sleep 30' & echo $! > ${pidFile}; while :; do sleep 1; done`],
        stderr: "ignore",
        killGraceMs: 100,
      });
      const pending = host.command("host/info", {}).catch((e: unknown) => e);
      const grandchild = await pidFrom(pidFile);
      expect(processGone(grandchild)).toBe(false);
      const info = await host.close();
      expect(info.reason).toBe("closed by the client");
      expect(((await pending) as MspError).kind).toBe("connectionClosed");
      const exit = await host.exited;
      expect(exit.signal).toBe("SIGKILL");
      expect(processGone(host.pid)).toBe(true);
      await new Promise((r) => setTimeout(r, 50));
      expect(processGone(grandchild)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a host that exits settles everything pending as connectionClosed with its exit code", async () => {
    const host = spawnHost({ command: "sh", args: ["-c", "read line; exit 7"], stderr: "ignore" });
    const pending = host.command("host/info", {}).catch((e: unknown) => e);
    const waiting = host.turns.terminalOf("t", { timeoutMs: 10_000 }).catch((e: unknown) => e);
    const error = (await pending) as MspError;
    expect(error.kind).toBe("connectionClosed");
    expect(error.data).toMatchObject({ exitCode: 7, signal: null, reason: "the host exited with code 7" });
    expect(((await waiting) as MspError).kind).toBe("connectionClosed");
    await host.close();
  });

  it("close(reason) through an MspClient reference stops the host and keeps the caller's reason", async () => {
    const host = spawnHost({ command: "sh", args: ["-c", "while :; do sleep 1; done"], stderr: "ignore", killGraceMs: 100 });
    const client: MspClient = host;
    const pending = host.command("host/info", {}).catch((e: unknown) => e);
    const info = await client.close("the user left");
    expect(info.reason).toBe("the user left");
    expect(((await pending) as MspError).data).toMatchObject({ reason: "the user left" });
    await host.exited;
    expect(processGone(host.pid)).toBe(true);
  });

  it("a command that cannot start settles as connectionClosed, and close() does not hang", async () => {
    const host = spawnHost({ command: "/nonexistent/muse-host", stderr: "ignore" });
    const error = (await host.command("host/info", {}).catch((e: unknown) => e)) as MspError<"connectionClosed">;
    expect(error.kind).toBe("connectionClosed");
    expect(String(error.data["reason"])).toMatch(/could not start|ENOENT|closed/);
    await host.close();
  });
});
