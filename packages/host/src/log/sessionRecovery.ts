/** Restart recovery: closes every turn a crashed host left open in its session logs, as "failed: host restarted". */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Item, TurnCompletedParams } from "@muse-code/protocol";
import { readSessionLog } from "./sessionLogReader.js";
import { SessionLog } from "./sessionLog.js";
import { summarizeSessionLog, type SessionLogSummary } from "./sessionLogSummary.js";
import type { LogFilePool } from "./logFilePool.js";
import type { SessionLogRecord } from "./sessionLogRecord.js";
import { UnsafeFileError } from "./safeFiles.js";
import type { HostOrder } from "./hostOrder.js";
import { formatViewCursor } from "@muse-code/protocol/cursor.js";
import { HOST_RESTARTED_REASON } from "@muse-code/protocol/reasons.js";

/**
 * What recovery did to one session.
 *
 * @example
 * ```ts
 * const models = new Map([["default", loadScriptedModel(exampleModelPath("hello"), "default")]]);
 * const host = createHost({ models, defaultModel: "default", dataDir: "/var/muse" }); // recovers on construction
 * const recovered: readonly RecoveredSession[] = host.recovered;
 * for (const s of recovered) console.error(`closed ${s.closedTurns.length} turn(s) of ${s.sessionId} as "${HOST_RESTARTED_REASON}"`);
 * ```
 */
export interface RecoveredSession {
  sessionId: string;
  /** Turns closed with `failed: host restarted`, in acceptance order. */
  closedTurns: string[];
  /** Items closed with status `failed`. */
  closedItems: string[];
}

function failedItem(item: Item, recordedAt: string, childOutput: ReadonlyMap<string, string>): Item {
  const base = { ...item, revision: item.revision + 1, status: "failed" as const, recordedAt };
  if (base.kind === "toolCall") {
    // A question the restart cut off is withdrawn: the call never ran, and nobody is asked again.
    const approval = base.approval === "pending" ? { approval: "cancelled" as const } : {};
    // A delegating call keeps what its subagent said so far (its session was closed first).
    const said = base.subagent !== undefined && base.visibleOutput === "" ? childOutput.get(base.subagent.turnId) : undefined;
    return { ...base, ...approval, ...(said === undefined ? {} : { visibleOutput: said }), failureReason: HOST_RESTARTED_REASON };
  }
  // Steering input the restart cut off was never taken in: closed as failed, its text whole.
  if (base.kind === "message" && base.steerId !== undefined) return { ...base, failureReason: HOST_RESTARTED_REASON };
  return { ...base, interrupted: true };
}

/** Options of {@link recoverSessions}. */
export interface RecoverSessionsOptions {
  /** The descriptor cache to open logs through (default: a private one). */
  pool?: LogFilePool;
  /** Told, one line each, about entries skipped (not a regular file, unreadable) and lines skipped in a log. */
  logger?: (line: string) => void;
  /** Told every subagent link found: session `child` was created below session `parent`. */
  onLink?: (parent: string, child: string) => void;
  /**
   * The host order: it is told the highest `h` of every log, and the closings recovery
   * appends are stamped from it, leaves first. Without it they carry no `h`.
   */
  order?: HostOrder;
}

/**
 * Scans `<dataDir>/sessions/*.jsonl`, streaming each log (memory does not grow with a log's size).
 * In each log, every item started but not completed gets an `item/completed` (status `failed`),
 * and every turn accepted but not completed gets a
 * `turn/completed {terminal: "failed", reason: "host restarted"}`, appended as notifications with
 * fresh cursors, so a client that resumes sees them in the replay. An entry that is not a regular
 * file (a symlink, FIFO, device, directory or hard link), cannot be read, or names another session
 * is reported to `logger` and skipped: it never blocks startup and is never written to.
 */
