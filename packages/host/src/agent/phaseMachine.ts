/** The agent phase machine of seed 000: idle, maintenance or running, each non-idle phase owning one AbortController. */
import type { CancelCause } from "@muse-code/protocol";

/** Where a session's agent is. Every non-idle phase owns exactly one `AbortController`. */
export type AgentPhase =
  | { readonly kind: "idle"; readonly lastTurn: number }
  | { readonly kind: "maintenance"; readonly abort: AbortController; readonly lastTurn: number }
  | { readonly kind: "running"; readonly abort: AbortController; readonly turnId: string; readonly turn: number; step: number };

/**
 * The phase machine. `cancel(cause)` is first-cause-wins for the active activity and a no-op when
 * idle: it never arms future work. The cause becomes the `AbortSignal`'s `reason`.
 */
export class PhaseMachine {
  #phase: AgentPhase = { kind: "idle", lastTurn: -1 };

  /** The current phase. */
  get phase(): AgentPhase {
    return this.#phase;
  }

  /** The winning cancel cause of the active activity, or `undefined` when none. */
  get cause(): CancelCause | undefined {
    if (this.#phase.kind === "idle" || !this.#phase.abort.signal.aborted) return undefined;
    return this.#phase.abort.signal.reason as CancelCause;
  }

  /** Enters `running` for turn `turnId` (the `turn`-th of its session). Throws unless idle. */
  enterRunning(turnId: string, turn: number): AbortSignal {
    this.#assertIdle("running");
    const abort = new AbortController();
    this.#phase = { kind: "running", abort, turnId, turn, step: 0 };
    return abort.signal;
  }

  /** Enters `maintenance` (work between turns, e.g. compaction). Throws unless idle. */
  enterMaintenance(): AbortSignal {
    const lastTurn = this.#assertIdle("maintenance");
    const abort = new AbortController();
    this.#phase = { kind: "maintenance", abort, lastTurn };
    return abort.signal;
  }

  /** Records the step the running turn is at. A no-op in other phases. */
  setStep(step: number): void {
    if (this.#phase.kind === "running") this.#phase.step = step;
  }

  /** Returns to `idle`, dropping the phase's controller. */
  toIdle(): void {
    const p = this.#phase;
    const lastTurn = p.kind === "running" ? p.turn : p.lastTurn;
    this.#phase = { kind: "idle", lastTurn };
  }

  /**
   * Aborts the active activity with `cause`. Returns `true` when this call armed the abort,
   * `false` when idle (a no-op) or when an earlier cause already won.
   */
  cancel(cause: CancelCause): boolean {
    const p = this.#phase;
    if (p.kind === "idle" || p.abort.signal.aborted) return false;
    p.abort.abort(cause);
    return true;
  }

  #assertIdle(next: string): number {
    const p = this.#phase;
    if (p.kind !== "idle") throw new Error(`cannot enter ${next} while ${p.kind}`);
    return p.lastTurn;
  }
}
