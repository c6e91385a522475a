/** The bounded descriptor cache every session log of a host opens its file through. */
import { readFileSync } from "node:fs";
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import { isDescriptorExhaustion } from "./safeFiles.js";

/**
 * How many session-log descriptors the host keeps open when no turn is using them. Logs of
 * sessions with a running or queued turn stay open on top of these (their turn needs them).
 */
export const DEFAULT_MAX_OPEN_LOGS = 128;

/**
 * The idle-log descriptor bound a host uses when none is given: {@link DEFAULT_MAX_OPEN_LOGS},
 * or a quarter of this process's open-files limit when that is lower (read from
 * `/proc/self/limits` on Linux), so idle logs never crowd out the descriptors that running
 * tools, connections and new sessions need.
 */
export function defaultMaxOpenLogs(): number {
  let limit = Infinity;
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (match !== null) limit = Number(match[1]);
  } catch {
    // not Linux: keep the default
  }
  return Math.max(1, Math.min(DEFAULT_MAX_OPEN_LOGS, Math.floor(limit / 4)));
}

/**
 * No descriptor was free (`EMFILE` or `ENFILE`) to open a session log, even after closing idle
 * ones. Nothing was written: the command that needed it fails, and can be retried.
 */
export class LogUnavailableError extends Error {
  readonly code: string;

  constructor(path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code ?? "EMFILE";
    super(`no file descriptor free to open ${path} (${code}); nothing was written`, { cause });
    this.name = "LogUnavailableError";
    this.code = code;
  }
}

/** Options of a {@link LogFilePool}. */
export interface LogFilePoolOptions {
  /**
   * @unit file descriptors: idle session logs kept open (least recently used closed first)
   * @defaultValue {@link DEFAULT_MAX_OPEN_LOGS}
   */
  capacity?: number;
  /** Called before every write; throws to forbid it (e.g. the data-dir lock was lost). */
  guard?: () => void;
}

/**
 * The bounded descriptor cache of every {@link SessionLog} of a host: idle logs' descriptors are
 * kept in an LRU of `capacity` and closed when evicted; a log in use by a turn is held open
 * outside it. Opening retries once after closing half the idle descriptors when the process is
 * out of them.
 */
export class LogFilePool {
  readonly #idle: BoundedMap<object, () => void>;
  readonly guard: (() => void) | undefined;

  constructor(options: LogFilePoolOptions = {}) {
    const capacity = options.capacity ?? DEFAULT_MAX_OPEN_LOGS;
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`maxOpenLogs must be a positive integer, got ${capacity}`);
    this.#idle = new BoundedMap({ capacity, order: "recency", onEvict: (_log, close) => close() });
    this.guard = options.guard;
  }

  /** Idle descriptors held open now. */
  get idleCount(): number {
    return this.#idle.size;
  }

  /** Marks `log`'s open descriptor as the most recently used idle one (may close the oldest). */
  touch(log: object, close: () => void): void {
    this.#idle.set(log, close);
  }

  /** Takes `log` out of the idle set (held by a turn, or closed). */
  forget(log: object): void {
    this.#idle.delete(log);
  }

  /** Runs `open`; when the process is out of descriptors, closes half the idle ones and tries once more. */
  open<T>(path: string, open: () => T): T {
    try {
      return open();
    } catch (error) {
      if (!isDescriptorExhaustion(error)) throw error;
      if (this.#idle.size === 0) throw new LogUnavailableError(path, error);
      const victims = [...this.#idle].slice(0, Math.max(1, Math.ceil(this.#idle.size / 2)));
      for (const [log, close] of victims) {
        this.#idle.delete(log);
        close();
      }
      try {
        return open();
      } catch (again) {
        if (isDescriptorExhaustion(again)) throw new LogUnavailableError(path, again);
        throw again;
      }
    }
  }
}
