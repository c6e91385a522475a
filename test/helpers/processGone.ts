/** Whether a process is really gone: the tests' one check that a kill reached every process. */
import { readFileSync } from "node:fs";

/**
 * True when `pid` no longer runs: kill(pid, 0) throws ESRCH, or the process is a zombie (it has
 * exited; this sandbox's PID 1 does not reap orphans, so a killed grandchild can linger as one).
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Waits (bounded) until every pid is gone; false if one still runs at the deadline. */
export async function waitGone(pids: number[], timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pids.every(processGone)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pids.every(processGone);
}
