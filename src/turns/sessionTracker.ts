/**
 * SessionTracker: what one connection knows of its sessions. Each session's last `viewCursor`,
 * the sessions it follows (sent commands for) or resumed, and the turns it knows. From those it
 * decides, for every notification, whether it follows on from what came before, and whether a
 * terminal is a stray one the host should not have sent this connection.
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import type { AcceptedHook } from "../internal/pendingCommands.js";
import { Commands, Notifications, parseViewCursor, type ItemNotificationParams, type TurnCompletedParams } from "@muse-code/protocol";
import type { RecordedTurns } from "./turnRecorder.js";

/**
 * What to do with a well-formed notification: deliver it or drop it. A `problem` is reported
 * either way (a stray terminal is reported, yet delivered: no waiter may miss a terminal).
 */
export type Admission = { deliver: true; problem?: string | undefined } | { deliver: false; problem: string };

/**
 * Default number of sessions a connection remembers (10 000): each one's last `viewCursor`, and
 * whether it follows the session. About 130 bytes a session: 1.3 MB at most.
 */
export const DEFAULT_SESSION_CAPACITY = 10_000;

/** Capacities of a {@link SessionTracker}. */
export interface SessionTrackerOptions {
  /** How many sessions to remember, least recently active forgotten first. @defaultValue 10 000 */
  sessionCapacity?: number;
  /** How many turns to remember as started, cancelled or seen by this connection, oldest first. @defaultValue 10 000 */
  knownTurnCapacity?: number;
}

/**
 * The session knowledge of one connection. Every table is bounded: a session not heard of for
 * longer than `sessionCapacity` others is forgotten (its next notification is taken as its first,
 * and its terminals are no longer checked as strays), and so is a turn beyond `knownTurnCapacity`.
 */
export class SessionTracker {
  readonly #terminals: RecordedTurns;
  readonly #cursors: BoundedMap<string, { cursor: string; sequence: number | undefined }>;
  readonly #followed: BoundedMap<string, { resumed: boolean }>;
  readonly #knownTurns: BoundedMap<string, true>;

  /** `terminals` tells which turns have ended; the options bound the sessions and turns remembered. */
  constructor(terminals: RecordedTurns, options: SessionTrackerOptions = {}) {
    this.#terminals = terminals;
    const sessionCapacity = options.sessionCapacity ?? DEFAULT_SESSION_CAPACITY;
    this.#cursors = new BoundedMap({ capacity: sessionCapacity, order: "recency" });
    this.#followed = new BoundedMap({ capacity: sessionCapacity, order: "recency" });
    this.#knownTurns = new BoundedMap({ capacity: options.knownTurnCapacity ?? 10_000 });
  }

  /** The last `viewCursor` seen for a session (or the `afterCursor` of its resume). */
  lastViewCursor(sessionId: string): string | undefined {
    return this.#cursors.get(sessionId)?.cursor;
  }

  /**
   * The connection closed: forget what only serves a live connection (followed sessions, known
   * turns). The last cursors stay readable, bounded: a resume on the next connection starts from them.
   */
  close(): void {
    this.#followed.clear();
    this.#knownTurns.clear();
  }

  /**
   * A command is going out. A session it names is followed; a turn it starts or cancels is known.
   * A resume makes every turn of its session legitimate. Its replay starts from `afterCursor`, but
   * only once the host accepts it: the returned step is run then (a refused resume, say a cursor
   * ahead of the host's, must not leave this connection expecting a replay that never comes).
   */
  noteCommand(method: string, params: Record<string, unknown>, commandId: string): AcceptedHook | undefined {
    const sessionId = params["sessionId"];
    if (typeof sessionId !== "string") return undefined;
    const session = this.#followed.get(sessionId) ?? { resumed: false };
    this.#followed.set(sessionId, session);
    if (method === Commands.turnStart) this.#knowTurn(commandId);
    if (method === Commands.turnCancel && typeof params["turnId"] === "string") this.#knowTurn(params["turnId"]);
    if (method === Commands.sessionResume) {
      session.resumed = true;
      // A resume replays from afterCursor: what follows may step back from what this connection saw.
      const afterCursor = params["afterCursor"];
      return () => {
        if (typeof afterCursor === "string") this.#cursors.set(sessionId, { cursor: afterCursor, sequence: parseViewCursor(afterCursor, sessionId) });
        else this.#cursors.delete(sessionId);
      };
    }
    return undefined;
  }

