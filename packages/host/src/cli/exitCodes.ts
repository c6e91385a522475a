/** The exit codes of `muse`: one per way a run can end, the same for every command. */

/**
 * How `muse` exits: `completed` 0, `failed` 1 (a failed turn, a refused command, a check that
 * failed), `usage` 2 (a bad command line), `connectionLost` 3 (the host went away before the
 * answer), `cancelled` 130 (the turn's own terminal said cancelled: 128 + SIGINT, as shells report
 * an interrupted command).
 *
 * @example
 * ```ts
 * process.exitCode = params.terminal === "cancelled" ? ExitCodes.cancelled : ExitCodes.completed;
 * ```
 */
export const ExitCodes = {
  completed: 0,
  failed: 1,
  usage: 2,
  connectionLost: 3,
  cancelled: 130,
} as const;

/**
 * One of {@link ExitCodes}.
 *
 * @example
 * ```ts
 * const code: ExitCode = ExitCodes.usage;
 * ```
 */
export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/**
 * The exit code for a turn's terminal: completed 0, cancelled 130, failed 1.
 *
 * @example
 * ```ts
 * exitCodeOf("cancelled"); // 130
 * ```
 */
export function exitCodeOf(terminal: string): ExitCode {
  if (terminal === "completed") return ExitCodes.completed;
  if (terminal === "cancelled") return ExitCodes.cancelled;
  return ExitCodes.failed;
}
