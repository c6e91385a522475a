/**
 * Tool process groups on record: every shell tool's process group is recorded in the data dir
 * while it runs, so that a host started after a crash (SIGKILL, OOM kill) kills the groups the
 * crashed run left behind before recovery closes their turns as `host restarted`.
 *
 * **The record.** One empty file per live group, `<data>/tool-groups/<pid>-<start>-<boot>`: the
 * shell's pid (also its process-group and session id, as the shell tool spawns it with `setsid`),
 * its start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot) and the boot id
 * (`/proc/sys/kernel/random/boot_id`). The name is the whole record, so it is created by one
 * `open(O_CREAT | O_EXCL)`, synchronously in the same event-loop turn as the spawn, and a SIGKILL at
 * any point after that leaves it complete: a process's death does not undo what the kernel has
 * already done. It is not fsynced: only a machine crash could lose it, and a machine crash kills
 * the tools too (a record from another boot is never acted on). The file is removed when the tool
 * call ends, after the shell tool's last SIGKILL of the group. One file per group rather than an
 * append-only journal: no torn lines, no compaction, and the directory holds exactly the live
 * groups (a journal would grow with every tool ever run).
 *
 * **At startup** ({@link reapToolGroups}), for each record, with one scan of `/proc`:
 * - recorded in another boot: stale, dropped (start times count from boot, so they cannot be compared);
 * - the leader `pid` runs (or is a zombie nobody reaped) with the recorded start time: it is the
 *   tool's shell, and as long as that pid is held the group id cannot have been reused, so every
 *   live process of the group is SIGKILLed;
 * - `pid` runs with another start time: the pid was reused. Linux (and POSIX) never hands out a pid
 *   while a process group of that id has members, so the tool's group is gone: nothing is killed;
 * - `pid` is gone but processes of group `pid` live (the shell exited and left children behind):
 *   the group is ours unless, after the whole tool group died, the pid was reused by a process that
 *   made itself a group leader and then exited, leaving children. Start times cannot tell those
 *   apart (every member of either group started after the record), so the group is killed only if
 *   every member is in session `pid` (the shell tool's leader called `setsid`, so its members are;
 *   a reused pid's group made with `setpgid` is not) and started no earlier than the recorded
 *   shell. What remains, a reused pid whose new owner also called `setsid` and exited leaving its
 *   children, during the host's downtime, is accepted as a known limit;
 * - nothing of the group lives: the record is dropped.
 *
 * Then it waits, bounded by {@link REAP_WAIT_MS}, until every killed process is gone (a zombie
 * counts as gone), and removes the records. A group that outlives the wait keeps its record, so the
 * next start tries again. Without `/proc` (not Linux) nothing is recorded and nothing is killed:
 * a pid alone cannot be told from a reused one.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, unlinkSync } from "node:fs";
import { currentBootId, readProcStat, scanProcesses, type ProcStat } from "./procStat.js";
import { join } from "node:path";
import type { ShellOptions } from "./shellTool.js";

/** The directory of tool-group records under the data dir. */
export const TOOL_GROUPS_DIR = "tool-groups";

/**
 * How long startup waits for the groups it SIGKILLed to be gone.
 * @unit milliseconds
 */
export const REAP_WAIT_MS = 5000;

/** One tool group on record. */
export interface ToolGroupRecord {
  /** The shell's pid: also its process-group id and session id. */
  pid: number;
  /** @unit clock ticks since boot */
  startTime: number;
  /** The boot id the record was made in. */
  bootId: string;
}

/**
 * What startup did with one record: `killed` (its live processes were SIGKILLed and are gone),
 * `survived` (SIGKILLed but still there after {@link REAP_WAIT_MS}: the record is kept), `gone`
 * (nothing of it ran), `reused` (its pid or group now belongs to another process), `otherBoot`.
 */
export interface ReapedToolGroup {
  record: ToolGroupRecord;
  outcome: "killed" | "survived" | "gone" | "reused" | "otherBoot";
  /** The pids that were SIGKILLed (empty unless `killed` or `survived`). */
  killed: number[];
  /** Why a group that was not killed was left alone. */
  why?: string;
}

