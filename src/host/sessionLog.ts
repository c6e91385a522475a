/**
 * The session log: one append-only JSONL file per session, each record made durable (written and
 * `fdatasync`ed) before it is acted on. `item/updated` records are logged as deltas (only the text
 * appended since the item's previous logged state), so a log grows with output, not with output
 * squared; reading a log back rebuilds every notification exactly as the wire carried it.
 * Descriptors are opened on demand and held in a bounded cache ({@link LogFilePool}); reading
 * streams line by line, so memory never depends on a log's size.
 */
import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
  constants,
  type Stats,
} from "node:fs";
import { dirname, join } from "node:path";
import { BoundedMap } from "../internal/boundedMap.js";
import type { ApprovalState, CancelCause, Item, NotificationMethod, Terminal, TurnCompletedParams, TurnInput } from "../protocol/index.js";
import { MAX_LOG_LINE_BYTES, readLines } from "./logLines.js";
import { growingField, itemOf, NotificationEncoder } from "./notificationEncoder.js";
import { isDescriptorExhaustion, openLogFile } from "./safeFiles.js";

/**
 * One line of a session log. `at` is milliseconds since the Unix epoch. `notification` records
 * carry the exact params sent on the wire, with their cursor sequence `n`. On disk, an
 * `item/updated` may carry `delta`: then its item's `delta.field` holds only the text appended to
 * the item's previous logged state, which was `delta.from` characters long; {@link readSessionLog}
 * puts the whole text back.
 *
 * @example
 * ```ts
 * const record: SessionLogRecord = { type: "turnStarted", at: Date.now(), turnId, turn: 0 };
 * ```
 */
export type SessionLogRecord =
  | { type: "session"; at: number; sessionId: string; model: string }
  | { type: "model"; at: number; model: string; previousModel: string }
  | { type: "turnAccepted"; at: number; turnId: string; input: TurnInput[]; disposition: "started" | "queued" }
  | { type: "turnStarted"; at: number; turnId: string; turn: number }
  | { type: "cancelRequested"; at: number; turnId: string; cause: CancelCause; keepInbox: boolean }
  | { type: "turnCompleted"; at: number; turnId: string; terminal: Terminal; reason: string; cause?: CancelCause }
  | ApprovalRecord
  | { type: "notification"; at: number; n: number; method: NotificationMethod; params: Record<string, unknown>; delta?: ItemDelta };

/**
 * A tool call's approval question changed state: asked (`pending`), answered (`approved`,
 * `denied`) or withdrawn (`cancelled`). Logged durably before the change is acted on, beside the
 * `item/updated` that carries it to the clients; `reason` is the client's reason, or why its
 * answer could not be read (then `invalid` is true).
 *
 * @example
 * ```ts
 * const record: ApprovalRecord = { type: "approval", at: Date.now(), turnId, itemId, callId: "call_1", state: "denied", reason: "not on main" };
 * ```
 */
export interface ApprovalRecord {
  type: "approval";
  at: number;
  turnId: string;
  itemId: string;
  callId: string;
  state: ApprovalState;
  reason?: string;
  invalid?: boolean;
}

/**
 * How an on-disk `item/updated` record is coalesced: its item's `field` holds only what was
 * appended to the `from` characters (UTF-16 code units) of the item's previous logged state.
 *
 * @example
 * ```ts
 * const delta: ItemDelta = { field: "visibleOutput", from: 4096 };
 * ```
 */
export interface ItemDelta {
  field: "text" | "visibleOutput";
  /** @unit UTF-16 code units: the length of the previous logged value the suffix extends */
  from: number;
}

/**
 * A line {@link readSessionLog} could not turn into a record it can vouch for: longer than
 * {@link MAX_LOG_LINE_BYTES}, or a delta whose base was not readable. It is not replayed; `n`
 * (when it could be seen) still counts for the session's last cursor.
 *
 * @example
 * ```ts
 * for (const r of readSessionLog(path)) if (r.type === "skipped") console.error(r.why);
 * ```
 */
