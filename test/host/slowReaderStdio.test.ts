/**
 * Issue 19 part 3 over stdio, against a real `muse-host serve --stdio` child: a client whose
 * stdout reader stops for a while still gets every line (the host honours the pipe's backpressure
 * and feeds what it held back from the session log: no ENOBUFS, nothing lost), and a stdin EOF
 * while the client is behind still delivers the rest, terminals included, before the host exits.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseViewCursor } from "../../packages/protocol/src/cursor.js";
import { useHostProcesses, type HostProcess } from "./hostProcess.js";

const { start, tempDir } = useHostProcesses("muse-slow-stdio-");
const input = [{ type: "text", text: "go" }];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model file: one message of `repeat` × 16 characters in chunks of `chunkSize`, `chunkDelayMs` apart. */
function model(dir: string, repeat: number, chunkSize: number, chunkDelayMs: number): string {
  const path = join(dir, "stream.json");
  writeFileSync(path, JSON.stringify({ turns: [{ steps: [{ text: "many slow words ".repeat(repeat), chunkSize, chunkDelayMs }] }] }));
  return path;
}

/** The cursors of the session's notifications, in the order the client read them: each once, 1 to the last. */
function expectEveryCursor(host: HostProcess, sessionId: string): number {
  const cursors = host.wire.filter((m) => m.method !== undefined && m.id === undefined && m.params?.["sessionId"] === sessionId);
  const ns = cursors.map((m) => parseViewCursor(String(m.params?.["viewCursor"]), sessionId));
  expect(ns).toEqual(Array.from({ length: ns.length }, (_, i) => i + 1));
  return ns.length;
}

describe("slow readers over stdio", () => {
  it("a client whose stdout reader pauses for a while still gets every notification once, in order: no ENOBUFS, no lost line", async () => {
    const dir = tempDir();
    // 8 MB in 500 appends of 16 000 characters, and its 8 MB item/completed: far past the pipe and the 4 MiB bound.
    const host = start(["--script", model(dir, 500_000, 16_000, 0), "--data", dir]);
    const sessionId = String((await host.request("session/create", {}, 15_000)).result?.["sessionId"]);
    host.send("turn/start", { sessionId, input });
    await host.waitFor((m) => m.method === "item/delta", 15_000, "the first item/delta");
    host.child.stdout.pause();
    await sleep(2_000);
    host.child.stdout.resume();
    const terminal = await host.waitFor((m) => m.method === "turn/completed", 60_000, "turn/completed");
    expect(terminal.params?.["terminal"]).toBe("completed");
    expect(expectEveryCursor(host, sessionId)).toBeGreaterThan(400);
    const appended = host.notifications("item/delta").map((p) => String(p["append"]));
    const completed = host.notifications("item/completed").map((p) => (p["item"] as { text: string }).text);
    expect(completed).toEqual(["many slow words ".repeat(500_000)]);
    expect(appended.join("")).toBe(completed[0]);
    expect(await host.stop(30_000)).toEqual({ code: 0, signal: null });
    expect(host.stderr).not.toMatch(/ENOBUFS|stdout failed/);
    expect(host.stderr).toMatch(/stdin closed: cancelling running turns/);
  }, 120_000);

  it("stdin ends while the client is behind: the host still sends the rest, its cancelled terminal last, then exits 0", async () => {
    const dir = tempDir();
    // 4 000 chunks of 30 characters, a chunk every 2 ms: still streaming when stdin ends.
    const host = start(["--script", model(dir, 7_500, 30, 2), "--data", dir]);
    const sessionId = String((await host.request("session/create", {}, 15_000)).result?.["sessionId"]);
    host.send("turn/start", { sessionId, input });
    await host.waitFor((m) => m.method === "item/delta", 15_000, "the first item/delta");
    host.child.stdout.pause();
    await sleep(1_500);
    host.child.stdin.end();
    await sleep(1_000);
    host.child.stdout.resume();
    expect(await host.stop(60_000)).toEqual({ code: 0, signal: null });
    const count = expectEveryCursor(host, sessionId);
    const last = host.wire.filter((m) => m.method !== undefined).at(-1);
    expect(last?.method).toBe("turn/completed");
    expect(last?.params?.["terminal"]).toBe("cancelled");
    expect(count).toBeGreaterThan(100);
    expect(host.stderr).not.toMatch(/ENOBUFS|stdout failed/);
  }, 120_000);
});
