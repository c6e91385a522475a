/**
 * Finding 3 (a client could kill the host by exhausting file descriptors), with real `muse-host`
 * processes: session logs are opened on demand and held in a bounded cache, so thousands of
 * `session/create` calls under a low `ulimit -n` all succeed while another session's turn runs to
 * its end; and when the process really is out of descriptors, one command fails with a JSON-RPC
 * error while the host and the running turn go on.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useHostProcesses } from "../host/hostProcess.js";
import { completedOf, createSession, descriptorsOf, serving, shellModel } from "./hostHelpers.js";

const { start, tempDir } = useHostProcesses("muse-host-fds-");

/** The lowest descriptor number `pid` does not use: with the limit set to it, the next open fails with EMFILE. */
function lowestFree(pid: number): number {
  const used = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
  let n = 0;
  while (used.has(n)) n++;
  return n;
}

describe("finding 3: bounded descriptors", () => {
  it("finding 3: 1 000 session/create calls under ulimit -n 256 cannot exhaust descriptors; a running turn in another session completes", async () => {
    const data = tempDir();
    // Ticks until the test says stop, so it is surely running through every create.
    const model = shellModel(data, "ticks", `while [ ! -e '${data}/stop' ]; do echo tick; sleep 0.1; done`);
    const host = start(["--script", model, "--data", data], { openFilesLimit: 256 });
    const running = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId: running, input: [] })).result?.["turnId"] as string;
    await host.waitFor((m) => m.method === "item/delta");

    const ids = new Set<unknown>();
    for (let i = 0; i < 1_000; i++) ids.add(host.send("session/create", {}));
    await host.waitFor((m) => m.id === 1_000 + 2, 60_000);
    const answers = host.wire.filter((m) => ids.has(m.id) && m.method === undefined);
    expect(answers.filter((m) => m.error !== undefined)).toEqual([]);
    expect(new Set(answers.map((m) => m.result?.["sessionId"])).size).toBe(1_000);
    // Idle logs: at most a quarter of the limit; the rest is Node's own, the pinned log and the tool's pipes.
    expect(descriptorsOf(host.child.pid!)).toBeLessThan(256 / 4 + 48);
    expect(host.notifications("turn/completed", turnId)).toEqual([]); // still running through all of it

    writeFileSync(join(data, "stop"), "");
    const done = await host.waitFor(completedOf(turnId), 15_000);
    expect(done.params).toMatchObject({ terminal: "completed", reason: "completed" });
    expect(host.wire.some((m) => JSON.stringify(m).includes('"disposed"'))).toBe(false);
    // Every session still works: an old one (its log long closed by the cache) takes a model change.
    const oldest = answers[0]?.result?.["sessionId"] as string;
    expect((await host.request("session/setModel", { sessionId: oldest, model: "default" })).result).toMatchObject({ model: "default" });
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  }, 90_000);

  it("finding 3: out of descriptors, the commands that need one fail alone with a JSON-RPC error; a tool that cannot spawn fails its call; the host and a running turn go on", async () => {
    const data = tempDir();
    const model = shellModel(data, "nap", "echo up; sleep 2; echo down");
    const host = start(["--script", model, "--data", data, "--max-open-logs", "1"]);
    await serving(host);
    const pid = host.child.pid!;
    const running = await createSession(host);
    const idle = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId: running, input: [] })).result?.["turnId"] as string;
    await host.waitFor((m) => m.method === "item/delta");
    const limit = (soft: number | string) => execFileSync("prlimit", [`--pid=${pid}`, `--nofile=${soft}:`]);
    const exhausted = { code: -32603, data: { errno: "EMFILE", retryable: true } };

    // No descriptor left: the soft limit is lowered to the lowest free descriptor number.
    limit(lowestFree(pid));
    const refused = await host.request("session/create", {});
    expect(refused.error).toMatchObject(exhausted);
    expect(refused.error?.message).toMatch(/no file descriptor free to open .* \(EMFILE\); nothing was written; retry later/);
    const notStarted = await host.request("turn/start", { sessionId: idle, input: [] });
    expect(notStarted.error).toMatchObject(exhausted);
    expect(readdirSync(join(data, "sessions")).sort()).toEqual([`${running}.jsonl`, `${idle}.jsonl`].sort()); // nothing half-made

    // One descriptor left: the turn is accepted (its log reopened), but its tool cannot spawn.
    limit(lowestFree(pid) + 1);
    const accepted = (await host.request("turn/start", { sessionId: idle, input: [] })).result?.["turnId"] as string;
    expect(accepted).toBeDefined();
    const failedCall = await host.waitFor((m) => m.method === "item/completed" && (m.params?.["item"] as { turnId?: string }).turnId === accepted);
    expect(failedCall.params?.["item"]).toMatchObject({ status: "failed", failureReason: "spawn failed: spawn /bin/sh EMFILE" });
    expect((await host.waitFor(completedOf(accepted))).params).toMatchObject({ terminal: "completed" });

    // The running turn goes on to its own terminal, and the host keeps serving.
    const done = await host.waitFor(completedOf(turnId), 10_000);
    expect(done.params).toMatchObject({ terminal: "completed", reason: "completed" });
    limit(4096);
    await createSession(host);
    expect(host.wire.some((m) => JSON.stringify(m).includes('"disposed"'))).toBe(false);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });
});
