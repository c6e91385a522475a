/**
 * Who waits for a child turn's end: a delegating `task` call completes with the child's terminal
 * and the text of its last message, once that terminal is durable and sent.
 */
import type { TurnCompletedParams } from "@muse-code/protocol";
import type { ChildOutcome } from "./delegation.js";

/** The waits on one session's child turns; see the module header. */
export class ChildTurnWaits {
  readonly #waiters = new Map<string, Array<(outcome: ChildOutcome) => void>>();
  /** The last message text of each child turn so far, by turnId. */
  readonly #lastMessages = new Map<string, string>();

  /** A message of child turn `turnId` completed with `text`: the last one is what its delegating call returns. */
  message(turnId: string, text: string): void {
    if (text !== "") this.#lastMessages.set(turnId, text);
  }

  /** Resolves with turn `turnId`'s outcome: at once (after `durable`) when it ended already with `params`, else when {@link ended} is called. */
  wait(turnId: string, params: TurnCompletedParams | undefined, durable: () => Promise<void>): Promise<ChildOutcome> {
    if (params !== undefined) {
      const lastMessage = this.#lastMessages.get(turnId) ?? "";
      return durable().then(() => ({ params, lastMessage }));
    }
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(turnId) ?? [];
      waiters.push(resolve);
      this.#waiters.set(turnId, waiters);
    });
  }

  /** Turn `turnId` ended with `params`: its waiters resolve once `durable()` settles (its terminal left first). */
  ended(turnId: string, params: TurnCompletedParams, durable: () => Promise<void>): void {
    const waiters = this.#waiters.get(turnId);
    if (waiters === undefined) return;
    this.#waiters.delete(turnId);
    const outcome: ChildOutcome = { params, lastMessage: this.#lastMessages.get(turnId) ?? "" };
    const settle = () => waiters.forEach((resolve) => resolve(outcome));
    void durable().then(settle, settle);
  }
}
