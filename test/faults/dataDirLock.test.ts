/**
 * Finding 1 (one owner per data dir), with real `muse-host` processes: a second host on a live
 * host's --data exits 3 with one line naming the holder and touches nothing; a lock left by a
 * SIGKILLed host is taken over at once; a stalled (SIGSTOPped) holder keeps its lock however
 * stale it looks; a holder on another machine is refused until its lock goes stale; and a host
 * that lost its lock writes nothing more.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fixture, useHostProcesses } from "../host/hostProcess.js";
import { completedOf, createSession, exitOf, serving, shellModel } from "./hostHelpers.js";

const { start, tempDir } = useHostProcesses("muse-host-lock-");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every record of a session log, parsed. */
function records(data: string, sessionId: string): Array<Record<string, unknown>> {
  return readFileSync(join(data, "sessions", `${sessionId}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("finding 1: one owner per data dir", () => {
  it("finding 1: a second host on a live host's --data exits 3 with one line naming the holder, and changes nothing", async () => {
    const data = tempDir();
    const model = shellModel(data, "ticks", "i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo tick $i; sleep 0.05; done");
    const a = start(["--script", model, "--data", data]);
    const sessionId = await createSession(a);
    const turnId = (await a.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    await a.waitFor((m) => m.method === "item/delta");

    const b = start(["--script", fixture("hello.json"), "--data", data]);
    const exit = await exitOf(b);
    expect(exit).toEqual({ code: 3, signal: null });
    const lines = b.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^muse-host: data dir .* is in use by muse-host pid ${a.child.pid} on ${hostname()} \\(started .*\\); one host per data dir$`),
    );

    // The live host finishes its turn alone: one terminal, no "host restarted", cursors in order.
    const done = await a.waitFor(completedOf(turnId), 10_000);
    expect(done.params?.["terminal"]).toBe("completed");
    // Read the log once the host has exited: it appends its turnCompleted record just after it
    // sends the (already logged) terminal, so a read right on receipt can race it.
    expect(await a.stop()).toEqual({ code: 0, signal: null });
    const log = records(data, sessionId);
    expect(log.filter((r) => r["type"] === "turnCompleted")).toHaveLength(1);
    expect(JSON.stringify(log)).not.toContain("host restarted");
    const ns = log.filter((r) => r["type"] === "notification").map((r) => r["n"] as number);
    expect(ns).toEqual(ns.map((_, i) => i + 1));
    expect(existsSync(join(data, "host.lock"))).toBe(false); // released on a clean exit
  });

  it("finding 1: the lock of a SIGKILLed host is taken over at once, and its cut-off turn gets exactly one terminal", async () => {
    const data = tempDir();
    const model = shellModel(data, "nap", "echo napping; sleep 1");
    const a = start(["--script", model, "--data", data]);
    const sessionId = await createSession(a);
    const turnId = (await a.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    await a.waitFor((m) => m.method === "item/delta");
    const deadPid = a.child.pid;
    await a.kill();
    expect(JSON.parse(readFileSync(join(data, "host.lock", "owner.json"), "utf8"))).toMatchObject({ pid: deadPid }); // left behind

    const t0 = Date.now();
    const b = start(["--script", model, "--data", data]);
    await serving(b);
    expect(Date.now() - t0).toBeLessThan(8_000); // no waiting for staleness
    expect(b.stderr).toContain(`took over the lock of data dir ${data} from pid ${deadPid}, which is no longer running`);
    const resume = await b.request("session/resume", { sessionId });
    await b.waitFor(completedOf(turnId));
    await sleep(100);
    const terminals = b.notifications("turn/completed", turnId);
    expect(terminals).toHaveLength(1);
    expect(terminals[0]).toMatchObject({ terminal: "failed", reason: "host restarted" });
    expect(resume.result?.["replayed"]).toBe(b.wire.filter((m) => m.method !== undefined).length);
    expect(JSON.parse(readFileSync(join(data, "host.lock", "owner.json"), "utf8"))).toMatchObject({ pid: b.child.pid });
    expect(await b.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 1: a stalled holder (SIGSTOP past the stale time) keeps its lock, and goes on when resumed", async () => {
    const data = tempDir();
    const a = start(["--script", fixture("hello.json"), "--data", data, "--lock-stale-ms", "2000"]);
    await serving(a);
    a.child.kill("SIGSTOP");
    try {
      await sleep(3_000); // no refresh for longer than the stale time
      const b = start(["--script", fixture("hello.json"), "--data", data, "--lock-stale-ms", "2000"]);
      expect(await exitOf(b)).toEqual({ code: 3, signal: null });
      expect(b.stderr).toContain(`in use by muse-host pid ${a.child.pid}`);
    } finally {
      a.child.kill("SIGCONT");
    }
    await sleep(1_500); // past its next refresh: the lock is still its own
    await createSession(a);
    expect(a.stderr).not.toMatch(/lost the lock/);
    expect(await a.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 1: a holder on another machine is refused until its lock goes unrefreshed for the stale time", async () => {
    const data = tempDir();
    const lock = join(data, "host.lock");
    mkdirSync(lock, { recursive: true });
    const elsewhere = { pid: 1, hostname: "elsewhere.example", startedAt: "2025-01-01T00:00:00.000Z", token: "t".repeat(32) };
    writeFileSync(join(lock, "owner.json"), JSON.stringify(elsewhere));

    const b = start(["--script", fixture("hello.json"), "--data", data, "--lock-stale-ms", "2000"]);
    expect(await exitOf(b)).toEqual({ code: 3, signal: null });
    expect(b.stderr).toMatch(/in use by muse-host pid 1 on elsewhere\.example \(started 2025-01-01T00:00:00\.000Z, lock refreshed \d+\.\d s ago\)/);

    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    const c = start(["--script", fixture("hello.json"), "--data", data, "--lock-stale-ms", "2000"]);
    await serving(c);
    expect(c.stderr).toMatch(/took over the lock of data dir .* from elsewhere\.example \(pid 1\), not refreshed for \d+\.\d s/);
    expect(await c.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 1: a host whose lock was taken over writes nothing more and exits 1", async () => {
    const data = tempDir();
    const a = start(["--script", fixture("hello.json"), "--data", data]);
    const sessionId = await createSession(a);
    const before = readFileSync(join(data, "sessions", `${sessionId}.jsonl`), "utf8");
    // Another machine takes the dir over (as after a stale lock): the lock directory is replaced.
    renameSync(join(data, "host.lock"), join(data, "moved.lock"));
    mkdirSync(join(data, "host.lock"));
    writeFileSync(join(data, "host.lock", "owner.json"), JSON.stringify({ pid: 1, hostname: "elsewhere.example", startedAt: "now", token: "x".repeat(32) }));

    const answer = await a.request("session/setModel", { sessionId, model: "default" });
    expect(answer.error).toBeDefined();
    expect(await exitOf(a)).toEqual({ code: 1, signal: null });
    expect(a.stderr).toMatch(/the data-dir lock failed: lost the lock on data dir .*another host took the data dir over; shutting down/);
    expect(readFileSync(join(data, "sessions", `${sessionId}.jsonl`), "utf8")).toBe(before);
    expect(readFileSync(join(data, "host.lock", "owner.json"), "utf8")).toContain("elsewhere.example"); // the new owner's lock is left alone
  });
});