export interface SkippedRecord {
  type: "skipped";
  /** The cursor sequence of the lost notification, when its line showed one. */
  n?: number;
  why: string;
}

/**
 * The path of a session's log under a data directory: `<data>/sessions/<sessionId>.jsonl`.
 *
 * @example
 * ```ts
 * sessionLogPath("/var/muse", sessionId); // "/var/muse/sessions/<sessionId>.jsonl"
 * ```
 */
export function sessionLogPath(dataDir: string, sessionId: string): string {
  return join(dataDir, "sessions", `${sessionId}.jsonl`);
}

/**
 * How many session-log descriptors the host keeps open when no turn is using them. Logs of
 * sessions with a running or queued turn stay open on top of these (their turn needs them).
 *
 * @example
 * ```ts
 * const pool = new LogFilePool({ capacity: DEFAULT_MAX_OPEN_LOGS });
 * ```
 */
export const DEFAULT_MAX_OPEN_LOGS = 128;

/**
 * The idle-log descriptor bound a host uses when none is given: {@link DEFAULT_MAX_OPEN_LOGS},
 * or a quarter of this process's open-files limit when that is lower (read from
 * `/proc/self/limits` on Linux), so idle logs never crowd out the descriptors that running
 * tools, connections and new sessions need.
 *
 * @example
 * ```ts
 * const pool = new LogFilePool({ capacity: defaultMaxOpenLogs() }); // 16 under `ulimit -n 64`
 * ```
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
 *
 * @example
 * ```ts
 * try { log.append(record); } catch (error) { if (error instanceof LogUnavailableError) console.error("retry later"); }
 * ```
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

/**
 * Options of a {@link LogFilePool}.
 *
 * @example
 * ```ts
 * const options: LogFilePoolOptions = { capacity: 64, guard: () => lock.assertHeld() };
 * ```
 */
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
 *
 * @example
 * ```ts
 * const pool = new LogFilePool({ capacity: 64 });
 * const log = SessionLog.open(sessionLogPath("/var/muse", sessionId), { pool });
 * ```
 */
export class LogFilePool {
  readonly #idle: BoundedMap<SessionLog, () => void>;
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
  touch(log: SessionLog, close: () => void): void {
    this.#idle.set(log, close);
  }

