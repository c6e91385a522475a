/**
 * The processes an agent started, and making sure they are gone: "a turn ends only when its
 * processes are gone".
 *
 * **Finding them.** Agents run each tool command in its own process group and session below the
 * agent process (Codex app-server, and the ACP agents tried: pid = pgid = sid of the command), so
 * a signal to the agent's group misses them and one to the command's group reaches all of it. The
 * targets of a stop are every live process descending from the agent (by ppid, read from
 * `/proc/<pid>/stat`) outside the agent's own process group, plus the live members of every group
 * a {@link ProcessTreeWatch} saw below the agent during the turn: a group member whose parent
 * exited is re-parented away from the agent, and only the record still ties it to the turn. A
 * process that leaves both its parent and its group (`setsid` in a command, then the command
 * exits) is out of reach: catching it needs a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`),
 * which Node cannot set on itself; see docs/design/bridges-research.md §4.
 *
 * **Attribution.** Everything below the agent is taken to be the stopping turn's. That holds when
 * one agent process serves one session tree, whose turns run one at a time.
 *
 * **Reaping** ({@link reapProcesses}): SIGTERM each target's group, wait up to the kill grace,
 * SIGKILL what is left (by group, and by pid for a target that left its group), then poll until
 * each target is gone or the bound passes; a survivor is a {@link ProcessesSurvivedError}. A process
 * is known by pid and start time, so a reused pid is never taken for it; a zombie counts as gone
 * (it has exited; only its parent's wait is missing). A group is signalled only while a target it
 * holds still lives, which keeps its id from having been reused (Linux hands out no pid that
 * names a live group).
 */
import { readFileSync } from "node:fs";
import { parseProcStat, scanProcesses as scanProcStats, type ProcStat } from "../tools/procStat.js";

/** What `/proc/<pid>/stat` says of a process, and its command line. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** `R`, `S`, `D`, `Z` (zombie), `X` (dead), … */
  state: string;
  /** Field 22: when it started. @unit clock ticks since boot */
  startTime: number;
  /** Its command line (arguments joined by spaces), or its name in parentheses when that is unreadable. */
  command: string;
}

/** Parses `/proc/<pid>/stat` (the name, field 2, may hold spaces and parentheses), with `command` or else that name. */
export function parseStat(text: string, command?: string): ProcessInfo | undefined {
  const stat = parseProcStat(text);
  return stat === undefined ? undefined : infoOf(stat, command);
}

/** A {@link ProcessInfo} from what `/proc/<pid>/stat` said, with `command` or else the stat's name. */
function infoOf(stat: ProcStat, command: string | undefined): ProcessInfo {
  return { pid: stat.pid, ppid: stat.ppid, pgid: stat.pgrp, sid: stat.session, state: stat.state, startTime: stat.startTime, command: command ?? stat.name };
}

function readCommand(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
    return text === "" ? undefined : text;
  } catch {
    return undefined;
  }
}

/** One process now, or `undefined` when it does not exist (or there is no `/proc`). */
export function readProcess(pid: number): ProcessInfo | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"), readCommand(pid));
  } catch {
    return undefined;
  }
}

/** Every process in `/proc`, by pid (command lines are read only when `withCommands`). */
export function scanProcesses(withCommands = false): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const [pid, stat] of scanProcStats()) table.set(pid, infoOf(stat, withCommands ? readCommand(pid) : undefined));
  return table;
}

/** Whether a process has not exited (a zombie has). */
export const isLive = (p: ProcessInfo | undefined): p is ProcessInfo => p !== undefined && p.state !== "Z" && p.state !== "X";

/** Whether `known` no longer runs: gone, a zombie, or its pid now another process's. */
export function isGone(known: Pick<ProcessInfo, "pid" | "startTime">, table?: ReadonlyMap<number, ProcessInfo>): boolean {
  const now = table === undefined ? readProcess(known.pid) : table.get(known.pid);
  return !isLive(now) || now.startTime !== known.startTime;
}

/** The live processes descending from `root` (by ppid), `root` excluded. */
export function descendantsOf(root: number, table: ReadonlyMap<number, ProcessInfo>): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const p of table.values()) {
    const list = children.get(p.ppid);
    if (list === undefined) children.set(p.ppid, [p]);
    else list.push(p);
  }
  const out: ProcessInfo[] = [];
  const frontier = [root];
  const seen = new Set<number>([root]);
  while (frontier.length > 0) {
    for (const child of children.get(frontier.pop()!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      if (isLive(child)) out.push(child);
      // A zombie's children are re-parented already; nothing below it to walk.
      frontier.push(child.pid);
    }
  }
  return out;
}

