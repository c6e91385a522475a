/**
 * Process-group signalling: a host spawned as a group leader is stopped together with every
 * grandchild it started, so nothing is orphaned.
 */

/**
 * Send `signal` to the whole process group led by `pid`. Returns false when the group is gone.
 *
 * @example
 * ```ts
 * signalGroup(child.pid!, "SIGTERM");
 * ```
 */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/**
 * True while any process of the group led by `pid` is alive.
 *
 * @example
 * ```ts
 * const host = spawnHost({ command: "muse-host", args: ["serve", "--stdio", "--script", "model.json"] });
 * host.process.kill("SIGTERM"); // the host alone, not its group
 * await host.exited;
 * if (groupAlive(host.pid)) signalGroup(host.pid, "SIGKILL"); // what it left behind
 * ```
 */
export function groupAlive(pid: number): boolean {
  return signalGroup(pid, 0);
}
