/**
 * describePhase and canStop: a session turn's phase as one line a person reads, and whether its
 * Stop button is live. They read a structural view of the turn, so ui/ needs nothing from session/.
 */
import type { TurnCompletedParams } from "@muse-code/protocol";
import { describeTerminal } from "./describeTerminal.js";

/**
 * The part of a session turn (`SessionTurn` of `@muse-code/sdk/session`) that {@link describePhase}
 * and {@link canStop} read; a `SessionTurn` is one.
 *
 * @example
 * ```ts
 * import type { TurnPhaseView } from "@muse-code/sdk/ui";
 *
 * const views: readonly TurnPhaseView[] = session.getSnapshot().turns; // each SessionTurn is one
 * ```
 */
export interface TurnPhaseView {
  /** Where the turn is; only `ended` is a terminal (see `SessionTurnPhase`). */
  readonly phase: "starting" | "queued" | "running" | "stopping" | "reconnecting" | "ended" | "unknown";
  /** The turn's own `turn/completed`, once it came (only `terminal`, `reason` and `cause` are read). */
  readonly terminal?: Pick<TurnCompletedParams, "terminal" | "reason" | "cause">;
  /** Stop was pressed. */
  readonly stopRequested: boolean;
  /** Where a pressed Stop is: `kept` (not sent yet), `sent` (no answer yet), `accepted` (by the host). */
  readonly stopState?: "kept" | "sent" | "accepted";
  /** Why the phase is `unknown`. */
  readonly unknownReason?: string;
}

/**
 * A session turn's phase as one line a person reads. Only the host's own terminal reads as an
 * ending, in {@link describeTerminal}'s words; every other phase says that the turn is not over:
 *
 * - `starting`, `queued`, `running`: the phase's name;
 * - `reconnecting`: "reconnecting: the turn may still be running";
 * - `stopping`, by its `stopState`: `kept` "Stop will be sent when back online", `sent` (or no
 *   state) "stopping…", `accepted` "stopping: the host is stopping it";
 * - `ended`: `describeTerminal(terminal)` ("you stopped it", "completed", "the host restarted", …);
 * - `unknown`: "unknown: " and its `unknownReason`.
 *
 * @param turn - A `SessionTurn`, or anything with its `phase`, `terminal`, `stopRequested`, `stopState` and `unknownReason`.
 * @returns One line, lower-case but for the button's name "Stop", with no final period.
 *
 * @example
 * ```ts
 * import { describePhase } from "@muse-code/sdk/ui";
 *
 * session.subscribe(() => {
 *   const [turn] = session.getSnapshot().turns;
 *   if (turn !== undefined) status.textContent = describePhase(turn);
 *   // "running", "Stop will be sent when back online", "stopping…", "you stopped it", …
 * });
 * ```
 */
export function describePhase(turn: TurnPhaseView): string {
  switch (turn.phase) {
    case "starting":
    case "queued":
    case "running":
      return turn.phase;
    case "reconnecting":
      return "reconnecting: the turn may still be running";
    case "stopping":
      if (turn.stopState === "kept") return "Stop will be sent when back online";
      return turn.stopState === "accepted" ? "stopping: the host is stopping it" : "stopping…";
    case "ended":
      return turn.terminal === undefined ? "ended" : describeTerminal(turn.terminal);
    case "unknown": {
      const reason = turn.unknownReason?.trim() ?? "";
      return reason === "" ? "unknown: what happened is not known" : `unknown: ${reason}`;
    }
    default:
      return unreachable(turn.phase);
  }
}

/**
 * Whether a turn's Stop button is live: the turn has not ended (nor become `unknown`) and Stop
 * was not pressed yet. A pressed Stop stays pressed until the turn's own terminal, across drops
 * and reloads, so the button does not come back.
 *
 * @param turn - A `SessionTurn`, or anything with its `phase` and `stopRequested`.
 * @returns True while pressing Stop would do something.
 *
 * @example
 * ```ts
 * import { canStop } from "@muse-code/sdk/ui";
 *
 * session.subscribe(() => {
 *   const [turn] = session.getSnapshot().turns;
 *   button.hidden = turn === undefined || !canStop(turn);
 *   button.onclick = () => turn !== undefined && session.stop(turn.turnId);
 * });
 * ```
 */
export function canStop(turn: Pick<TurnPhaseView, "phase" | "stopRequested">): boolean {
  return turn.phase !== "ended" && turn.phase !== "unknown" && turn.phase !== "stopping" && !turn.stopRequested;
}

/** A phase this file does not know: a compile error here names it. */
function unreachable(phase: never): string {
  return String(phase);
}