/** A process group seen below the agent: its id, session, and the members seen in it. */
interface SeenGroup {
  sid: number;
  members: Map<number, ProcessInfo>;
}

/**
 * Records the tool process groups below an agent while a turn runs, by sampling `/proc` every
 * `intervalMs`; {@link ProcessTreeWatch.targets} then names every process of the turn still live.
 */
export class ProcessTreeWatch {
  readonly #agentPid: number;
  readonly #groups = new Map<number, SeenGroup>();
  #timer: NodeJS.Timeout | undefined;

  readonly #onNewGroup: ((group: { pgid: number; sid: number }) => void) | undefined;

  /**
   * @param agentPid - The agent process. @param intervalMs - How often to sample while started. @unit milliseconds
   * @param onNewGroup - Told of each group the first time a sample sees it (to keep a record of it beyond this process).
   */
  constructor(
    agentPid: number,
    readonly intervalMs = 200,
    onNewGroup?: (group: { pgid: number; sid: number }) => void,
  ) {
    this.#agentPid = agentPid;
    this.#onNewGroup = onNewGroup;
  }

  /** Starts sampling (one sample now). */
  start(): void {
    this.sample();
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sample(), this.intervalMs);
    this.#timer.unref();
  }

  /** Stops sampling; what was recorded stays. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Forgets every recorded group (at the start of the next turn). */
  clear(): void {
    this.#groups.clear();
  }

  /** Records the groups below the agent now. */
  sample(table: ReadonlyMap<number, ProcessInfo> = scanProcesses()): void {
    const agent = table.get(this.#agentPid);
    for (const p of descendantsOf(this.#agentPid, table)) {
      if ((agent !== undefined && p.pgid === agent.pgid) || p.pgid <= 1) continue;
      const known = this.#groups.get(p.pgid);
      const group = known ?? { sid: p.sid, members: new Map() };
      group.members.set(p.pid, p);
      this.#groups.set(p.pgid, group);
      if (known === undefined) this.#onNewGroup?.({ pgid: p.pgid, sid: p.sid });
    }
  }

  /** The process groups recorded, by id. */
  get groupIds(): number[] {
    return [...this.#groups.keys()];
  }

  /**
   * The live processes of the turn in `table`: every descendant of the agent outside its group,
   * and every live member of a recorded group (of the recorded session) while a member seen in it
   * still lives or the group's members all descend from what was recorded.
   */
  targets(table: ReadonlyMap<number, ProcessInfo> = scanProcesses(true)): ProcessInfo[] {
    const agent = table.get(this.#agentPid);
    const out = new Map<number, ProcessInfo>();
    for (const p of descendantsOf(this.#agentPid, table)) if (agent === undefined || p.pgid !== agent.pgid) out.set(p.pid, p);
    for (const [pgid, group] of this.#groups) {
      const live = [...table.values()].filter((p) => p.pgid === pgid && isLive(p));
      // The group id is the turn's while one member seen in it lives; otherwise only its seen members are.
      const owned = live.some((p) => group.members.get(p.pid)?.startTime === p.startTime);
      for (const p of live) if ((owned && p.sid === group.sid) || group.members.get(p.pid)?.startTime === p.startTime) out.set(p.pid, p);
    }
    return [...out.values()];
  }
}

/** Options of {@link reapProcesses}. */
export interface ReapOptions {
  /** How long SIGTERM is given before SIGKILL. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  /** How long, after SIGKILL, until a survivor is an error. @unit milliseconds @defaultValue 3000 */
  killBoundMs?: number;
  /** Process groups never signalled (the agent's own, this process's). */
  protectGroups?: readonly number[];
  /** How often `/proc` is polled while waiting. @unit milliseconds @defaultValue 20 */
  pollMs?: number;
}

/** What {@link reapProcesses} did. */
export interface ReapReport {
  /** The processes it was asked to end. */
  targets: ProcessInfo[];
  /** The process groups SIGTERMed. */
  terminated: number[];
  /** The process groups SIGKILLed after the grace: empty when SIGTERM sufficed. */
  killedGroups: number[];
  /** The targets SIGKILLed by pid, as their group is one never signalled. */
  killedPids: number[];
  /** From the first signal until every target was gone. @unit milliseconds */
  elapsedMs: number;
}

/**
 * Processes that were still there after SIGKILL and the bound: `survivors` as last read, and
 * `boundMs` (@unit milliseconds), how long after SIGKILL they were waited for.
 *
 * @example
 * ```ts
 * if (error instanceof ProcessesSurvivedError) log(`${error.survivors.length} left after ${error.boundMs} ms`);
 * ```
 */
export class ProcessesSurvivedError extends Error {
  override readonly name = "ProcessesSurvivedError";
  constructor(
    readonly survivors: ProcessInfo[],
    readonly boundMs: number,
  ) {
    super(
      `${survivors.length === 1 ? "tool process" : "tool processes"} ${survivors.map((p) => `${p.pid} (${p.command})`).join(", ")} could not be confirmed gone ${boundMs} ms after SIGKILL`,
    );
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function signal(target: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(target, sig);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * Ends `targets`: SIGTERM to each one's process group, SIGKILL after `killGraceMs` to whatever is
 * left (its group; the pid alone when its group is a protected one; never pid 1 or group 1), and resolves once every target is
 * gone. Members that join a signalled group meanwhile (a fork) are targets too. Rejects with a
 * {@link ProcessesSurvivedError} when one is still there `killBoundMs` after SIGKILL.
 */
export async function reapProcesses(targets: readonly ProcessInfo[], options: ReapOptions = {}): Promise<ReapReport> {
  const killGraceMs = options.killGraceMs ?? 2000;
  const killBoundMs = options.killBoundMs ?? 3000;
  const pollMs = options.pollMs ?? 20;
  const protect = new Set([...(options.protectGroups ?? []), readProcess(process.pid)?.pgid ?? -1]);
  const start = Date.now();
  const pending = new Map(targets.map((p) => [p.pid, p]));
  const given = new Set(pending.keys());
  // Group 1 (init's), "group" 0 (the kernel's threads) and below are never signalled nor grown:
  // kill(-1) would reach every process. Nor is a protected group, or this process.
  const signallable = (pgid: number): boolean => pgid > 1 && !protect.has(pgid);
  const report: ReapReport = { targets: [...targets], terminated: [], killedGroups: [], killedPids: [], elapsedMs: 0 };
  const refresh = (): Map<number, ProcessInfo> => {
    const table = scanProcesses();
    const groups = new Set<number>();
    for (const [pid, p] of pending) {
      if (isGone(p, table)) pending.delete(pid);
      else groups.add(table.get(pid)!.pgid);
    }
    // A process that joined a live target's group (forked from it) is ended with it.
    for (const p of table.values())
      if (signallable(p.pgid) && groups.has(p.pgid) && isLive(p) && !pending.has(p.pid) && p.pid !== process.pid) pending.set(p.pid, p);
    return table;
  };
  const liveGroups = (table: ReadonlyMap<number, ProcessInfo>): number[] => [
    ...new Set([...pending.values()].map((p) => table.get(p.pid)?.pgid ?? p.pgid).filter(signallable)),
  ];
  const waitUntil = async (deadline: number): Promise<void> => {
    while (pending.size > 0 && Date.now() < deadline) {
      await sleep(pollMs);
      refresh();
    }
  };

  let table = refresh();
  for (const pgid of liveGroups(table)) if (signal(-pgid, "SIGTERM")) report.terminated.push(pgid);
  await waitUntil(Date.now() + killGraceMs);
  if (pending.size > 0) {
    table = refresh();
    for (const pgid of liveGroups(table)) if (signal(-pgid, "SIGKILL")) report.killedGroups.push(pgid);
    for (const p of pending.values()) {
      const pgid = table.get(p.pid)?.pgid ?? p.pgid;
      // A target given in a group never signalled is killed alone (never pid 1, never this process).
      if (given.has(p.pid) && !signallable(pgid) && p.pid > 1 && p.pid !== process.pid && signal(p.pid, "SIGKILL")) report.killedPids.push(p.pid);
    }
    await waitUntil(Date.now() + killBoundMs);
    refresh();
  }
  report.elapsedMs = Date.now() - start;
  if (pending.size > 0) {
    const now = scanProcesses(true);
    const described = (p: ProcessInfo): ProcessInfo => {
      const current = now.get(p.pid) ?? p;
      // A command line read earlier says more than the bare name a later read may give.
      return current.command.startsWith("(") && !p.command.startsWith("(") ? { ...current, command: p.command } : current;
    };
    throw new ProcessesSurvivedError([...pending.values()].map(described), killBoundMs);
  }
  return report;
}

/**
 * Drops, from `registry`, the records of the groups in `recorded` that have no live process left;
 * a survivor's record stays, for a restarted host to kill.
 *
 * @example
 * ```ts
 * releaseGoneGroups(recordedThisTurn, toolGroups); // at the end of a bridged turn
 * ```
 */
export function releaseGoneGroups(recorded: ReadonlySet<number>, registry: { release(pgid: number): void } | undefined): void {
  if (recorded.size === 0 || registry === undefined) return;
  const live = new Set([...scanProcesses().values()].filter(isLive).map((p) => p.pgid));
  for (const pgid of recorded) if (!live.has(pgid)) registry.release(pgid);
}
