/**
 * checkTranscript's invariant S (MSP 2.1, steering and the inbox): every accepted `turn/steer` has
 * its `message` item (`steerId`) started before its turn's terminal, and the item ends consumed
 * (`completed`), discarded (`cancelled` and listed in its turn's `inbox/cancelled`) or carried over
 * (`cancelled`, `carriedOver: true`, and started again in the session's next turn); a splice comes
 * before its turn's terminal, at most one per default `turn/cancel` and none for a `keepInbox` one,
 * and lists exactly what was discarded.
 */

/** Where a fact was seen: the `line <n>` text of the transcript. */
type At = string;

/** What checkTranscript remembers of a transcript's steering, across its parts. */
export class SteeringHistory {
  /** steerId -> the turn an accepted `turn/steer` named, and where it was answered. */
  readonly accepted = new Map<string, { turnId: string; at: At; part: number }>();
  /** steerIds whose steering item started, by turnId. */
  readonly started = new Map<string, Set<string>>();
  /** turnId -> its `inbox/cancelled` splices: where, and the steerIds and turnIds each listed. */
  readonly splices = new Map<string, Array<{ at: At; steerIds: string[]; turnIds: string[] }>>();
  /** turnId -> how many default and `keepInbox` `turn/cancel`s the client sent for it. */
  readonly cancels = new Map<string, { plain: number; keep: number }>();
  /** turnId -> where a default `turn/cancel` of it was accepted while it ran (after its `turn/started`, before its terminal). */
  readonly cancelledRunning = new Map<string, At>();
  /** sessionId -> carried-over steerIds waiting for the session's next turn, with where each was carried. */
  readonly carried = new Map<string, Array<{ steerId: string; at: At }>>();
  /** turnId -> the carried-over steerIds it must begin with. */
  readonly expecting = new Map<string, Array<{ steerId: string; at: At }>>();
  /** steerIds whose item completed cancelled as discarded (no `carriedOver`), with where and the turn it belonged to. */
  readonly discarded = new Map<string, { at: At; turnId: string }>();
  /**
   * turnId -> where a splice came that no default `turn/cancel` or `denyAndStop` of this
   * connection asked for. Its terminal's cause tells whether something did: `user` (a Stop sent
   * on another connection, seen live or replayed by a resume), `disposed` (a shutdown) or `parent`
   * (a parent's cancel carried down); `hook`, or no cause, means nothing asked for it.
   */
  readonly unasked = new Map<string, At>();
  /** sessionId -> the turn whose splice came and whose terminal has not yet: a queued turn discarded meanwhile is listed in it. */
  readonly openSplices = new Map<string, string>();
  /** Turns with a discarded steering item no splice listed (already reported: their terminal does not report the missing splice again). */
  readonly unlisted = new Set<string>();
}

/** The terminals checkTranscript has seen, by turnId. */
type Terminals = ReadonlyMap<string, { at: string; terminal: unknown }>;

/** A `turn/cancel` the client sent: counted per turn, default or `keepInbox`. */
export function noteCancelSent(steering: SteeringHistory, turnId: string, keepInbox: unknown): void {
  const counts = steering.cancels.get(turnId) ?? { plain: 0, keep: 0 };
  if (keepInbox === true) counts.keep += 1;
  else counts.plain += 1;
  steering.cancels.set(turnId, counts);
}

/** A default `turn/cancel` accepted at `here`: while its turn runs, a splice must come before the terminal (once the session steered). */
export function noteCancelAccepted(steering: SteeringHistory, turnId: string, keepInbox: unknown, running: boolean, here: At): void {
  if (keepInbox !== true && running && !steering.cancelledRunning.has(turnId)) steering.cancelledRunning.set(turnId, here);
}

/** An accepted `turn/steer` of `turnId` (answered at `here`): its turn must not have ended. */
export function noteSteerAccepted(
  steering: SteeringHistory,
  steerId: string,
  turnId: string,
  here: At,
  part: number,
  terminals: Terminals,
  say: (p: string) => void,
): void {
  const ended = terminals.get(turnId);
  if (ended !== undefined) say(`turn/steer ${steerId} accepted for turn ${turnId} after its turn/completed at ${ended.at} (invariant S)`);
  if (!steering.accepted.has(steerId)) steering.accepted.set(steerId, { turnId, at: here, part });
}

