/**
 * What Linux's `/proc` says about processes and this boot, for the host's two uses of it: the
 * data-dir lock (is the holder alive, and is it still the same process) and the tool-group registry
 * (which recorded groups still run). Everything returns `undefined` or empty where there is no `/proc`.
 */
import { readdirSync, readFileSync } from "node:fs";

/** What `/proc/<pid>/stat` says about a process (the fields the registry uses). */
export interface ProcStat {
  pid: number;
  /** Field 2, in its parentheses: the command's name. */
  name: string;
  /** Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), … */
  state: string;
  /** Field 4: the parent's pid. */
  ppid: number;
  /** Field 5: the process-group id. */
  pgrp: number;
  /** Field 6: the session id. */
  session: number;
  /** Field 22: when the process started. @unit clock ticks since boot */
  startTime: number;
}

/** Parses `/proc/<pid>/stat` text. The command name (field 2) may hold spaces and parentheses. */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf(" (");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open));
  const fields = text.slice(close + 2).split(" ");
  // fields[0] is field 3 (state): field k is fields[k - 3].
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgrp = Number(fields[2]);
  const session = Number(fields[3]);
  const startTime = Number(fields[19]);
  if (state === undefined || ![pid, ppid, pgrp, session, startTime].every(Number.isSafeInteger)) return undefined;
  return { pid, name: text.slice(open + 1, close + 1), state, ppid, pgrp, session, startTime };
}

/** `/proc/<pid>/stat` of one process, or `undefined` when it does not exist (or there is no `/proc`). */
export function readProcStat(pid: number | "self"): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Every process in `/proc`, by pid. */
export function scanProcesses(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat !== undefined) table.set(stat.pid, stat);
  }
  return table;
}

/** This boot's id, or `undefined` when the system does not say (no `/proc`). */
export function currentBootId(): string | undefined {
  try {
    const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return /^[0-9a-f-]{1,64}$/i.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
