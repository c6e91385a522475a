/**
 * Issue 20: a FIFO (or a device) in the `--ui` directory must not freeze `muse-host`. Against a
 * real `muse-host serve --ws --ui-dir DIR` child over real sockets: more concurrent GETs of a
 * FIFO (directly and through a symlink inside DIR) than the libuv thread pool has threads (4)
 * all get a quick 404, a client then still runs a turn to `completed`, and SIGTERM still stops
 * the host with exit 0. Before the fix each GET opened the FIFO on a thread-pool thread, which
 * blocked there waiting for a writer: the GETs never answered, the turn never completed and the
 * host never exited.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { fixture } from "./hostProcess.js";
import { rawRequest, startWebSocketHost, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

const hosts: WebSocketHostProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  // stop() sends SIGKILL after 5 s, so a frozen host (the bug) cannot outlive its test.
  for (const host of hosts.splice(0)) await host.stop();
});
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A `--ui` directory with `index.html`, a FIFO, links to it and, where possible, devices. */
function uiDirWithSpecialFiles(): { dir: string; paths: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "muse-ui-fifo-"));
  dirs.push(dir);
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Stop</title>\n");
  writeFileSync(join(dir, "app.js"), "console.log('app');\n");
  symlinkSync("app.js", join(dir, "app-link.js"));
  execFileSync("mkfifo", [join(dir, "pipe.js")]);
  symlinkSync("pipe.js", join(dir, "pipe-relative-link.js"));
  symlinkSync(join(dir, "pipe.js"), join(dir, "pipe-absolute-link.js"));
  symlinkSync("/dev/zero", join(dir, "zero-link.js"));
  const paths = ["/pipe.js", "/pipe-relative-link.js", "/pipe-absolute-link.js", "/zero-link.js"];
  try {
    // A character device inside the directory itself (like /dev/zero: 1, 5); needs root.
    execFileSync("mknod", [join(dir, "zero.js"), "c", "1", "5"], { stdio: "ignore" });
    paths.push("/zero.js");
  } catch {
    // Not root (or no mknod): the FIFO and the links still cover the bug.
  }
  return { dir, paths };
}

describe("--ui serves regular files only (issue 20)", () => {
  it("GETs of a FIFO, links to it and devices get a quick 404; turns and SIGTERM still work", async () => {
    const { dir, paths } = uiDirWithSpecialFiles();
    const host = await startWebSocketHost(["--script", fixture("hello.json"), "--ui-dir", dir]);
    hosts.push(host);
    const get = (path: string, method = "GET") =>
      rawRequest(host.port, `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nConnection: close\r\n\r\n`, 3_000);

    // Twice as many GETs as the thread pool has threads, each kind several times, all at once.
    const requests = Array.from({ length: 12 }, (_, i) => paths[i % paths.length] ?? "/pipe.js");
    const started = Date.now();
    const answers = await Promise.all(requests.map((path) => get(path, "GET")));
    for (const [i, answer] of answers.entries()) expect(answer.status, requests[i]).toBe(404);
    for (const path of paths) expect((await get(path, "HEAD")).status, `HEAD ${path}`).toBe(404);
    expect(Date.now() - started).toBeLessThan(3_000);

    // Regular files (and a link to one inside the directory) are still served.
    expect((await get("/")).body).toContain("<title>Stop</title>");
    expect((await get("/app-link.js")).body).toBe("console.log('app');\n");

    // The host still runs turns (its session log's writes and fsyncs need the thread pool).
    const client = await wsClient(host.url, { token: host.token });
    const { sessionId } = await client.command("session/create", {});
    const terminal = await client.startTurn({ sessionId, input: [{ type: "text", text: "go" }] }).waitForTerminal({ timeoutMs: 8_000 });
    expect(terminal).toMatchObject({ terminal: "completed" });
    await client.close();

    // And SIGTERM stops it, promptly and cleanly.
    host.child.kill("SIGTERM");
    const exit = await Promise.race([host.exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 4_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
  }, 40_000);
});