export function recoverSessions(dataDir: string, options: RecoverSessionsOptions = {}): RecoveredSession[] {
  const dir = join(dataDir, "sessions");
  if (!existsSync(dir)) return [];
  const report = options.logger ?? (() => {});
  const recovered: RecoveredSession[] = [];
  // First every log is read; then the open ones are closed, a subagent's session before its
  // parent's (leaves first, so a child's terminal precedes its parent's).
  const parents = new Map<string, string>();
  const toClose: Array<{ name: string; path: string; summary: SessionLogSummary }> = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".jsonl")) continue;
    const path = join(dir, name);
    let summary: SessionLogSummary | undefined;
    try {
      summary = summarizeSessionLog(readSessionLog(path, options.pool === undefined ? { onProblem: report } : { onProblem: report, pool: options.pool }));
    } catch (error) {
      report(`skipping sessions/${name}: ${error instanceof UnsafeFileError ? `it is ${error.why}` : (error as Error).message}`);
      continue;
    }
    if (summary !== undefined && `${summary.sessionId}.jsonl` !== name) {
      report(`skipping sessions/${name}: it is the log of session ${summary.sessionId}`);
      continue;
    }
    if (summary !== undefined) options.order?.seen(summary.lastOrder);
    if (summary?.parentSessionId !== undefined) parents.set(summary.sessionId, summary.parentSessionId);
    if (summary === undefined || (summary.openTurns.length === 0 && summary.openItems.size === 0)) continue;
    toClose.push({ name, path, summary });
  }
  /** How deep a session is below its tree's root (bounded by the number of links: a cycle stops). */
  const depthOf = (sessionId: string): number => {
    let depth = 0;
    for (let at = parents.get(sessionId); at !== undefined && depth <= parents.size; at = parents.get(at)) depth++;
    return depth;
  };
  for (const [child, parent] of parents) options.onLink?.(parent, child);
  const order = toClose.map((entry) => ({ ...entry, depth: depthOf(entry.summary.sessionId) })).sort((a, b) => b.depth - a.depth);
  /** A closed subagent turn's last message, by turnId: its delegating call (closed later) keeps it. */
  const childOutput = new Map<string, string>();
  for (const { name, path, summary } of order) {
    let log: SessionLog;
    try {
      log = options.pool === undefined ? SessionLog.open(path, { mode: "existing" }) : SessionLog.open(path, { mode: "existing", pool: options.pool });
    } catch (error) {
      report(`skipping sessions/${name}: ${error instanceof UnsafeFileError ? `it is ${error.why}` : (error as Error).message}`);
      continue;
    }
    const { sessionId } = summary;
    let n = summary.lastCursor;
    const now = Date.now();
    const recordedAt = new Date(now).toISOString();
    const result: RecoveredSession = { sessionId, closedTurns: [], closedItems: [] };
    const note = (method: "item/completed" | "turn/completed", body: Record<string, unknown>): Record<string, unknown> => {
      n += 1;
      const params = { sessionId, viewCursor: formatViewCursor(sessionId, n), emittedAtMs: now, ...body };
      const h = options.order?.next();
      const record: SessionLogRecord =
        h === undefined ? { type: "notification", at: now, n, method, params } : { type: "notification", at: now, n, h, method, params };
      log.append(record);
      return params;
    };
    try {
      const openTurnIds = new Set(summary.openTurns.map((t) => t.turnId));
      // Items of turns that were closed already cannot be open; close any stray ones first anyway.
      const items = [...summary.openItems.values()];
      for (const item of items.filter((i) => !openTurnIds.has(i.turnId))) {
        note("item/completed", { item: failedItem(item, recordedAt, childOutput) });
        result.closedItems.push(item.itemId);
      }
      for (const turn of summary.openTurns) {
        for (const item of items.filter((i) => i.turnId === turn.turnId)) {
          note("item/completed", { item: failedItem(item, recordedAt, childOutput) });
          result.closedItems.push(item.itemId);
        }
        const body: Omit<TurnCompletedParams, "sessionId" | "viewCursor" | "emittedAtMs"> = {
          turnId: turn.turnId,
          terminal: "failed",
          reason: HOST_RESTARTED_REASON,
          durationMs: Math.max(0, now - turn.since),
        };
        if (summary.parentSessionId !== undefined) {
          // Its last message: the one the restart cut off (folded as far as it was logged), else the last completed.
          const cut = items.filter((i) => i.turnId === turn.turnId && i.kind === "message" && i.steerId === undefined).at(-1);
          const said = cut?.kind === "message" ? cut.text : summary.lastMessages?.get(turn.turnId);
          if (said !== undefined) childOutput.set(turn.turnId, said);
        }
        note("turn/completed", { ...body });
        log.append({ type: "turnCompleted", at: now, turnId: turn.turnId, terminal: "failed", reason: HOST_RESTARTED_REASON });
        result.closedTurns.push(turn.turnId);
      }
    } finally {
      log.close();
    }
    recovered.push(result);
  }
  return recovered;
}