  /**
   * Admit a well-formed notification (its params already checked), in wire order: advance its
   * session's cursor and learn its turn. Consult it before the notification is recorded.
   */
  admit(method: string, params: Record<string, unknown> | undefined): Admission {
    const sessionId = params?.["sessionId"];
    const cursor = params?.["viewCursor"];
    // A notification MSP does not define may carry no session: it has no cursor to check.
    const step = typeof sessionId === "string" && typeof cursor === "string" ? this.#advanceCursor(sessionId, cursor) : "ahead";
    let problem: string | undefined;
    if (step !== "ahead") {
      problem =
        step === "malformed"
          ? `${method}: viewCursor ${JSON.stringify(cursor)} is not a cursor of session ${sessionId as string} (v:<sessionId>:<n>)`
          : `${method}: viewCursor ${cursor as string} does not follow ${this.lastViewCursor(sessionId as string)}`;
      // A terminal this connection has not recorded is news even with an old cursor (a restarted
      // host re-sends a logged turn/completed before its already_terminal): deliver it, so no
      // waiter misses it, and report a malformed cursor all the same. Anything else that
      // repeats, steps back or carries a malformed cursor is reported and dropped.
      const newTerminal = method === Notifications.turnCompleted && this.#terminals.get(params?.["turnId"] as string) === undefined;
      if (!newTerminal) return { deliver: false, problem };
      if (step === "behind") problem = undefined;
    }
    if (method === Notifications.turnCompleted) {
      const terminal = params as unknown as TurnCompletedParams;
      if (problem === undefined && this.#isStray(terminal)) {
        problem = `turn/completed for turn ${terminal.turnId}, which this connection never started, cancelled or saw in session ${terminal.sessionId}`;
      }
    } else {
      // Nothing about a turn follows its turn/completed; anything else about a turn makes it known.
      const turnId =
        method === Notifications.turnStarted || method === Notifications.itemDelta
          ? (params?.["turnId"] as string)
          : method === Notifications.itemStarted || method === Notifications.itemUpdated || method === Notifications.itemCompleted
            ? (params as unknown as ItemNotificationParams).item.turnId
            : undefined;
      if (turnId !== undefined) {
        if (this.#terminals.get(turnId) !== undefined) return { deliver: false, problem: `${method} for turn ${turnId} after its turn/completed` };
        this.#knowTurn(turnId);
      }
    }
    return { deliver: true, problem };
  }

  #knowTurn(turnId: string): void {
    this.#knownTurns.set(turnId, true);
  }

  /** True when this terminal is one the host should not have sent: a followed, never-resumed session's unknown turn. */
  #isStray(terminal: TurnCompletedParams): boolean {
    const session = this.#followed.get(terminal.sessionId);
    return session !== undefined && !session.resumed && !this.#knownTurns.has(terminal.turnId);
  }

  /**
   * Track the session's viewCursor: `"ahead"` when it strictly increases (or is the session's
   * first), `"behind"` for a repeat or a step back, `"malformed"` when it is not MSP's
   * `v:<sessionId>:<n>` for this session. Only an `"ahead"` cursor is kept.
   */
  #advanceCursor(sessionId: string, cursor: string): "ahead" | "behind" | "malformed" {
    const sequence = parseViewCursor(cursor, sessionId);
    if (sequence === undefined) return "malformed";
    const last = this.#cursors.get(sessionId);
    // After a resume from a cursor that does not parse, the first well-formed cursor starts afresh.
    if (last !== undefined && last.sequence !== undefined && sequence <= last.sequence) return "behind";
    // The session's entry is updated in place: no object a notification.
    if (last !== undefined) {
      last.cursor = cursor;
      last.sequence = sequence;
    }
    this.#cursors.set(sessionId, last ?? { cursor, sequence });
    return "ahead";
  }
}
