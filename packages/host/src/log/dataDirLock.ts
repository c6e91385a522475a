/**
 * One owner per data dir: `<data>/host.lock`, a `proper-lockfile` lock directory whose mtime the
 * holder refreshes, with an `owner.json` inside naming the holder (pid, process start time,
 * hostname, boot id). A second host refuses to start with one line naming the holder. A lock
 * whose holder provably died on this machine (its pid is gone, a zombie, or now another process)
 * is taken over at once; a holder on another machine is presumed alive until its lock has not
 * been refreshed for `staleMs`. Every session-log write first checks that the lock is still ours.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { join } from "node:path";
import type * as Lockfile from "proper-lockfile";
import { currentBootId, readProcStat } from "../tools/procStat.js";

/** The lock directory's name inside the data dir. */
export const DATA_DIR_LOCK_NAME = "host.lock";

/**
 * How long a lock held from another machine may go unrefreshed before it is taken over. The
 * holder refreshes it every `staleMs / 2`.
 */
export const DEFAULT_LOCK_STALE_MS = 10_000;

/**
 * What a holder writes into its lock: enough to name it, and to tell from this machine whether it
 * is still alive.
 */
export interface DataDirOwner {
  pid: number;
  hostname: string;
  /** When the holder's process started (ISO 8601). */
  startedAt: string;
  /** Linux: the kernel's boot id, so a pid is only compared on the machine and boot that issued it. */
  bootId?: string;
  /** Linux: the holder's pid namespace (`/proc/self/ns/pid`), so containers never compare pids across namespaces. */
  pidNamespace?: string;
  /** Linux: the holder's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a reused pid is not mistaken for it. */
  procStart?: string;
  /** Random, unique to this acquisition. */
  token: string;
}

/** Another live host holds the data dir. `message` is the one line the CLI prints. */
export class DataDirInUseError extends Error {
  readonly code = "DATA_DIR_IN_USE";
  readonly dataDir: string;
  /** The holder, when its lock names one. */
  readonly owner: DataDirOwner | undefined;

  constructor(dataDir: string, message: string, owner: DataDirOwner | undefined) {
    super(message);
    this.name = "DataDirInUseError";
    this.dataDir = dataDir;
    this.owner = owner;
  }
}

/** A held data-dir lock. */
export interface DataDirLock {
  /** The lock directory, `<data>/host.lock`. */
  readonly path: string;
  /** What this host wrote into it. */
  readonly owner: DataDirOwner;
  /** Throws when the lock is no longer ours (taken over, or not refreshed in time). Cheap: one `lstat`. */
  assertHeld(): void;
  /** Removes the lock (idempotent). */
  release(): void;
}

/** Options of {@link lockDataDir}. */
export interface LockDataDirOptions {
  /**
   * @unit milliseconds a lock held from another machine may go unrefreshed before it is taken over (at least 2000)
   * @defaultValue {@link DEFAULT_LOCK_STALE_MS}
   */
  staleMs?: number;
  /** Called once if the lock is lost while held (another host took it over). Writes are refused from then on. */
  onCompromised?: (error: Error) => void;
  /** Told when a dead holder's lock is taken over. */
  logger?: (line: string) => void;
}

/** Keeps Node's own disposition of SIGXFSZ: ignored, so a write past `ulimit -f` fails with EFBIG. */
const ignoreSigxfsz = () => {};

// Loaded on first use: proper-lockfile installs process exit hooks when it loads (signal-exit),
// which a host without a data dir, or an app that only imports this package, should not get.
// Loaded synchronously (require), as the lock is taken inside the synchronous createHost.
let lockfileModule: typeof Lockfile | undefined;
function lockfile(): typeof Lockfile {
  if (lockfileModule === undefined) {
    lockfileModule = createRequire(import.meta.url)("proper-lockfile") as typeof Lockfile;
    // signal-exit listens to SIGXFSZ and, when it is the only listener, re-raises it with the
    // default action (terminate). Node ignores SIGXFSZ so that a write over the file-size limit
    // fails with EFBIG (a session-log write failure the host reports and exits 1 on); a second
    // listener keeps it that way.
    if (process.platform !== "win32") process.on("SIGXFSZ", ignoreSigxfsz);
  }
  return lockfileModule;
}