  /** Takes `log` out of the idle set (held by a turn, or closed). */
  forget(log: SessionLog): void {
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

/**
 * How {@link SessionLog.open} treats the file: `create` makes a new one (it must not exist: a
 * planted file or link there is refused), `existing` needs it to exist, `any` (the default)
 * creates it when missing.
 *
 * @example
 * ```ts
 * SessionLog.open(path, { mode: "create" });
 * ```
 */
export type SessionLogOpenMode = "create" | "existing" | "any";

function noop(): void {}

/**
 * Syncs of one log that may run at once: a turn's last records need not wait for the sync of the
 * `turn/cancel` that ended it, and a streaming session still shares each sync among many records.
 */
const MAX_SYNCS_IN_FLIGHT = 2;

/**
 * Writes all of `text` at the descriptor's offset and returns the bytes written. The string is
 * handed to `write(2)` as it is (no Buffer of our own); a short write (e.g. a file-size limit) goes
 * on from the byte where it stopped until it completes or throws.
 */
function writeWhole(fd: number, text: string): number {
  const wrote = writeSync(fd, text);
  const length = Buffer.byteLength(text, "utf8");
  if (wrote === length) return wrote;
  const bytes = Buffer.from(text, "utf8");
  for (let at = wrote; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
  return bytes.length;
}

/**
 * A session log. `append` writes one record and `fdatasync`s it before returning. `write` is the
 * group-commit path: it queues the record's line and calls its `onDurable` (e.g. sending the
 * notification) only once an `fdatasync` that started after the line was written has succeeded.
 * The lines queued in one event-loop turn are written together, with one `write(2)`, at the end of
 * that turn (or sooner, by {@link SessionLog.settle}), and every record written before a sync starts
 * shares it: syncs run in the thread pool, started at the end of the turn of the first write, at
 * most two per log at once, and the records written while they run share the next. Callbacks run in
 * write order. {@link SessionLog.settle} makes everything
 * written durable now (and runs the waiting callbacks) for a caller that must answer on a durable
 * state. The descriptor is opened on demand (`O_NOFOLLOW`, regular files only, the very file first
 * opened) and kept in the pool's bounded cache, or held open while {@link SessionLog.hold} says a
 * turn uses it.
 *
 * @example
 * ```ts
 * const log = SessionLog.open(sessionLogPath("/var/muse", sessionId));
 * log.append({ type: "session", at: Date.now(), sessionId, model: "default" });
 * log.close();
 * ```
 */
export class SessionLog {
  readonly path: string;
  readonly #pool: LogFilePool;
  /** What the file was when first opened: a reopen must find the very same file, as this host left it. */
  readonly #identity: { dev: number; ino: number; birthtimeMs: number };
  /** @unit bytes: the file's size after this host's last write */
  #size: number;
  #fd: number | undefined;
  #held = false;
  #closed = false;
  /** Encodes notification records: keeps each open item's last logged value (the base of the next delta). */
  readonly #encoder = new NotificationEncoder();
  /** Callbacks of records written since the last sync started, in write order. */
  #waiting: Array<() => void> = [];
  /** Callbacks of durable records, in order, not yet run (see `#drain`). */
  #ready: Array<() => void> = [];
  /** The next of {@link SessionLog.#ready} to run (a queue read by index: `shift()` moves the rest each time). */
  #readyAt = 0;
  /** Callbacks of the records the sync now in flight covers. */
  #inFlight: Array<Array<() => void>> = [];
  /** Bumped by every {@link SessionLog.settle}: an async sync from an older epoch was superseded. */
  #epoch = 0;
  /** The end of this event-loop turn is scheduled: it writes the queued lines out and starts a sync. */
  #scheduled = false;
  /** Lines queued by `write` and not written yet (each with its newline), in order. */
  #unwritten = "";
  readonly #endOfTurn = () => {
    this.#scheduled = false;
    this.#startSync();
  };
  /** The callbacks {@link SessionLog.afterDurable} queued: called with the error on a failure too. */
  readonly #durableWaiters = new Set<(error?: Error) => void>();
  /** Why this log can no longer be written (a write or sync failed). */
  #failure: Error | undefined;
  #onFailure: ((error: Error) => void) | undefined;
  readonly #closeFd = () => {
    if (this.#fd === undefined) return;
    // Never close under a sync: what was written is made durable first (callbacks run).
    if (this.unsynced > 0) {
      try {
        this.settle();
      } catch {
        // reported through onFailure; the descriptor still closes
      }
    }
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  };

  private constructor(path: string, pool: LogFilePool, fd: number, stats: Stats, size: number) {
    this.path = path;
    this.#pool = pool;
    this.#fd = fd;
    this.#identity = { dev: stats.dev, ino: stats.ino, birthtimeMs: stats.birthtimeMs };
    this.#size = size;
    pool.touch(this, this.#closeFd);
  }

  /**
   * Opens the log at `path` for appending (see {@link SessionLogOpenMode}), refusing anything but a
   * regular file. A new file's directory entry is made durable too. Throws
   * {@link LogUnavailableError} when no descriptor is free, `UnsafeFileError` for a planted file.
   */
  static open(path: string, options: { pool?: LogFilePool; mode?: SessionLogOpenMode } = {}): SessionLog {
    const pool = options.pool ?? new LogFilePool();
    const mode = options.mode ?? "any";
    mkdirSync(dirname(path), { recursive: true });
    pool.guard?.();
    let created = mode === "create";
    let opened: ReturnType<typeof openLogFile>;
    if (mode === "create") {
      opened = pool.open(path, () => openLogFile(path, "create"));
    } else {
      try {
        opened = pool.open(path, () => openLogFile(path, "append"));
      } catch (error) {
        if (mode === "existing" || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        opened = pool.open(path, () => openLogFile(path, "create"));
        created = true;
      }
    }
    const { fd, stats } = opened;
    let size = stats.size;
    try {
      if (created) {
        // Make the new directory entry itself durable, not just the file's contents.
        const dir = pool.open(path, () => openSync(dirname(path), constants.O_RDONLY | (constants.O_DIRECTORY ?? 0)));
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
      } else if (stats.size > 0) {
        // A crash can leave a torn last line; start our first record on a fresh line.
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, stats.size - 1);
        if (last[0] !== 0x0a) size += writeSync(fd, "\n");
      }
    } catch (error) {
      closeSync(fd);
      if (created) unlinkSync(path); // our own empty file: a failed open leaves nothing half-made
      throw error;
    }
    return new SessionLog(path, pool, fd, stats, size);
  }

  /** Keeps the descriptor open outside the idle cache until {@link SessionLog.release} (a turn is using the log). */
  hold(): void {
    if (this.#held || this.#closed) return;
    this.#held = true;
    this.#pool.forget(this);
  }

  /** Returns the descriptor to the idle cache. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.#closed) return;
    if (this.#fd !== undefined) this.#pool.touch(this, this.#closeFd);
  }

  /** The open descriptor, reopening the same file (never another one) when the cache closed it. */
  #descriptor(): number {
    if (this.#fd === undefined) {
      const { fd, stats } = this.#pool.open(this.path, () => openLogFile(this.path, "append"));
      const { dev, ino, birthtimeMs } = this.#identity;
      if (stats.dev !== dev || stats.ino !== ino || stats.birthtimeMs !== birthtimeMs || stats.size !== this.#size) {
        closeSync(fd);
        throw new Error(`session log ${this.path} was replaced by another file, or changed by another writer, while its descriptor was closed`);
      }
      this.#fd = fd;
    }
    if (!this.#held) this.#pool.touch(this, this.#closeFd);
    return this.#fd;
  }

  /**
   * Appends `record` durably (write + fdatasync) before returning. Records written before it
   * become durable with it, and their callbacks run first, in order.
   */
  append(record: SessionLogRecord): void {
    this.write(record);
    this.settle();
  }

  /**
   * Queues `record`'s line, written out at the end of this event-loop turn, and calls `onDurable`
   * once it is on disk (group commit, see the class). For a `notification` record, `onDurable` is
   * given the JSON text of its wire message (`notificationMessage(method, params)`), encoded together
   * with the line ({@link NotificationEncoder}): the sender need not serialize it again. Throws when
   * the log is closed or failed, or no descriptor is free ({@link LogUnavailableError}: nothing was
   * queued); a write or sync that fails later goes to {@link SessionLog.onFailure}'s listener, and
   * then no callback of an undurable record ever runs.
   */
  write(record: SessionLogRecord, onDurable: (wireJson?: string) => void = noop): void {
    if (this.#closed) throw new Error(`session log ${this.path} is closed`);
    if (this.#failure !== undefined) throw this.#failure;
    this.#pool.guard?.();
    this.#descriptor(); // out of descriptors: thrown before anything is queued or noted
    let line: string;
    let wire: string | undefined;
    if (record.type === "notification") ({ line, wire } = this.#encoder.encode(record));
    else line = JSON.stringify(record);
    this.#unwritten += `${line}\n`;
    this.#waiting.push(wire === undefined ? onDurable : () => onDurable(wire));
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#endOfTurn);
    }
  }

  /**
   * Writes the queued lines out, with one `write(2)` (a short one goes on where it stopped). Checks
   * the pool's guard first: a host that lost its data dir writes nothing more. Throws what fails.
   */
  #writeOut(): void {
    if (this.#unwritten === "") return;
    const text = this.#unwritten;
    this.#unwritten = "";
    this.#pool.guard?.();
    this.#size += writeWhole(this.#fd ?? this.#descriptor(), text);
  }

  /** Records written whose sync has not finished yet. */
  get unsynced(): number {
    let n = this.#waiting.length;
    for (const batch of this.#inFlight) n += batch.length;
    return n;
  }

  /** Sets the listener told (once) when a group-commit sync fails. */
  onFailure(listener: (error: Error) => void): void {
    this.#onFailure = listener;
  }

  /**
   * Makes every record written so far durable now (the queued lines written out, one
   * `fdatasyncSync`) and runs their waiting callbacks in order, before returning. A no-op when
   * nothing waits. Throws when the write or the sync fails.
   */
  settle(): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (this.unsynced > 0) {
      const callbacks = [...this.#inFlight.flat(), ...this.#waiting];
      this.#inFlight = [];
      this.#waiting = [];
      this.#epoch += 1; // a sync still in flight covers nothing any more
      try {
        this.#writeOut();
        fdatasyncSync(this.#fd ?? this.#descriptor());
      } catch (error) {
        this.#fail(error as Error, false);
        throw error;
      }
      this.#ready.push(...callbacks);
    }
    this.#drain();
  }

  /**
   * Runs the callbacks of durable records, first in first out. A callback that leads back here (a
   * notification whose sending makes a command settle the log) goes on with the same queue, so the
   * order holds and nothing runs twice.
   */
  #drain(): void {
    while (this.#readyAt < this.#ready.length) {
      const callback = this.#ready[this.#readyAt] as () => void;
      this.#readyAt += 1;
      callback();
    }
    this.#ready = [];
    this.#readyAt = 0;
  }

  /**
   * Calls `callback` once every record written so far is durable, in order with the records'
   * own callbacks (at once when none waits), or with the error when the log fails first: it is
   * always called, exactly once.
   */
  afterDurable(callback: (error?: Error) => void): void {
    if (this.#failure !== undefined) return callback(this.#failure);
    if (this.unsynced === 0 && this.#readyAt >= this.#ready.length) return callback();
    const done = (error?: Error) => {
      this.#durableWaiters.delete(done);
      callback(error);
    };
    this.#durableWaiters.add(done); // a failure drops the callbacks: these still run, so the wait is bounded
    if (this.unsynced === 0) {
      // Everything is durable, but earlier callbacks are still being run: take a place after them.
      this.#ready.push(() => done());
      return this.#drain();
    }
    this.#waiting.push(() => done());
  }

  /** Resolves once every record written so far is durable, or the log failed (at once when none waits); never rejects. */
  durable(): Promise<void> {
    return new Promise((resolve) => this.afterDurable(() => resolve()));
  }

  /**
   * Writes the queued lines out, then starts the sync of every record waiting, unless
   * {@link MAX_SYNCS_IN_FLIGHT} are in flight (the next completion starts it). A sync covers every
   * record written before it started, so when one completes, its batch and every batch before it are
   * durable: their callbacks run, in order, even if an earlier sync has not returned yet (its return
   * then finds nothing left to do).
   */
  #startSync(): void {
    if (this.#failure !== undefined || this.#closed) return;
    try {
      this.#writeOut();
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    if (this.#inFlight.length >= MAX_SYNCS_IN_FLIGHT || this.#waiting.length === 0) return;
    const batch = this.#waiting;
    this.#waiting = [];
    this.#inFlight.push(batch);
    const epoch = this.#epoch;
    let fd: number;
    try {
      fd = this.#fd ?? this.#descriptor();
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    fdatasync(fd, (error) => {
      if (epoch !== this.#epoch) {
        // settle() synced these records itself and ran their callbacks; the descriptor may be closed since.
        if (error !== null && error.code !== "EBADF") this.#fail(error);
        return;
      }
      if (error !== null) {
        this.#fail(error);
        return;
      }
      const at = this.#inFlight.indexOf(batch);
      if (at >= 0) for (const done of this.#inFlight.splice(0, at + 1)) this.#ready.push(...done);
      if (this.#waiting.length > 0) this.#startSync();
      this.#drain();
    });
  }

  /** Marks the log failed: nothing waiting is ever called back. `notify` tells the listener (a thrown error is the caller's to report). */
  #fail(error: Error, notify = true): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    this.#unwritten = "";
    this.#waiting = [];
    this.#inFlight = [];
    if (notify) this.#onFailure?.(error);
    for (const done of [...this.#durableWaiters]) done(error);
  }

  /** Makes what was written durable (its callbacks run), then closes the file. Further appends throw. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pool.forget(this);
    this.#encoder.clear();
    this.#closeFd();
  }
}

/**
 * Options of {@link readSessionLog}.
 *
 * @example
 * ```ts
 * const options: ReadSessionLogOptions = { onProblem: (line) => console.error(line) };
 * ```
 */
export interface ReadSessionLogOptions {
  /** Told (one line each) about lines skipped as too long, or deltas whose base was lost. */
  onProblem?: (message: string) => void;
  /** Open through this cache's retry: out of descriptors, it closes idle logs and tries once more. */
  pool?: LogFilePool;
  /**
   * @unit bytes: the longest line read back
   * @defaultValue {@link MAX_LOG_LINE_BYTES}
   */
  maxLineBytes?: number;
}

/** The `"n":` of a record from the first bytes of its line (records start with type, at, n). */
function cursorInHead(head: string): number | undefined {
  const match = /^\{"type":"notification","at":[0-9.e+-]+,"n":([0-9]+),/.exec(head);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Streams the well-formed records of a session log, one line at a time: memory holds one line
 * and the text of the items still open at that point, never the whole log. Unparseable lines (a
 * torn write) are skipped; over-long lines and deltas whose base is gone come out as
 * {@link SkippedRecord}s (and go to `onProblem`). Every `item/updated` comes out whole, as the wire
 * carried it. A missing file yields nothing; a file that is not a regular file throws
 * `UnsafeFileError`. Break out of the loop early and the file is closed.
 *
 * @example
 * ```ts
 * for (const record of readSessionLog(sessionLogPath("/var/muse", sessionId))) {
 *   if (record.type === "notification") console.log(record.n, record.method);
 * }
 * ```
 */
export function* readSessionLog(path: string, options: ReadSessionLogOptions = {}): Generator<SessionLogRecord | SkippedRecord, void, undefined> {
  let fd: number;
  try {
    fd = options.pool === undefined ? openLogFile(path, "read").fd : options.pool.open(path, () => openLogFile(path, "read")).fd;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const skipped: SkippedRecord[] = [];
  const report = (why: string, n?: number) => {
    options.onProblem?.(`${path}: ${why}`);
    skipped.push(n === undefined ? { type: "skipped", why } : { type: "skipped", n, why });
  };
  /** The current value of each open item's growing field, to rebuild deltas. */
  const items = new Map<string, string>();
  try {
    const lines = readLines(fd, {
      maxLineBytes: options.maxLineBytes ?? MAX_LOG_LINE_BYTES,
      onOversize: ({ line, bytes, head }) =>
        report(`line ${line} is ${bytes} bytes, over the ${options.maxLineBytes ?? MAX_LOG_LINE_BYTES}-byte limit: skipped`, cursorInHead(head)),
    });
    for (const line of lines) {
      while (skipped.length > 0) yield skipped.shift() as SkippedRecord;
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // a torn line from a crash mid-write
      }
      if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") continue;
      const record = value as SessionLogRecord;
      if (record.type === "notification" && typeof record.params === "object" && record.params !== null) {
        const item = itemOf(record.params);
        if (item !== undefined) {
          const itemId = item["itemId"] as string;
          const field = growingField(item);
          if (record.delta !== undefined) {
            const base = items.get(itemId);
            const suffix = item[record.delta.field];
            if (base === undefined || base.length !== record.delta.from || typeof suffix !== "string") {
              report(`item/updated ${record.n} of item ${itemId} extends a state that could not be read: skipped`, record.n);
              items.delete(itemId);
              yield skipped.shift() as SkippedRecord;
              continue;
            }
            item[record.delta.field] = base + suffix; // same key, same place: the params serialize as sent
            delete record.delta;
          }
          if (record.method === "item/completed") items.delete(itemId);
          else if (typeof item[field] === "string") items.set(itemId, item[field] as string);
        }
      }
      yield record;
    }
    while (skipped.length > 0) yield skipped.shift() as SkippedRecord;
  } finally {
    closeSync(fd);
  }
}

/**
 * A turn the log shows as accepted but not completed.
 *
 * @example
 * ```ts
 * const summary = summarizeSessionLog(readSessionLog(sessionLogPath("/var/muse", sessionId)));
 * for (const t of summary?.openTurns ?? []) console.error(t.turnId, t.started ? "was running" : "was queued");
 * ```
 */
export interface OpenTurn {
  turnId: string;
  /** @unit milliseconds since the Unix epoch, when it started (or was accepted, if it never started) */
  since: number;
  started: boolean;
}

/**
 * What a session log says about its session: enough to resume it.
 *
 * @example
 * ```ts
 * const summary = summarizeSessionLog(readSessionLog(sessionLogPath("/var/muse", sessionId)));
 * summary?.lastCursor; // 42
 * ```
 */
export interface SessionLogSummary {
  sessionId: string;
  model: string;
  /** The highest cursor sequence logged (0 when none). */
  lastCursor: number;
  /** How many turns have started (the next turn plays script turn `startedTurns`). */
  startedTurns: number;
  /** Every completed turn's terminal params (exactly as sent, with its cursor), by turnId. */
  terminals: Map<string, TurnCompletedParams>;
  /** Every accepted turn's disposition at acceptance, by turnId (completed turns included). */
  accepted: Map<string, "started" | "queued">;
  /** Accepted turns with no `turnCompleted` record, in acceptance order. */
  openTurns: OpenTurn[];
  /** The last logged state of every item started but not completed, by itemId. */
  openItems: Map<string, Item>;
}

/**
 * Folds a session log's records (an array, or the stream {@link readSessionLog} yields) into a
 * {@link SessionLogSummary}, or `undefined` when the log has no `session` record. It keeps only
 * per-turn facts and the open items, not the records.
 *
 * @example
 * ```ts
 * const summary = summarizeSessionLog(readSessionLog(sessionLogPath("/var/muse", sessionId)));
 * if (summary) console.log(summary.openTurns.length, "turns were cut off");
 * ```
 */
export function summarizeSessionLog(records: Iterable<SessionLogRecord | SkippedRecord>): SessionLogSummary | undefined {
  let summary: SessionLogSummary | undefined;
  const open = new Map<string, OpenTurn>();
  for (const r of records) {
    if (r.type === "session") {
      summary = {
        sessionId: r.sessionId,
        model: r.model,
        lastCursor: 0,
        startedTurns: 0,
        terminals: new Map(),
        accepted: new Map(),
        openTurns: [],
        openItems: new Map(),
      };
      continue;
    }
    if (summary === undefined) continue;
    switch (r.type) {
      case "skipped":
        if (r.n !== undefined) summary.lastCursor = Math.max(summary.lastCursor, r.n);
        break;
      case "model":
        summary.model = r.model;
        break;
      case "turnAccepted":
        summary.accepted.set(r.turnId, r.disposition);
        open.set(r.turnId, { turnId: r.turnId, since: r.at, started: false });
        break;
      case "turnStarted": {
        summary.startedTurns += 1;
        const t = open.get(r.turnId);
        if (t !== undefined) {
          t.started = true;
          t.since = r.at;
        }
        break;
      }
      case "turnCompleted":
        open.delete(r.turnId);
        break;
      case "notification": {
        summary.lastCursor = Math.max(summary.lastCursor, r.n);
        const item = r.params["item"] as Item | undefined;
        if (r.method === "item/started" || r.method === "item/updated") {
          if (item !== undefined) summary.openItems.set(item.itemId, item);
        } else if (r.method === "item/completed") {
          if (item !== undefined) summary.openItems.delete(item.itemId);
        } else if (r.method === "turn/completed") {
          const params = r.params as unknown as TurnCompletedParams;
          summary.terminals.set(params.turnId, params);
          open.delete(params.turnId); // the notification alone closes it (crash before the record)
        }
        break;
      }
      default:
        break;
    }
  }
  if (summary !== undefined) summary.openTurns = [...open.values()];
  return summary;
}
