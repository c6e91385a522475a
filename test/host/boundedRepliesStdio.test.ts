/**
 * Issue 20 against a real `muse-host serve --stdio` child: a client that writes 40 000 requests
 * and ends stdin while it does not read stdout gets every answer once, in order, when it reads
 * again (the host stopped reading stdin past its bound, none of what it read was dropped), and the
 * end of stdin is acted on only after them: the host exits 0.
 */
import { describe, expect, it } from "vitest";
import { fixture, useHostProcesses } from "./hostProcess.js";

const { start, tempDir } = useHostProcesses("muse-bounded-stdio-");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("replies are bounded over stdio (a real host process)", () => {
  it("40 000 host/info lines then EOF, written while stdout is not read: every answer, in order, then exit 0", async () => {
    const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
    expect((await host.request("host/info", {}, 15_000)).result?.["name"]).toBe("muse-host");
    host.child.stdout.pause();
    const count = 40_000;
    const lines = Array.from({ length: count }, (_, i) => `${JSON.stringify({ jsonrpc: "2.0", id: i + 2, method: "host/info" })}\n`);
    host.child.stdin.end(lines.join(""));
    await sleep(1_500);
    host.child.stdout.resume();
    await host.waitFor((m) => m.id === count + 1, 60_000, "the last answer");
    expect(await host.stop(30_000)).toEqual({ code: 0, signal: null });
    const answers = host.wire.filter((m) => m.method === undefined);
    expect(answers.map((m) => m.id)).toEqual(Array.from({ length: count + 1 }, (_, i) => i + 1));
    expect(answers.every((m) => m.result?.["name"] === "muse-host")).toBe(true);
    expect(host.stderr).not.toMatch(/ENOBUFS|stdout failed/);
    expect(host.stderr).toMatch(/stdin closed/);
  }, 120_000);
});
