/** describeTerminal: a turn's terminal as one sentence a person reads. */
import { HOST_RESTARTED_REASON } from "@muse-code/protocol/reasons.js";
import type { TurnCompletedParams } from "@muse-code/protocol";

/**
 * A turn's terminal as a sentence a person reads, so that a user's Stop, a policy stop and a host
 * shutdown never look alike:
 *
 * - `completed`: "completed";
 * - `cancelled`, by its `cause.kind`: `user` "you stopped it", `hook` "stopped by policy: <reason>",
 *   `disposed` "the host shut down", `parent` "stopped because its parent turn stopped"; with no
 *   cause, "cancelled: <reason>";
 * - `failed`: "the host restarted" when the reason says so, else "failed: <reason>" (a reason that
 *   already begins with "failed: " is not doubled).
 *
 * @param params - The turn's `turn/completed` params (only `terminal`, `reason` and `cause` are read).
 * @returns One lower-case sentence, with no final period.
 *
 * @example
 * ```ts
 * import { describeTerminal } from "@muse-code/sdk/ui";
 *
 * const done = await turn.completed;
 * status.textContent = describeTerminal(done);
 * // "you stopped it", "stopped by policy: turn time limit (120000 ms)", "the host shut down", …
 * ```
 */
export function describeTerminal(params: Pick<TurnCompletedParams, "terminal" | "reason" | "cause">): string {
  const { terminal, reason, cause } = params;
  if (terminal === "completed") return "completed";
  if (terminal === "failed") {
    if (reason === HOST_RESTARTED_REASON) return "the host restarted";
    return reason.startsWith("failed: ") ? reason : `failed: ${reason}`;
  }
  switch (cause?.kind) {
    case "user":
      return "you stopped it";
    case "hook":
      return cause.reason === undefined || cause.reason.trim() === "" ? "stopped by policy" : `stopped by policy: ${cause.reason}`;
    case "disposed":
      return "the host shut down";
    case "parent":
      return "stopped because its parent turn stopped";
    default:
      return `cancelled: ${reason}`;
  }
}
