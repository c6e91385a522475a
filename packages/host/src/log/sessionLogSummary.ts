/** The session log's summary: what a log says about its session, enough to load or recover it. */
import { foldItem, isObject, type ApprovalGrant, type Item, type TurnCompletedParams } from "@muse-code/protocol";
import { MAX_GRANTS_PER_SESSION } from "../agent/sessionGrants.js";
import type { SessionLogRecord, SkippedRecord } from "./sessionLogRecord.js";
import type { CarriedSteer } from "../agent/steeringInbox.js";

/** A turn the log shows as accepted but not completed. */
export interface OpenTurn {
  turnId: string;
  /** @unit milliseconds since the Unix epoch, when it started (or was accepted, if it never started) */
  since: number;
  started: boolean;
}

/** What a session log says about its session: enough to resume it. */
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
  /** The session's grants (`approveForSession` answers), oldest first, at most {@link MAX_GRANTS_PER_SESSION}. */
  grants: ApprovalGrant[];
  /** Every accepted `turn/steer`: its turnId by steerId (from its first steering item). */
  steers: Map<string, string>;
  /** Steering carried over (`carriedOver: true`) that no later turn has begun with yet, in order. */
  carriedSteers: CarriedSteer[];
  /** For a subagent's session: the session its turn's `turn/started.parent` names. */
  parentSessionId?: string;
  /**
   * For a subagent's session: each turn's last completed message text (not steering),
   * by turnId, so a restart can close the delegating call with the child's work, not empty. A
   * subagent's session runs one turn, so this holds one string.
   */
  lastMessages?: Map<string, string>;
  /** The highest host-order stamp `h` logged (0 when none). */
  lastOrder: number;
}

/**
 * Folds a session log's records (an array, or the stream {@link readSessionLog} yields) into a
 * {@link SessionLogSummary}, or `undefined` when the log has no `session` record. It keeps only
 * per-turn facts and the open items, not the records.
 */
export function summarizeSessionLog(records: Iterable<SessionLogRecord | SkippedRecord>): SessionLogSummary | undefined {
  let summary: SessionLogSummary | undefined;
  const open = new Map<string, OpenTurn>();
  const carried = new Map<string, CarriedSteer>();
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
        grants: [],
        steers: new Map(),
        carriedSteers: [],
        lastOrder: 0,
      };
      carried.clear();
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
      case "grant":
        if (summary.grants.length < MAX_GRANTS_PER_SESSION) summary.grants.push({ ...r.grant });
        break;
      case "notification": {
        summary.lastCursor = Math.max(summary.lastCursor, r.n);
        if (typeof r.h === "number" && r.h > summary.lastOrder) summary.lastOrder = r.h;
        const parent = r.method === "turn/started" ? r.params["parent"] : undefined;
        if (isObject(parent) && typeof parent["sessionId"] === "string") summary.parentSessionId = parent["sessionId"];
        const item = r.params["item"] as Item | undefined;
        if (r.method === "item/started" && item?.kind === "message" && typeof item.steerId === "string") {
          if (!summary.steers.has(item.steerId)) summary.steers.set(item.steerId, item.turnId);
          else carried.delete(item.steerId); // a later turn began with it
        }
        if (r.method === "item/completed" && item?.kind === "message" && item.steerId === undefined && summary.parentSessionId !== undefined) {
          (summary.lastMessages ??= new Map()).set(item.turnId, item.text);
        }
        if (r.method === "item/completed" && item?.kind === "message" && item.carriedOver === true && typeof item.steerId === "string") {
          carried.set(item.steerId, { steerId: item.steerId, text: item.text });
        }
        if (r.method === "item/started" || r.method === "item/updated" || r.method === "item/delta") {
          // Folded as a client folds it: a delta appends, a patch changes only what it names.
          const itemId = r.method === "item/delta" ? String(r.params["itemId"]) : item?.itemId;
          if (itemId !== undefined) {
            const folded = foldItem(summary.openItems.get(itemId), r.method, r.params);
            if (typeof folded === "object") summary.openItems.set(itemId, folded);
          }
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
  if (summary !== undefined) {
    summary.openTurns = [...open.values()];
    summary.carriedSteers = [...carried.values()];
  }
  return summary;
}
