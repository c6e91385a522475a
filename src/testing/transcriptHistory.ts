/**
 * SessionHistory: what checkTranscript remembers across a transcript's parts (turns accepted and
 * ended, items open and completed and folded, sessions and cursors, approval gates, cancels sent).
 */
import type { Item } from "@muse-code/protocol";
import { SteeringHistory } from "./steeringInvariant.js";

/**
 * What checkTranscript holds of one item: the item folded so far (`held`), nothing because the
 * transcript began after the item did (`unknown`: its deltas and patches cannot be checked, and
 * are not), or nothing more because a problem was reported (`broken`: one problem per broken
 * chain, not one per later link).
 */
export interface ItemChain {
  state: "held" | "unknown" | "broken";
  /** The item folded so far (`held` only). */
  item?: Item;
  /** The highest revision seen of an `unknown` item: a later link at or below it is a repeat or a step back even unfolded. */
  revision?: number;
  /** Where its latest notification was (`line <n>`). */
  at: string;
}

/**
 * Session-level state, which survives a reconnection (`<name>.2.jsonl` continues `<name>.jsonl`);
 * JSON-RPC ids are per connection and reset with each part.
 */
export class SessionHistory {
  /** turnId -> where it was accepted ("part line n" text). */
  readonly accepted = new Map<string, { at: string; part: number }>();
  /** turnId -> where its turn/completed was, its terminal, and its params. */
  readonly terminals = new Map<string, { at: string; terminal: unknown; params?: Record<string, unknown> }>();
  /** itemId -> the open item/started. */
  readonly openItems = new Map<string, { turnId: string; at: string; part: number }>();
  readonly completedItems = new Map<string, string>();
  /** itemId -> the item folded from its notifications so far (MSP 2.0: invariants A and B). */
  readonly chains = new Map<string, ItemChain>();
  /**
   * sessionId -> whether the transcript holds every item of the session that a delta or patch may
   * name: true when it saw the session from its start (created here, or its first notification has
   * cursor 1) or from a `session/resume` answer that lists its items in progress; false when the
   * transcript joined it mid-session.
   */
  readonly sessions = new Map<string, boolean>();
  /** Turns the transcript saw begin (`turn/started`): their items all start in it. */
  readonly turnsBegun = new Set<string>();
  /** sessionId -> last viewCursor and where. */
  readonly cursors = new Map<string, { cursor: string; at: string }>();
  /**
   * itemId -> the approval gate of a tool call whose item was once `approval: "pending"`: its
   * latest approval state, and whether the client answered `approve` while it was pending (only
   * then may the call run: invariant 6) or answered it otherwise (`refused`).
   */
  readonly gates = new Map<string, { approval: string; at: string; approved: boolean; refused?: boolean }>();
  /**
   * sessionId -> grantId -> its rule (`[tool, args, match]` as JSON) and the item that first named
   * it: a grant belongs to one session and keeps one rule (invariant 6).
   */
  readonly grants = new Map<string, Map<string, { rule: string; at: string }>>();
  /**
   * itemId -> the rule (`[tool, args, match]` as JSON) its pending question offered in `grant`,
   * once the client answered it `approveForSession` (no rule when the question stated none): only
   * such an item may first name a new grant.
   */
  readonly grantOffers = new Map<string, { rule?: string; at: string }>();
  /** Sessions the transcript saw from their start (a `session/create` answer, or cursor 1): every grant of theirs is in it. */
  readonly sessionsFromStart = new Set<string>();
  /**
   * turnId -> where the client answered `denyAndStop` to a pending question of it, and the tool
   * calls of the turn started after that answer: the turn ends `cancelled`, cause `user`, and none
   * of those calls shows output or completes `completed`.
   */
  readonly stopAnswers = new Map<string, { at: string; laterCalls: Set<string> }>();
  /** Tool calls whose grant's coverage was checked (once per item). */
  readonly grantedItems = new Set<string>();
  /** Turns the client has sent `turn/cancel` for: their open questions are withdrawn, so a later `approve` runs nothing. */
  readonly cancelSent = new Set<string>();
  /** turnId -> where the host accepted the client's `turn/cancel` of it: a `cancelled` terminal of that turn is the user's (`cause.kind: "user"`). */
  readonly cancelAccepted = new Map<string, string>();
  /**
   * The sessions the connection being checked created (a `session/create` answer) or resumed (a
   * `session/resume` it sent, until the host rejects it); each part is a new connection, so each
   * part starts with none. `undefined` while the foreign-session rule is off: the part begins on a
   * connection already in use (`beginsMidSession`).
   */
  connectionSessions: Set<string> | undefined = new Set();
  /**
   * The turns the connection being checked sent `turn/cancel` for: a host may send such a turn's
   * `turn/completed` to it even when the connection did not resume the session, since an
   * `already_terminal` answer must follow the terminal on the wire (invariant 4).
   */
  connectionCancels = new Set<string>();
  /**
   * The part being checked begins mid-session (`CheckTranscriptOptions.beginsMidSession`, first
   * part only): an item of a session joined mid-way may lack its `item/started`.
   */
  midSession = false;
  /**
   * The transcript has gaps (`CheckTranscriptOptions.gaps`): lines may be left out anywhere, so
   * only what the lines shown contradict is a problem, never what a left-out line could supply
   * (docs/protocol.md, "Checking transcripts and excerpts").
   */
  gaps = false;
  /** The notes of the part being checked: what is not a problem but worth saying (each `line <n>: …`). */
  notes: string[] = [];
  /**
   * turnId -> where an `already_terminal` rejection of it came before any `turn/completed` of it in
   * a transcript with gaps (its terminal may be left out before it): a `turn/completed` of that turn after it
   * contradicts invariant 4.
   */
  readonly earlyRejections = new Map<string, string>();
  /** Steering and the inbox (MSP 2.1, invariant S). */
  readonly steering = new SteeringHistory();
  /** The subagent links and child turns seen (invariant 7; checked by subagentInvariant). */
  readonly subagents = new SubagentHistory();
}

/**
 * What checkTranscript remembers of subagent trees across a transcript's parts: each
 * link from a delegating tool call to its child turn, each turn's place in its tree, and the
 * `cause.kind: "parent"` terminals still waiting for their parent's terminal.
 */
export class SubagentHistory {
  /** child turnId -> the `subagent` link that named it: the child's session, the delegating item, its turn and session, and where. */
  readonly links = new Map<string, { sessionId: string; parentSessionId: string; parentTurnId: string; itemId: string; at: string }>();
  /** parent turnId -> child turnId -> where the child was linked or started: each must end before the parent (invariant 7). */
  readonly children = new Map<string, Map<string, string>>();
  /** turnId -> its depth (0 for a top-level turn) and parent turn, from its `turn/started`. */
  readonly turns = new Map<string, { depth: number; parentTurnId?: string }>();
  /** child sessionId -> the session it is linked below. */
  readonly sessionParents = new Map<string, string>();
  /** parent turnId -> the child turns that ended cancelled with cause `parent` before it ended, and where. */
  readonly parentCauses = new Map<string, Array<{ turnId: string; at: string }>>();
}
