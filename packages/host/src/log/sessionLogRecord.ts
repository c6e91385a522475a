/** The session log's record schema: the lines of a session-log file, and where that file lives. */
import { join } from "node:path";
import type { ApprovalGrant, ApprovalState, CancelCause, NotificationMethod, Terminal, TurnInput, TurnUsage } from "@muse-code/protocol";

/**
 * One line of a session log. `at` is milliseconds since the Unix epoch. `notification` records
 * carry the exact params sent on the wire, with their cursor sequence `n` and their
 * place `h` in the host order, one sequence across every session of the data dir (see `HostOrder`). On disk, an
 * `item/updated` may carry `delta`: then its item's `delta.field` holds only the text appended to
 * the item's previous logged state, which was `delta.from` characters long; {@link readSessionLog}
 * puts the whole text back.
 */
export type SessionLogRecord =
  | { type: "session"; at: number; sessionId: string; model: string }
  | { type: "model"; at: number; model: string; previousModel: string }
  | { type: "turnAccepted"; at: number; turnId: string; input: TurnInput[]; disposition: "started" | "queued" }
  | { type: "turnStarted"; at: number; turnId: string; turn: number }
  | { type: "cancelRequested"; at: number; turnId: string; cause: CancelCause; keepInbox: boolean }
  | { type: "turnCompleted"; at: number; turnId: string; terminal: Terminal; reason: string; cause?: CancelCause; usage?: TurnUsage }
  | ApprovalRecord
  | GrantRecord
  | { type: "notification"; at: number; n: number; h?: number; method: NotificationMethod; params: Record<string, unknown>; delta?: ItemDelta };

/**
 * A tool call's approval question changed state: asked (`pending`), answered (`approved`,
 * `denied`) or withdrawn (`cancelled`). Logged durably before the change is acted on, beside the
 * `item/updated` that carries it to the clients; `reason` is the client's reason, or why its
 * answer could not be read (then `invalid` is true).
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
  /** The session grant that approved the call (the one its answer created, or an earlier one that covered it). */
  grantId?: string;
}

/**
 * A session grant, recorded when the client answered `approveForSession` to the question about
 * call `callId` (item `itemId`), durably before that call runs: a restarted host reads it back,
 * and a later call it covers is approved without a question.
 */
export interface GrantRecord {
  type: "grant";
  at: number;
  turnId: string;
  itemId: string;
  callId: string;
  grant: ApprovalGrant;
}

/**
 * How an on-disk `item/updated` record is coalesced: its item's `field` holds only what was
 * appended to the `from` characters (UTF-16 code units) of the item's previous logged state.
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
 */
export interface SkippedRecord {
  type: "skipped";
  /** The cursor sequence of the lost notification, when its line showed one. */
  n?: number;
  why: string;
}

/** The path of a session's log under a data directory: `<data>/sessions/<sessionId>.jsonl`. */
export function sessionLogPath(dataDir: string, sessionId: string): string {
  return join(dataDir, "sessions", `${sessionId}.jsonl`);
}
