/**
 * A session's connection attempts: one at a time (a drop mid-attempt and a `retryNow()` join the
 * one under way), each failure retried after the policy's backoff, until its attempts are spent.
 */
import { backoffDelay, type ReconnectPolicy } from "./reconnectPolicy.js";
import type { SessionCloseReason, SessionConnection } from "./sessionSnapshot.js";

/** What the attempts need of the session. */
export interface RetriesHost {
  readonly policy: ReconnectPolicy | undefined;
  connection(): SessionConnection;
  setConnection(connection: SessionConnection): void;
  /** What the snapshot shows changed. */
  changed(): void;
  /** Stop trying, for `reason`. */
  giveUp(reason: SessionCloseReason): void;
  isClosed(): boolean;
}

/** The attempts of one session; see the module header. */
export class SessionRetries {
  readonly #host: RetriesHost;
  readonly #run: () => Promise<void>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempting: Promise<void> | undefined;

  /** `run` makes one attempt: connect, then open the session on it. */
  constructor(host: RetriesHost, run: () => Promise<void>) {
    this.#host = host;
    this.#run = run;
  }

  /** The attempt under way, or undefined. */
  get attempting(): Promise<void> | undefined {
    return this.#attempting;
  }

  /** Start an attempt, or join the one under way. */
  attempt(): Promise<void> {
    if (this.#attempting !== undefined) return this.#attempting;
    const run = this.#run();
    this.#attempting = run;
    void run.finally(() => {
      if (this.#attempting === run) this.#attempting = undefined;
    });
    return run;
  }

  /** Try again at once: no timer left, the count starts over. */
  now(): Promise<void> {
    this.cancel();
    this.#host.setConnection({ state: "reconnecting", attempt: 0 });
    return this.attempt();
  }

  /** The attempt failed (connect, or the open on it): it is over, so a `retryNow()` from a listener starts a new one. */
  failed(reason: SessionCloseReason): void {
    this.#attempting = undefined;
    if (this.#host.isClosed()) return;
    if (reason.kind === "tokenRefused") return this.#host.giveUp(reason);
    this.later(this.#host.connection().attempt + 1, reason);
  }

  /** Attempt number `attempt` after the policy's backoff, or give up once the attempts are spent. */
  later(attempt: number, reason: SessionCloseReason): void {
    const { policy } = this.#host;
    if (policy === undefined) return this.#host.giveUp(reason);
    if (attempt > policy.maxAttempts) {
      return this.#host.giveUp({
        kind: "unreachable",
        message: `the host refused or is unreachable: ${policy.maxAttempts} failed attempts in a row (the last: ${reason.message})`,
        ...(reason.closeCode === undefined ? {} : { closeCode: reason.closeCode }),
      });
    }
    this.cancel();
    const retryInMs = backoffDelay(policy, attempt);
    this.#host.setConnection({ state: "reconnecting", attempt, retryInMs, reason });
    this.#host.changed();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.attempt();
    }, retryInMs);
  }

  /** No retry is left waiting. */
  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
