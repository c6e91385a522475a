/** The exit codes of `muse`: one per way a run can end, the same for every command. */

/**
 * How `muse` exits: `completed` 0, `failed` 1 (a failed turn, a refused command, a check that
 * failed), `usage` 2 (a bad command line), `connectionLost` 3 (the host went away before the
 * answer), `switchedOff` 4 (`muse serve` refused: `MUSE_EXPERIMENTAL_SDK_ENABLED` is off),
 * `cancelled` 130 (the turn's own terminal said cancelled: 128 + SIGINT, as shells report an
 * interrupted command).
 */
export const ExitCodes = {
  completed: 0,
  failed: 1,
  usage: 2,
  connectionLost: 3,
  switchedOff: 4,
  cancelled: 130,
} as const;

/** One of {@link ExitCodes}. */
export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/** The exit code for a turn's terminal: completed 0, cancelled 130, failed 1. */
export function exitCodeOf(terminal: string): ExitCode {
  if (terminal === "completed") return ExitCodes.completed;
  if (terminal === "cancelled") return ExitCodes.cancelled;
  return ExitCodes.failed;
}