/** A `turn/started` in `sessionId`: the session's carried-over steering must start in this turn. */
export function noteTurnStarted(steering: SteeringHistory, sessionId: string, turnId: string): void {
  const carried = steering.carried.get(sessionId);
  if (carried === undefined || carried.length === 0) return;
  steering.carried.delete(sessionId);
  steering.expecting.set(turnId, carried);
}

/** The `item/started` of a steering `message` (one with a `steerId`). */
export function noteSteeringStarted(steering: SteeringHistory, item: Record<string, unknown>): void {
  const steerId = item["steerId"];
  const turnId = item["turnId"];
  if (typeof steerId !== "string" || typeof turnId !== "string") return;
  const set = steering.started.get(turnId) ?? new Set<string>();
  set.add(steerId);
  steering.started.set(turnId, set);
  const expecting = steering.expecting.get(turnId);
  if (expecting !== undefined)
    steering.expecting.set(
      turnId,
      expecting.filter((e) => e.steerId !== steerId),
    );
}

/** The `item/completed` of a steering `message`: consumed, discarded (listed in a splice first) or carried over. */
export function noteSteeringCompleted(steering: SteeringHistory, sessionId: string, item: Record<string, unknown>, here: At, say: (p: string) => void): void {
  const steerId = item["steerId"];
  const turnId = item["turnId"];
  if (typeof steerId !== "string" || typeof turnId !== "string") return;
  const carriedOver = item["carriedOver"] === true;
  if (item["status"] === "failed" && item["failureReason"] !== "host restarted") {
    say(
      `steering item of ${steerId} completes "failed" with failureReason ${JSON.stringify(item["failureReason"])}: steering ends consumed, discarded or carried over, or "failed" only as "host restarted" (invariant S)`,
    );
  }
  if (carriedOver && item["status"] !== "cancelled") {
    say(
      `steering item of ${steerId} completes ${JSON.stringify(item["status"])} with carriedOver: true; carried-over steering completes "cancelled" (invariant S)`,
    );
  }
  if (item["status"] !== "cancelled") return;
  if (carriedOver) {
    const list = steering.carried.get(sessionId) ?? [];
    list.push({ steerId, at: here });
    steering.carried.set(sessionId, list);
    return;
  }
  steering.discarded.set(steerId, { at: here, turnId });
  const listed = (steering.splices.get(turnId) ?? []).some((s) => s.steerIds.includes(steerId));
  if (!listed) {
    steering.unlisted.add(turnId);
    say(
      `steering item of ${steerId} completes "cancelled" without carriedOver, but no inbox/cancelled of turn ${turnId} before it lists it: discarded steering is listed in its turn's splice (invariant S)`,
    );
  }
}

/** An `inbox/cancelled` splice of `turnId`, at `here`. */
export function noteSplice(steering: SteeringHistory, params: Record<string, unknown>, here: At, terminals: Terminals, say: (p: string) => void): void {
  const turnId = String(params["turnId"]);
  const discarded = params["discarded"] as Record<string, unknown>;
  const ids = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
  const splice = { at: here, steerIds: ids(discarded["steerIds"]), turnIds: ids(discarded["turnIds"]) };
  const ended = terminals.get(turnId);
  if (ended !== undefined)
    say(`inbox/cancelled for turn ${turnId} after its turn/completed at ${ended.at}: the splice comes before the terminal (invariant S)`);
  const earlier = steering.splices.get(turnId) ?? [];
  const cancels = steering.cancels.get(turnId);
  if (cancels !== undefined && cancels.plain === 0 && cancels.keep > 0) {
    say(`inbox/cancelled for turn ${turnId}, whose turn/cancel kept the inbox (keepInbox: true): a keepInbox cancel records no splice (invariant S)`);
  } else if (earlier.length > (cancels?.plain ?? 0)) {
    say(`a second inbox/cancelled for turn ${turnId} (the first at ${earlier[0]?.at ?? "?"}): at most one per default turn/cancel (invariant S)`);
  } else if (earlier.length === (cancels?.plain ?? 0)) {
    steering.unasked.set(turnId, here); // a shutdown's splice, or a problem: told by the terminal's cause
  }
  earlier.push(splice);
  steering.splices.set(turnId, earlier);
  steering.openSplices.set(String(params["sessionId"]), turnId);
}

