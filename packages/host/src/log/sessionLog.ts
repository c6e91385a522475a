/**
 * The session log's writer: one append-only JSONL file per session, each record made durable
 * (written and `fdatasync`ed, by group commit) before it is acted on. `item/updated` records are
 * logged as deltas (only the text appended since the item's previous logged state), so a log grows
 * with output, not with output squared. Descriptors are opened on demand and held in a bounded
 * cache ({@link LogFilePool}).
 */
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readSync, unlinkSync, writeSync, constants, type Stats } from "node:fs";
import { dirname } from "node:path";
import { LogFilePool } from "./logFilePool.js";
import { NotificationEncoder } from "./notificationEncoder.js";
import { openLogFile } from "./safeFiles.js";
import type { SessionLogRecord } from "./sessionLogRecord.js";

/**
 * How {@link SessionLog.open} treats the file: `create` makes a new one (it must not exist: a
 * planted file or link there is refused), `existing` needs it to exist, `any` (the default)
 * creates it when missing.
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
