/**
 * transcriptRule: what `muse check` checks on every scenario's wire, in one place: the
 * invariants (`checkTranscript`, or a scenario's own `checkWire`), the cause of each cancelled
 * terminal (cancelCause) and foreign sessions (foreignSession). A scenario's wire is a whole
 * connection, from its first line; the same rule takes a quote of one (`excerpt`, `gaps`,
 * `beginsMidSession`, as `checkTranscript` does) so a page's example can be checked as a host
 * would be.
 */
import { checkTranscript } from "@muse-code/sdk/testing";
import { cancelCauseProblems } from "./cancelCause.js";
import type { WireLine } from "./checkWire.js";
import { foreignSessionProblems } from "./foreignSession.js";

/** Options of {@link transcriptRule}. */
export interface TranscriptRuleOptions {
  /**
   * The lines may stop before the exchange does (`CheckTranscriptOptions.excerpt`).
   * @defaultValue false
   */
  excerpt?: boolean;
  /**
   * Lines may be left out anywhere (`CheckTranscriptOptions.gaps`; implies `excerpt`).
   * @defaultValue false
   */
  gaps?: boolean;
  /**
   * The lines begin on a connection already in use: sessions it did not create or resume here
   * are not foreign (`CheckTranscriptOptions.beginsMidSession`; the foreign-session rule is off).
   * @defaultValue false
   */
  beginsMidSession?: boolean;
  /** The number of wire lines recorded before the check shut the host down (SIGTERM), when it did. */
  shutdownAfter?: number;
  /** The invariant check to use instead of `checkTranscript` (a scenario's own `checkWire`). */
  invariants?: (lines: readonly WireLine[]) => string[];
}

/** What {@link transcriptRule} finds: problems fail the scenario, notes do not. Each starts `line <n>:`. */
export interface TranscriptFindings {
  problems: string[];
  notes: string[];
}

/** The recorded lines that parse, as `checkTranscript` takes them. */
function parsed(lines: readonly WireLine[]) {
  return lines.filter((l) => l.message !== undefined).map((l) => ({ line: l.line, dir: l.dir, raw: l.raw, message: l.message as Record<string, unknown> }));
}

/** The invariant problems and notes of `lines`, a scenario's wire or an excerpt of one. */
export function transcriptRule(lines: readonly WireLine[], options: TranscriptRuleOptions = {}): TranscriptFindings {
  const notes: string[] = [];
  let problems: string[];
  if (options.invariants !== undefined) problems = options.invariants(lines);
  else {
    const verdict = checkTranscript(parsed(lines), {
      excerpt: options.excerpt === true,
      gaps: options.gaps === true,
      beginsMidSession: options.beginsMidSession === true,
    });
    problems = [...verdict.problems];
    notes.push(...(verdict.notes ?? []));
  }
  const causeNotes: string[] = [];
  problems.push(...cancelCauseProblems(lines, options.shutdownAfter, causeNotes));
  // One note per terminal: the kit and the cause rule may both note the same missing cause.
  for (const note of causeNotes) {
    const line = /^line (\d+):/.exec(note)?.[1];
    if (!notes.some((n) => n.startsWith(`line ${line}:`))) notes.push(note);
  }
  if (options.beginsMidSession !== true) problems.push(...foreignSessionProblems(lines));
  return { problems, notes };
}