/**
 * `turnId`'s `turn/completed` (`params`): its steering all started, its splice came if it had to
 * and only if something asked for it (a default `turn/cancel` or a `denyAndStop`, of this
 * connection or another: cause `user`; a shutdown: `disposed`; a parent's cancel carried down to
 * a subagent: `parent`), its carried-over steering began it; a queued turn (`begun` false) that ends
 * `cancelled` while another turn of its session has its splice out is listed in that splice.
 */
export function checkSteeringAtTerminal(
  steering: SteeringHistory,
  turnId: string,
  params: Record<string, unknown>,
  begun: boolean,
  say: (p: string) => void,
  gaps = false,
): void {
  const sessionId = String(params["sessionId"]);
  const spliced = steering.openSplices.get(sessionId);
  if (spliced === turnId) steering.openSplices.delete(sessionId);
  else if (spliced !== undefined && !begun && params["terminal"] === "cancelled" && !steering.cancels.has(turnId)) {
    const listed = (steering.splices.get(spliced) ?? []).some((s) => s.turnIds.includes(turnId));
    if (!listed) {
      say(
        `queued turn ${turnId} is discarded (cancelled) while turn ${spliced}'s inbox/cancelled is out, but no splice of it lists the turn: a splice lists every queued turn it discarded (invariant S)`,
      );
    }
  }
  const unasked = steering.unasked.get(turnId);
  const cause = params["cause"];
  const kind = typeof cause === "object" && cause !== null ? (cause as Record<string, unknown>)["kind"] : undefined;
  if (unasked !== undefined && kind !== "disposed" && kind !== "parent" && kind !== "user") {
    say(
      `inbox/cancelled at ${unasked} for turn ${turnId}, which no default turn/cancel or denyAndStop of this connection asked for, and the turn ends with cause.kind ${JSON.stringify(kind) ?? "missing"}: only a user's default cancel ("user"), a shutdown ("disposed") and a parent's cancel ("parent") discard the inbox; a policy stop keeps it (invariant S)`,
    );
  }
  const started = steering.started.get(turnId);
  for (const [steerId, accepted] of steering.accepted) {
    // A transcript with gaps may have left the steering item's item/started out.
    if (accepted.turnId === turnId && started?.has(steerId) !== true && !gaps) {
      say(
        `turn/steer ${steerId}, accepted at ${accepted.at}, has no steering item (a message with its steerId) before turn ${turnId}'s turn/completed (invariant S)`,
      );
    }
  }
  const splices = steering.splices.get(turnId) ?? [];
  const cancelledAt = steering.cancelledRunning.get(turnId);
  const steered = [...steering.accepted.values()].some((a) => a.turnId === turnId);
  if (cancelledAt !== undefined && steered && splices.length === 0 && !steering.unlisted.has(turnId) && !gaps) {
    say(
      `turn ${turnId} was steered and cancelled by a default turn/cancel accepted at ${cancelledAt}, but no inbox/cancelled came before its turn/completed (invariant S)`,
    );
  }
  for (const splice of splices) {
    for (const steerId of splice.steerIds) {
      if (steering.discarded.get(steerId)?.turnId !== turnId) {
        say(
          `inbox/cancelled at ${splice.at} lists steer ${steerId}, but no steering item of this turn with that steerId completed "cancelled" (discarded) before turn ${turnId}'s turn/completed (invariant S)`,
        );
      }
    }
  }
  for (const missing of steering.expecting.get(turnId) ?? []) {
    say(`steer ${missing.steerId}, carried over at ${missing.at}, does not start in turn ${turnId}, the session's next turn (invariant S)`);
  }
  steering.expecting.delete(turnId);
}

/** At the end of a transcript: every turn a splice lists as discarded ended `cancelled`. */
export function reportSteeringUnended(steering: SteeringHistory, terminals: Terminals, say: (p: string) => void): void {
  for (const [turnId, splices] of steering.splices) {
    for (const splice of splices) {
      for (const queued of splice.turnIds) {
        const ended = terminals.get(queued);
        if (ended !== undefined && ended.terminal !== "cancelled") {
          say(
            `${splice.at}: inbox/cancelled of turn ${turnId} lists queued turn ${queued} as discarded, but it ended ${JSON.stringify(ended.terminal)} at ${ended.at} (invariant S)`,
          );
        }
      }
    }
  }
}