const hasProc = (): boolean => readProcStat("self") !== undefined;

function pidNamespace(): string | undefined {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return undefined;
  }
}

function selfOwner(): DataDirOwner {
  const owner: DataDirOwner = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    token: randomBytes(16).toString("hex"),
  };
  const bootId = currentBootId();
  if (bootId !== undefined) owner.bootId = bootId;
  const ns = pidNamespace();
  if (ns !== undefined) owner.pidNamespace = ns;
  const start = readProcStat("self")?.startTime;
  if (start !== undefined) owner.procStart = String(start);
  return owner;
}

function readOwner(path: string): DataDirOwner | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Partial<DataDirOwner>;
    if (typeof value.pid !== "number" || typeof value.hostname !== "string" || typeof value.token !== "string") return undefined;
    return { startedAt: "an unknown time", ...value } as DataDirOwner;
  } catch {
    return undefined;
  }
}

/** True when `owner`'s pid can be checked from here: same machine, same boot, same pid namespace. */
function isLocal(owner: DataDirOwner, self: DataDirOwner): boolean {
  return owner.hostname === self.hostname && owner.bootId === self.bootId && owner.pidNamespace === self.pidNamespace;
}

/** Whether a local `owner` still runs. Conservative: when in doubt, alive. */
function isAlive(owner: DataDirOwner): boolean {
  if (hasProc()) {
    const stat = readProcStat(owner.pid);
    if (stat === undefined) return false; // no such process
    if (stat.state === "Z" || stat.state === "X") return false; // killed, not yet reaped
    return owner.procStart === undefined || String(stat.startTime) === owner.procStart; // else the pid was reused
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** @unit milliseconds since the lock directory was last refreshed, or `undefined` when it is gone */
function ageOf(path: string): number | undefined {
  try {
    return Math.max(0, Date.now() - lstatSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

function describe(dataDir: string, owner: DataDirOwner | undefined, ageMs: number | undefined): string {
  const refreshed = ageMs === undefined ? "" : `, lock refreshed ${(ageMs / 1000).toFixed(1)} s ago`;
  if (owner === undefined) return `data dir ${dataDir} is in use by another muse-host (its lock names no owner yet${refreshed}); one host per data dir`;
  return `data dir ${dataDir} is in use by muse-host pid ${owner.pid} on ${owner.hostname} (started ${owner.startedAt}${refreshed}); one host per data dir`;
}

/**
 * Moves a dead or stale holder's lock directory aside and deletes it. The rename is atomic, so
 * of two hosts taking over at once only one moves it; if what was moved turns out not to be
 * `holder`'s lock (someone took it over in between), this host gives up.
 */
function takeOver(dataDir: string, lockPath: string, holder: DataDirOwner): void {
  const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lockPath, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // already gone: just try to lock
    throw error;
  }
  const moved = readOwner(join(aside, "owner.json"));
  if (moved?.token !== holder.token) {
    // Not the dead holder's lock: another host took over in between. Put its lock back (best
    // effort) rather than destroy it, then give up.
    try {
      renameSync(aside, lockPath);
    } catch {
      // it made a new one meanwhile, or the dir is gone: leave what is there
    }
    throw new DataDirInUseError(dataDir, `data dir ${dataDir}: another muse-host took over its lock at the same time; one host per data dir`, moved);
  }
  rmSync(aside, { recursive: true, force: true });
}

/**
 * Takes the data dir's lock, or throws {@link DataDirInUseError} naming the live holder.
 *
 * - Free: taken (`mkdir <data>/host.lock`, then `owner.json` created exclusively inside it).
 * - Held by a live process on this machine: refused, however long since its last refresh (a host
 *   stalled for minutes keeps its data dir).
 * - Held by a process on this machine that is gone (SIGKILLed, crashed): taken over at once.
 * - Held from another machine: refused until the lock has not been refreshed for `staleMs`.
 * - Left empty by a host that died between `mkdir` and writing its owner: taken over by
 *   proper-lockfile once older than `staleMs`.
 *
 * The holder refreshes the lock every `staleMs / 2` (proper-lockfile's update); if it finds the
 * lock changed under it, or {@link DataDirLock.assertHeld} finds `owner.json` replaced, the lock
 * is compromised: `onCompromised` runs once and every later write is refused.
 */
export function lockDataDir(dataDir: string, options: LockDataDirOptions = {}): DataDirLock {
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  if (!Number.isSafeInteger(staleMs) || staleMs < 2000) throw new RangeError(`lockStaleMs must be an integer of at least 2000, got ${staleMs}`);
  const lockPath = join(dataDir, DATA_DIR_LOCK_NAME);
  const ownerPath = join(lockPath, "owner.json");
  const self = selfOwner();
  let compromised: Error | undefined;
  const compromise = (error: Error) => {
    if (compromised !== undefined) return;
    compromised = new Error(`lost the lock on data dir ${dataDir}: ${error.message}`, { cause: error });
    options.onCompromised?.(compromised);
  };
  let unlock: (() => void) | undefined;
  for (let attempt = 0; unlock === undefined; attempt++) {
    try {
      unlock = lockfile().lockSync(dataDir, { lockfilePath: lockPath, stale: staleMs, realpath: false, onCompromised: compromise });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ELOCKED: held. ENOTEMPTY: proper-lockfile found it stale but could not remove it, because
      // it names an owner: whether that owner is gone is decided here, not by mtime alone.
      if (code !== "ELOCKED" && code !== "ENOTEMPTY") throw error;
      const holder = readOwner(ownerPath);
      const age = ageOf(lockPath);
      if (holder === undefined || attempt >= 2) throw new DataDirInUseError(dataDir, describe(dataDir, holder, age), holder);
      const local = isLocal(holder, self);
      const gone = local ? !isAlive(holder) : age !== undefined && age > staleMs;
      if (!gone) throw new DataDirInUseError(dataDir, describe(dataDir, holder, age), holder);
      takeOver(dataDir, lockPath, holder);
      options.logger?.(
        local
          ? `took over the lock of data dir ${dataDir} from pid ${holder.pid}, which is no longer running`
          : `took over the lock of data dir ${dataDir} from ${holder.hostname} (pid ${holder.pid}), not refreshed for ${((age ?? 0) / 1000).toFixed(1)} s`,
      );
    }
  }
  const release = unlock;
  let identity: { dev: number; ino: number };
  try {
    // Creating owner.json changes the lock directory's mtime, which proper-lockfile compares with
    // the one it set: put that one back, or its next refresh would think the lock was taken over.
    const { mtime } = lstatSync(lockPath);
    const fd = openSync(ownerPath, "wx", 0o644);
    try {
      writeSync(fd, `${JSON.stringify(self)}\n`);
      fsyncSync(fd);
      const stats = fstatSync(fd);
      identity = { dev: stats.dev, ino: stats.ino };
    } finally {
      closeSync(fd);
    }
    utimesSync(lockPath, mtime, mtime);
  } catch (error) {
    try {
      release();
    } catch {
      // the lock directory is not ours to remove any more
    }
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new DataDirInUseError(
        dataDir,
        `data dir ${dataDir}: another muse-host took its lock at the same time; one host per data dir`,
        readOwner(ownerPath),
      );
    }
    throw error;
  }
  let released = false;
  const ours = (): boolean => {
    try {
      const stats = lstatSync(ownerPath);
      return stats.dev === identity.dev && stats.ino === identity.ino;
    } catch {
      return false;
    }
  };
  const cleanup = () => {
    if (released) return;
    released = true;
    process.off("exit", cleanup);
    if (compromised !== undefined || !ours()) return;
    try {
      unlinkSync(ownerPath);
    } catch {
      // gone already
    }
    try {
      release();
    } catch {
      try {
        rmdirSync(lockPath);
      } catch {
        // best effort: a lock left behind names a dead owner and is taken over at once
      }
    }
  };
  process.on("exit", cleanup);
  return {
    path: lockPath,
    owner: self,
    assertHeld() {
      if (compromised === undefined && !released && !ours()) compromise(new Error(`${ownerPath} was replaced: another host took the data dir over`));
      if (compromised !== undefined) throw compromised;
      if (released) throw new Error(`the lock on data dir ${dataDir} was released`);
    },
    release: cleanup,
  };
}
