/** describeEnding: how a turn ended, in full, as the CLI and the demo show it. */
import type { TurnCompletedParams } from "@muse-code/protocol";
import { describeTerminal } from "./describeTerminal.js";
import { describeUsage } from "./describeUsage.js";

/**
 * How a turn ended, in full: `describeTerminal`'s sentence, then the host's own reason in
 * parentheses unless the sentence was made from it, then `; ` and `describeUsage`'s phrase when the
 * host sent usage. The CLI's terminal line and the demo both read this way, so a user's Stop, a
 * policy stop and a shutdown never look alike anywhere.
 *
 * The reason is left out only when the sentence already is the reason (a failed turn, a cancelled
 * turn with no known cause, a host restart) or when it merely repeats the terminal
 * (`"completed"`), never because its words happen to appear inside the sentence.
 *
 * @param params - The turn's `turn/completed` params (`terminal`, `reason`, `cause` and `usage` are read; usage counts are in tokens).
 * @returns One lower-case line, with no final period.
 *
 * @example
 * ```ts
 * import { describeEnding } from "@muse-code/sdk/ui";
 *
 * const done = await turn.completed;
 * status.textContent = describeEnding(done);
 * // "stopped by policy: turn time limit (1000 ms) (cancelled during tool execution); tokens 412 in, 36 out, 120 reasoning"
 * ```
 */
export function describeEnding(params: Pick<TurnCompletedParams, "terminal" | "reason" | "cause" | "usage">): string {
  const sentence = describeTerminal(params);
  // The sentence was made from the reason when another reason would change it.
  const madeFromReason = describeTerminal({ ...params, reason: `${params.reason}\u0000` }) !== sentence;
  const reason = madeFromReason || params.reason === params.terminal ? "" : ` (${params.reason})`;
  const usage = params.usage === undefined ? "" : `; ${describeUsage(params.usage)}`;
  return `${sentence}${reason}${usage}`;
}
