/**
 * processTree.ts on real processes: a tool group below its parent is found by the tree walk and
 * ended by SIGTERM; one that ignores SIGTERM is SIGKILLed after the grace; a group member whose
 * parent exited (re-parented away from the agent) stays a target through the watch's record; the
 * protected group is never signalled; what is not confirmed gone within the bound is a typed error;
 * and `/proc/<pid>/stat` parses with a name full of parentheses.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import {
  descendantsOf,
  parseStat,
  ProcessesSurvivedError,
  ProcessTreeWatch,
  reapProcesses,
  scanProcesses,
  type ProcessInfo,
} from "../../packages/host/src/bridge/processTree.js";
import { processGone } from "../helpers/processGone.js";

const spawned: ChildProcess[] = [];
afterEach(() => {
  for (const child of spawned.splice(0)) {
    // Only while the leader has not exited does its pid still name its group (never a reused one).
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone already
    }
  }
});

/** A detached bash (its own group and session, as an agent's command is) running `script`. */
function tool(script: string): ChildProcess {
  const child = spawn("bash", ["-c", script], { detached: true, stdio: "ignore" });
  spawned.push(child);
  return child;
}

/** Waits (bounded) until `find` picks something out of a fresh process table. */
async function until<T>(find: (table: Map<number, ProcessInfo>) => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = find(scanProcesses(true));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const below = (table: Map<number, ProcessInfo>, command: string): ProcessInfo | undefined =>
  descendantsOf(process.pid, table).find((p) => p.command === command);

describe("processTree", () => {
  it("parses /proc/<pid>/stat whose name holds spaces and parentheses", () => {
    const stat = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
    expect(parseStat(stat)).toEqual({ pid: 4242, ppid: 1, pgid: 4242, sid: 4242, state: "S", startTime: 987654, command: "(a (weird) name)" });
    expect(parseStat("garbage")).toBeUndefined();
  });

  it("finds a tool group by the tree walk and ends it, grandchildren included, with SIGTERM", async () => {
    const child = tool("sleep 71 & sleep 72; wait");
    const grandchild = await until((t) => below(t, "sleep 71"), "sleep 71");
    const other = await until((t) => below(t, "sleep 72"), "sleep 72");
    expect(grandchild.pgid).toBe(child.pid);

    const ownGroup = scanProcesses().get(process.pid)!.pgid;
    const targets = descendantsOf(process.pid, scanProcesses(true)).filter((p) => p.pgid !== ownGroup);
    const report = await reapProcesses(targets);

    for (const pid of [child.pid!, grandchild.pid, other.pid]) expect(processGone(pid)).toBe(true);
    expect(report.terminated).toEqual([child.pid]);
    expect(report.killedGroups).toEqual([]);
  });

  it("SIGKILLs after the grace what ignores SIGTERM", async () => {
    const child = tool("trap '' TERM; sleep 73 & wait");
    const sleep = await until((t) => below(t, "sleep 73"), "sleep 73");

    const report = await reapProcesses([sleep], { killGraceMs: 300 });

    expect(processGone(sleep.pid)).toBe(true);
    expect(processGone(child.pid!)).toBe(true);
    expect(report.terminated).toEqual([child.pid]);
    expect(report.killedGroups).toEqual([child.pid]);
  });

  it("a process not confirmed gone within the bound is a ProcessesSurvivedError naming it; pid 1 is never signalled", async () => {
    // Init is a target no signal from here may reach: it stays, and the reaper must say so. Its
    // group (0 here, as the kernel's threads') is neither signalled nor grown into more targets.
    const init = scanProcesses(true).get(1)!;

    const error = await reapProcesses([init], { killGraceMs: 0, killBoundMs: 200 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ProcessesSurvivedError);
    expect((error as ProcessesSurvivedError).survivors.map((p) => p.pid)).toEqual([1]);
    expect((error as ProcessesSurvivedError).message).toBe(`tool process 1 (${init.command}) could not be confirmed gone 200 ms after SIGKILL`);
    expect(processGone(1)).toBe(false);
  });

  it("keeps a group member whose parent exited as a target, through the watch's record", async () => {
    // A middle process (the "agent") starts a tool group whose leader backgrounds a sleep and exits.
    const agent = spawn("bash", ["-c", "setsid bash -c 'sleep 74 & sleep 0.5' & wait; sleep 30"], { detached: true, stdio: "ignore" });
    spawned.push(agent);
    const watch = new ProcessTreeWatch(agent.pid!, 50);
    watch.start();
    const sleep = await until((t) => descendantsOf(agent.pid!, t).find((p) => p.command === "sleep 74"), "sleep 74");
    // Once its shell has exited, the sleep is no longer below the agent.
    await until((t) => (descendantsOf(agent.pid!, t).some((p) => p.pid === sleep.pid) ? undefined : true), "the sleep re-parented");
    watch.stop();

    const targets = watch.targets();
    expect(targets.map((p) => p.pid)).toContain(sleep.pid);
    await reapProcesses(targets, { protectGroups: [agent.pid!] });
    expect(processGone(sleep.pid)).toBe(true);
    expect(processGone(agent.pid!)).toBe(false);
  });

  it("never signals a protected group: a target there is SIGKILLed by its pid alone", async () => {
    const child = tool("sleep 75 & sleep 76; wait");
    const a = await until((t) => below(t, "sleep 75"), "sleep 75");
    const b = await until((t) => below(t, "sleep 76"), "sleep 76");

    const report = await reapProcesses([a], { protectGroups: [child.pid!], killGraceMs: 100 });

    expect(processGone(a.pid)).toBe(true);
    expect(processGone(b.pid)).toBe(false);
    expect(report.terminated).toEqual([]);
    expect(report.killedPids).toEqual([a.pid]);
  });
});
