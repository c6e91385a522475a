/** The process of a host `muse check` spawned: what the "shutdown mid-tool" scenario signals. */
import type { HostExit } from "@muse-code/sdk/node";

/**
 * The process of a host the check spawned: how to signal it (the process itself, not its group)
 * and how it ended.
 */
export interface SpawnedProcess {
  /** Send `signal` to the host's process. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves once the host's process has exited. */
  exited: Promise<HostExit>;
  /**
   * True while any process of the spawned process's group is alive: after it exited, a wrapper
   * that left its host running. Without it, the check cannot tell.
   */
  groupAlive?(): boolean;
}
