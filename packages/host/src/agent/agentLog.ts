/**
 * A session agent's writes to its log: the first failure is recorded and reported once, and
 * nothing is written after it (a notification is never sent unless it is durable).
 */
import { LogUnavailableError } from "../log/logFilePool.js";
import type { SessionLog } from "../log/sessionLog.js";
import type { SessionLogRecord } from "../log/sessionLogRecord.js";

/** Writes a session's records; after the first failure, writes nothing more. */
export class AgentLog {
  readonly #log: SessionLog;
  readonly #onFailure: (error: Error) => void;
  #failure: Error | undefined;

  /** Writes to `log`; `onFailure` is called once, synchronously, when a write or sync fails. */
  constructor(log: SessionLog, onFailure: (error: Error) => void) {
    this.#log = log;
    this.#onFailure = onFailure;
    log.onFailure((error) => this.#fail(error));
  }

  /** The error of the session-log write that failed, if one did. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Appends durably; on failure records it, reports it once, and returns false. */
  append(record: SessionLogRecord): boolean {
    if (this.#failure !== undefined) return false;
    try {
      this.#log.append(record);
      return true;
    } catch (error) {
      this.#fail(error);
      return false;
    }
  }

  /**
   * Writes now and runs `onDurable` once the record is synced (group commit: one fdatasync for
   * every record written in the same event-loop turn). On a failed write, records it, reports it
   * once, and returns false; a failed sync is reported through the log's failure listener.
   */
  write(record: SessionLogRecord, onDurable?: (wireJson?: string) => void): boolean {
    if (this.#failure !== undefined) return false;
    try {
      this.#log.write(record, onDurable);
      return true;
    } catch (error) {
      this.#fail(error);
      return false;
    }
  }

  /**
   * Makes everything written durable now and sends what waited on it, so whatever the caller does
   * next (answer a command, ask a question) comes after it on the wire.
   */
  settle(): void {
    if (this.#failure !== undefined) return;
    try {
      this.#log.settle();
    } catch (error) {
      this.#fail(error);
    }
  }

  /** Records the first failure and reports it once. */
  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = error instanceof Error ? error : new Error(String(error));
    this.#onFailure(this.#failure);
  }

  /**
   * Appends durably for a command. When no descriptor was free to open the log
   * ({@link LogUnavailableError}), nothing was written: the error is thrown as it is, the command
   * fails, and the session goes on. Any other failure fails the session's log.
   */
  appendOrThrow(record: SessionLogRecord): void {
    if (this.#failure === undefined) {
      try {
        this.#log.append(record);
        return;
      } catch (error) {
        if (error instanceof LogUnavailableError) throw error;
        this.#fail(error);
      }
    }
    throw new Error(`session log ${this.#log.path} failed: ${this.#failure?.message ?? "unknown error"}`);
  }
}
