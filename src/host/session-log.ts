/** The session log: one append-only JSONL file per session, each record made durable before it is acted on. */
import { closeSync, existsSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, fstatSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CancelCause, Item, NotificationMethod, Terminal, TurnCompletedParams, TurnInput } from "../protocol/index.js";

/**
 * One line of a session log. `at` is milliseconds since the Unix epoch. `notification` records
 * carry the exact params sent on the wire, with their cursor sequence `n`.
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
  | { type: "notification"; at: number; n: number; method: NotificationMethod; params: Record<string, unknown> };

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
 * An open session log. `append` writes one record and `fdatasync`s it before returning, so a
 * notification is durable before it reaches the wire.
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
  #fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
  }

  /** Opens (creating if needed) the log at `path` for appending. */
  static open(path: string): SessionLog {
    mkdirSync(dirname(path), { recursive: true });
    const created = !existsSync(path);
    const fd = openSync(path, "a+");
    if (created) {
      // Make the new directory entry itself durable, not just the file's contents.
      try {
        const dir = openSync(dirname(path), "r");
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    }
    // A crash can leave a torn last line; start our first record on a fresh line.
    const size = fstatSync(fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) writeSync(fd, "\n");
    }
    return new SessionLog(path, fd);
  }

  /** Appends `record` durably (write + fdatasync). */
  append(record: SessionLogRecord): void {
    if (this.#fd === undefined) throw new Error(`session log ${this.path} is closed`);
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, "utf8");
    // A short write (e.g. a file-size limit) is retried until it completes or throws.
    for (let at = 0; at < bytes.length;) at += writeSync(this.#fd, bytes, at, bytes.length - at);
    fdatasyncSync(this.#fd);
  }

  /** Closes the file. Further appends throw. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/**
 * Reads every well-formed record of a session log. Unparseable lines (a torn write) are skipped.
 *
 * @example
 * ```ts
 * const records = readSessionLog(sessionLogPath("/var/muse", sessionId));
 * ```
 */
export function readSessionLog(path: string): SessionLogRecord[] {
  if (!existsSync(path)) return [];
  const records: SessionLogRecord[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string") {
        records.push(value as SessionLogRecord);
      }
    } catch {
      // a torn line from a crash mid-write
    }
  }
  return records;
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
 * Folds a session log's records into a {@link SessionLogSummary}, or `undefined` when the log has
 * no `session` record.
 *
 * @example
 * ```ts
 * const summary = summarizeSessionLog(readSessionLog(sessionLogPath("/var/muse", sessionId)));
 * if (summary) console.log(summary.openTurns.length, "turns were cut off");
 * ```
 */
export function summarizeSessionLog(records: readonly SessionLogRecord[]): SessionLogSummary | undefined {
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
