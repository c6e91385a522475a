/** describeUsage: a turn's token usage as one phrase a person reads. */
import type { TurnUsage } from "@muse-code/protocol";

/**
 * A turn's token usage (MSP 2.1, on its `turn/completed`, cancelled and failed turns included) as
 * the phrase the CLI and the demo show beside the terminal: `tokens 120 in, 8 out, 0 reasoning`.
 *
 * @param usage - The terminal's `usage`: input, output and reasoning counts. @unit tokens
 * @returns One lower-case phrase, with no final period.
 *
 * @example
 * ```ts
 * import { describeTerminal, describeUsage } from "@muse-code/sdk/ui";
 *
 * const done = await turn.completed;
 * const usage = done.usage === undefined ? "" : ` (${describeUsage(done.usage)})`;
 * status.textContent = `${describeTerminal(done)}${usage}`;
 * // "stopped by policy: turn time limit (300 ms) (tokens 7 in, 3 out, 0 reasoning)"
 * ```
 */
export function describeUsage(usage: TurnUsage): string {
  return `tokens ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.reasoningTokens} reasoning`;
}
