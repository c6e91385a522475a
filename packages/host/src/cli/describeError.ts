/** describeError: the one line `muse` prints for an error. */

/**
 * One line for an error a command threw: the MspError's message (which names the command and the
 * host's reason), or the error's own.
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