/** The file name of a record. */
export function recordName(record: ToolGroupRecord): string {
  return `${record.pid}-${record.startTime}-${record.bootId}`;
}

/** The record a file name holds, or `undefined` when the name is not one. */
export function parseRecordName(name: string): ToolGroupRecord | undefined {
  const m = /^([1-9][0-9]{0,9})-(0|[1-9][0-9]{0,15})-([0-9a-f-]{1,64})$/i.exec(name);
  if (m === null) return undefined;
  const pid = Number(m[1]);
  const startTime = Number(m[2]);
  if (!Number.isSafeInteger(startTime) || pid > 0x7fffffff) return undefined;
  return { pid, startTime, bootId: m[3]! };
}

const alive = (p: ProcStat | undefined): p is ProcStat => p !== undefined && p.state !== "Z" && p.state !== "X";

/**
 * Decides what to do with one record, given the process table (see the module comment). Returns
 * the pids to SIGKILL (by group) with `outcome: "killed"`, or why nothing is to be killed. Never
 * picks a group holding `self` (this host's pid and its parent).
 */
export function judgeToolGroup(
  record: ToolGroupRecord,
  processes: ReadonlyMap<number, ProcStat>,
  bootId: string,
  self: readonly number[] = [process.pid, process.ppid],
): ReapedToolGroup {
  const leave = (outcome: ReapedToolGroup["outcome"], why?: string): ReapedToolGroup =>
    why === undefined ? { record, outcome, killed: [] } : { record, outcome, killed: [], why };
  if (record.bootId !== bootId) return leave("otherBoot", `recorded in boot ${record.bootId}`);
  const leader = processes.get(record.pid);
  if (leader !== undefined && leader.startTime !== record.startTime) {
    return leave("reused", `pid ${record.pid} now belongs to a process started at tick ${leader.startTime}, not ${record.startTime}`);
  }
  const members = [...processes.values()].filter((p) => p.pgrp === record.pid && alive(p));
  if (members.length === 0) return leave("gone");
  if (members.some((p) => self.includes(p.pid))) return leave("reused", `group ${record.pid} holds this host`);
  if (leader === undefined) {
    const stranger = members.find((p) => p.session !== record.pid || p.startTime < record.startTime);
    if (stranger !== undefined) {
      return leave(
        "reused",
        `group ${record.pid} has no leader and process ${stranger.pid} (session ${stranger.session}, started at tick ${stranger.startTime}) cannot be the tool's`,
      );
    }
  }
  return { record, outcome: "killed", killed: members.map((p) => p.pid) };
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** True when `pid` no longer runs as the process it was (gone, zombie, or its pid reused). */
function goneSince(pid: number, startTime: number): boolean {
  const now = readProcStat(pid);
  return !alive(now) || now.startTime !== startTime;
}

/** The records directory: created if missing; anything but a real directory is refused. */
function recordsDir(dataDir: string): string {
  const dir = join(dataDir, TOOL_GROUPS_DIR);
  try {
    const stat = lstatSync(dir);
    if (!stat.isDirectory()) throw new Error(`${dir} is not a directory (${stat.isSymbolicLink() ? "a symlink" : "another kind of file"}): refusing to use it`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  return dir;
}

/**
 * Kills the tool process groups a previous run of a host on `dataDir` left running (see the module
 * comment for how a record is judged), waits for them to be gone (at most {@link REAP_WAIT_MS}),
 * and clears the records. Call it at startup, after taking the data dir's lock (another live host's
 * tools must not be touched) and before recovery closes turns as `host restarted`. Throws when
 * `<dataDir>/tool-groups` exists and is not a directory.
 */
export function reapToolGroups(dataDir: string, logger: (line: string) => void = () => {}): ReapedToolGroup[] {
  const dir = recordsDir(dataDir);
  const bootId = currentBootId();
  const records: Array<{ name: string; record: ToolGroupRecord }> = [];
  for (const name of readdirSync(dir).sort()) {
    const record = parseRecordName(name);
    if (record === undefined) logger(`${join(dir, name)} is not a tool-group record: left alone`);
    else records.push({ name, record });
  }
  if (records.length === 0) return [];
  const processes = scanProcesses();
  const results = records.map(({ record }) =>
    bootId === undefined ? { record, outcome: "gone" as const, killed: [], why: "no /proc on this system" } : judgeToolGroup(record, processes, bootId),
  );
  const toWait: Array<{ pid: number; startTime: number }> = [];
  for (const r of results) {
    if (r.outcome !== "killed") continue;
    try {
      process.kill(-r.record.pid, "SIGKILL");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") logger(`could not kill tool process group ${r.record.pid}: ${(error as Error).message}`);
    }
    for (const pid of r.killed) toWait.push({ pid, startTime: processes.get(pid)!.startTime });
  }
  const deadline = Date.now() + REAP_WAIT_MS;
  while (toWait.some((p) => !goneSince(p.pid, p.startTime)) && Date.now() < deadline) sleepSync(10);
  records.forEach(({ name }, i) => {
    const r = results[i]!;
    if (r.outcome === "killed" && r.killed.some((pid) => !goneSince(pid, processes.get(pid)!.startTime))) {
      r.outcome = "survived";
      logger(`tool process group ${r.record.pid} left running by a previous host is still there ${REAP_WAIT_MS} ms after SIGKILL; its record is kept`);
      return;
    }
    if (r.outcome === "killed") logger(`killed tool process group ${r.record.pid} (${r.killed.length} process(es)) left running by a previous host`);
    else if (r.outcome === "reused") logger(`tool process group ${r.record.pid} on record is not the tool's any more (${r.why ?? "reused"}): left alone`);
    try {
      unlinkSync(join(dir, name));
    } catch (error) {
      logger(`could not remove tool-group record ${join(dir, name)}: ${(error as Error).message}`);
    }
  });
  return results;
}

/**
 * Records the process groups of the shell tools a host runs, in `<dataDir>/tool-groups/`. Create it
 * after {@link reapToolGroups}; pass {@link ToolGroupRegistry.shellHooks} to the shell tool.
 */
export class ToolGroupRegistry {
  readonly #dir: string;
  readonly #bootId: string | undefined;
  readonly #logger: (line: string) => void;
  /** Live records: shell pid → file path. */
  readonly #live = new Map<number, string>();

  constructor(dataDir: string, logger: (line: string) => void = () => {}) {
    this.#dir = join(dataDir, TOOL_GROUPS_DIR);
    this.#bootId = currentBootId();
    this.#logger = logger;
  }

  /** How many groups are on record now. */
  get size(): number {
    return this.#live.size;
  }

  /**
   * Records the group of the shell just spawned as `pid`. Never throws: a record that cannot be
   * written is reported, and the tool runs unrecorded (killed as usual while this host lives).
   */
  record(pid: number): void {
    if (this.#bootId === undefined || this.#live.has(pid)) return;
    const stat = readProcStat(pid);
    if (stat === undefined) return; // already reaped: nothing to record
    const path = join(this.#dir, recordName({ pid, startTime: stat.startTime, bootId: this.#bootId }));
    try {
      closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
      this.#live.set(pid, path);
    } catch (error) {
      this.#logger(`could not record tool process group ${pid} (${(error as Error).message}); if this host is killed, it is not cleaned up`);
    }
  }

  /** Drops the record of the group led by `pid` (its processes are gone or SIGKILLed). */
  release(pid: number): void {
    const path = this.#live.get(pid);
    if (path === undefined) return;
    this.#live.delete(pid);
    try {
      unlinkSync(path);
    } catch (error) {
      this.#logger(`could not remove tool-group record ${path}: ${(error as Error).message}`);
    }
  }

  /** The shell tool's hooks that keep the record: `onSpawn` records, `onGroupEnd` releases. */
  shellHooks(): Pick<ShellOptions, "onSpawn" | "onGroupEnd"> {
    return { onSpawn: (pid) => this.record(pid), onGroupEnd: (pid) => this.release(pid) };
  }
}

/**
 * Startup in one call: kills what a previous run left (see {@link reapToolGroups}) and returns
 * the registry for this run.
 */
export function openToolGroups(dataDir: string, logger?: (line: string) => void): ToolGroupRegistry {
  reapToolGroups(dataDir, logger);
  return new ToolGroupRegistry(dataDir, logger);
}
