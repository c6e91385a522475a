/**
 * Finding 5 (issue 10): tools outlived a killed host. With real processes: the real host CLI runs a
 * tool (`sleep 60` in the tool's own process group), is SIGKILLed, and the tool lives on; a host
 * restarted on the same --data kills that group before recovery closes the turn as
 * `host restarted`. And a record must not fool it into killing anyone else's process: a pid whose
 * start time differs from the record's (pid reuse), or a leaderless group that predates the record.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { currentBootId } from "../../packages/host/src/tools/procStat.js";
import { recordName, TOOL_GROUPS_DIR } from "../../packages/host/src/tools/toolGroups.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { fixture, useHostProcesses, type HostProcess } from "../host/hostProcess.js";
import { grownAfter, grownTo } from "../helpers/foldedWire.js";

const { start, tempDir } = useHostProcesses("muse-faults-tool-groups-");

/** Process groups a test left running: SIGKILLed after it, pass or fail. */
const groups: number[] = [];
afterEach(() => {
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Clock ticks since boot at which `pid` started (field 22 of /proc/<pid>/stat). */
function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

function waitStderr(host: HostProcess, pattern: RegExp, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const poll = () => {
      if (pattern.test(host.stderr)) return resolve();
      if (Date.now() > deadline) return reject(new Error(`no ${String(pattern)} on stderr within ${timeoutMs} ms:\n${host.stderr}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

/** Writes a tool-group record as a host would have, for a group this test made itself. */
function plantRecord(data: string, pid: number, startTime: number): string {
  const dir = join(data, TOOL_GROUPS_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, recordName({ pid, startTime, bootId: currentBootId()! }));
  writeFileSync(path, "");
  return path;
}

describe.runIf(process.platform === "linux")("finding 5: tools outlive a killed host", () => {
  it("finding 5: a host restarted on the same --data kills the tool group a SIGKILLed host left running, before the turn is closed as host restarted", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("shell-sleep-60.json"), "--data", data]);
    const sessionId = (await host.request("session/create", {})).result!["sessionId"] as string;
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    const updated = await host.waitFor(grownTo(host.wire, /leader \d+ member \d+/));
    const [, leader, member] = /leader (\d+) member (\d+)/.exec(grownAfter(host.wire, updated))!.map(Number) as [number, number, number];
    groups.push(leader);
    // The group is on record while it runs.
    expect(readdirSync(join(data, TOOL_GROUPS_DIR))).toEqual([recordName({ pid: leader, startTime: startTicks(leader), bootId: currentBootId()! })]);

    await host.kill(); // SIGKILL: the host can clean nothing up
    expect(processGone(leader) || processGone(member), "the tool should outlive its SIGKILLed host").toBe(false);

    const restarted = start(["--script", fixture("shell-sleep-60.json"), "--data", data]);
    await waitStderr(restarted, /recovered session/);
    // By the time recovery reports the turn closed, the group is gone (a zombie counts: nobody may reap it here).
    expect(processGone(leader)).toBe(true);
    expect(processGone(member)).toBe(true);
    const killedAt = restarted.stderr.indexOf(`killed tool process group ${leader}`);
    expect(killedAt, restarted.stderr).toBeGreaterThanOrEqual(0);
    expect(killedAt).toBeLessThan(restarted.stderr.indexOf(`recovered session ${sessionId}`));
    expect(readdirSync(join(data, TOOL_GROUPS_DIR))).toEqual([]);

    const resumed = await restarted.request("session/resume", { sessionId });
    expect(resumed.result).toMatchObject({ status: "accepted", sessionId });
    const terminal = await restarted.waitFor((m) => m.method === "turn/completed" && m.params?.["turnId"] === turnId);
    expect(terminal.params).toMatchObject({ terminal: "failed", reason: "host restarted" });
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 5: a tool that ends normally leaves no record behind", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("shell-sleep-60.json"), "--data", data, "--kill-grace-ms", "200"]);
    const sessionId = (await host.request("session/create", {})).result!["sessionId"] as string;
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    await host.waitFor(grownTo(host.wire, /leader \d+/));
    expect(readdirSync(join(data, TOOL_GROUPS_DIR))).toHaveLength(1);
    await host.request("turn/cancel", { sessionId, turnId });
    await host.waitFor((m) => m.method === "turn/completed" && m.params?.["turnId"] === turnId);
    expect(readdirSync(join(data, TOOL_GROUPS_DIR))).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 5: pid reuse guard: a record whose start time does not match the live pid is not killed", async () => {
    const data = tempDir();
    const stranger = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
    const pid = stranger.pid!;
    groups.push(pid);
    // The record names this pid, but a process that started earlier: the recorded one is gone and its pid was reused.
    const record = plantRecord(data, pid, startTicks(pid) - 1);
    const host = start(["--script", fixture("hello.json"), "--data", data]);
    await waitStderr(host, /serving on stdio/);
    expect(processGone(pid)).toBe(false);
    expect(host.stderr).toContain(`tool process group ${pid} on record is not the tool's any more`);
    expect(existsSync(record)).toBe(false);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
    expect(processGone(pid)).toBe(false);
  });

  it("finding 5: a leaderless group is killed when it can be the recorded tool's, and left alone when it predates the record", async () => {
    // `sh` leads a new session and group, starts `sleep 60` in it and exits; this process reaps
    // it, so the group has no leader left, like a tool whose shell exited after its host was killed.
    const leaderless = async (): Promise<{ pgid: number; started: number; member: number }> => {
      const sh = spawn("/bin/sh", ["-c", "sleep 60 & echo $!"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
      const pgid = sh.pid!;
      groups.push(pgid);
      const started = startTicks(pgid); // still there: it cannot be reaped before this turn of the event loop ends
      let out = "";
      sh.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      await new Promise((resolve) => sh.on("exit", resolve));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(existsSync(`/proc/${pgid}`)).toBe(false);
      return { pgid, started, member: Number(out.trim()) };
    };
    const ours = await leaderless();
    const older = await leaderless();
    const data = tempDir();
    plantRecord(data, ours.pgid, ours.started);
    plantRecord(data, older.pgid, older.started + 1_000_000); // recorded after its members started: not this group
    const host = start(["--script", fixture("hello.json"), "--data", data]);
    await waitStderr(host, /serving on stdio/);
    expect(processGone(ours.member)).toBe(true);
    expect(processGone(older.member)).toBe(false);
    expect(readdirSync(join(data, TOOL_GROUPS_DIR))).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
    expect(await waitGone([ours.member], 100)).toBe(true);
  });
});
