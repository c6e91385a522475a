/**
 * The bounded waits for a session's turns to be over (`SessionTurnHandle.settled`): a list of
 * waiters per turn, settled when the turn ends or is given up, rejected when the session closes.
 */
import { MspError } from "../errors.js";
import { boundedWait, type BoundedWait } from "../internal/boundedWait.js";
import type { WaitOptions } from "../types/waitOptions.js";
import type { SessionTurn } from "./sessionSnapshot.js";

/** The waits of one session, by turn. */
export class TurnWaits {
  readonly #waiters = new Map<string, Set<BoundedWait<SessionTurn>>>();

  /** Wait for `turnId` to be over, bounded by `options`. */
  wait(turnId: string, options: WaitOptions): Promise<SessionTurn> {
    let waiters = this.#waiters.get(turnId);
    if (waiters === undefined) this.#waiters.set(turnId, (waiters = new Set()));
    const list = waiters;
    const wait: BoundedWait<SessionTurn> = boundedWait(`waiting for turn ${turnId} to end`, { method: "turn/completed", turnId }, options, Infinity, () => {
      list.delete(wait);
      if (list.size === 0) this.#waiters.delete(turnId);
    });
    list.add(wait);
    return wait.promise;
  }

  /** Settle the waits of every turn `viewOf` says is over (it gives the view of an ended or unknown turn, else undefined). */
  settle(viewOf: (turnId: string) => SessionTurn | undefined): void {
    for (const [turnId, waiters] of [...this.#waiters]) {
      const view = viewOf(turnId);
      if (view !== undefined) for (const wait of [...waiters]) wait.resolve(view);
    }
  }

  /** The session closed: every wait rejects with MspError `aborted`. */
  rejectAll(): void {
    for (const [turnId, waiters] of this.#waiters) {
      for (const wait of waiters) wait.reject(closedWait(turnId));
    }
    this.#waiters.clear();
  }
}

/** The error of a wait begun after the session closed. */
export function closedWait(turnId: string): MspError<"aborted"> {
  return new MspError("aborted", `waiting for turn ${turnId}: the session was closed`, { method: "turn/completed", turnId });
}
