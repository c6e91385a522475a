/** Test helper for the muse CLI: the repository's demo model (models/cli-demo.json) as muse prints it. */

/**
 * The demo turn's lines as plain text (stdout not a terminal), from the turn's first item to its
 * last: between the `session …` (and `turn … started`) lines and the `turn completed: …` line.
 */
export const DEMO_TURN_LINES: readonly string[] = [
  "(thinking) The user wants the build checked. I will run it.",
  "Checking the build.",
  "> shell: printf 'compiling 3 files\\nlinking\\nbuild ok\\n'",
  "  | compiling 3 files",
  "  | linking",
  "  | build ok",
  "  = completed",
  "The build is fine.",
];
