/**
 * checkTranscript: verifies a wire transcript is well-formed JSON-RPC 2.0 and keeps MSP's
 * invariants 1–6 (ARCHITECTURE.md): one terminal per accepted turn, items closed before their
 * turn's terminal, nothing after a terminal, `already_terminal` only after the terminal,
 * `viewCursor` strictly increasing per session, and a tool call whose item was
 * `approval: "pending"` runs only after an `approve`, with every `tool/approve` answered at most once;
 * and MSP 2.0's invariants A and B on items folded from their deltas and patches; and the subagent
 * invariant 7.
 * The checks live beside it: checkTranscriptPart (JSON-RPC and responses), turnLifecycle
 * (turns, items, cursors), itemChain (A and B), approvalInvariant and subagentInvariant;
 * transcriptHistory is what carries across parts.
 */
import { checkPart, type ParsedLine } from "./checkTranscriptPart.js";
import { readTranscriptRows, type TranscriptLine } from "./transcript.js";
import { SessionHistory } from "./transcriptHistory.js";
import { reportUnended } from "./turnLifecycle.js";

/**
 * Options of {@link checkTranscript}.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const { ok, problems } = checkTranscript(readFileSync("excerpt.jsonl", "utf8"), { excerpt: true });
 * ```
 */
export interface CheckTranscriptOptions {
  /**
   * The transcript is an excerpt of a longer exchange that may stop before the exchange does: a
   * turn accepted in it may end after the excerpt does, and an item started in it may complete
   * later. Without this, an accepted turn with no `turn/completed` is a problem (invariant 1).
   * Duplicates are problems either way. Lines left out before or between the lines shown are
   * {@link CheckTranscriptOptions.gaps}'s.
   * @defaultValue false
   */
  excerpt?: boolean;
  /**
   * Lines may be left out anywhere, before, between and after the lines shown (implies
   * {@link CheckTranscriptOptions.excerpt}), as in a page that quotes the lines that matter. Only
   * what the lines shown contradict is a problem, never what a left-out line could supply: an
   * item may complete without its `item/started`, a chain may skip revisions, an item's
   * completion or a splice may be left out before its turn's terminal, a response may answer a
   * request left out, a run may follow an approve left out. A repeat or a step back in an item's
   * revisions, anything after a turn's terminal, a second terminal, a `turn/completed` after that
   * turn's `already_terminal`, a child's terminal after its parent's, and a wrong cause stay
   * problems. Which sessions the connection owns is
   * {@link CheckTranscriptOptions.beginsMidSession}'s to lift: a quote that leaves out the
   * `session/create` or `session/resume` carries both marks.
   * @defaultValue false
   */
  gaps?: boolean;
  /**
   * The transcript (its first part, for {@link checkTranscriptParts}) begins on a connection
   * already in use: it may hear a session it never created or resumed here, and an item of a
   * session it joined mid-way may have no `item/started` in it. Without this mark, a notification
   * or `tool/approve` for a session the connection did not create (a `session/create` answer) or
   * resume (a `session/resume` it sent and the host did not refuse) is a problem (a foreign
   * session), and so is a delta, patch or completion of an item that never started. Later parts are
   * new connections: the mark never applies to them.
   * @defaultValue false
   */
  beginsMidSession?: boolean;
}

/**
 * The verdict of {@link checkTranscript}: `ok` when `problems` is empty.
 *
 * @example
 * ```ts
 * const check: TranscriptCheck = checkTranscript(readTranscript("transcripts/cancel-race.jsonl"));
 * if (!check.ok) throw new Error(check.problems.join("\n"));
 * ```
 */
export interface TranscriptCheck {
  ok: boolean;
  /** One sentence per problem, each starting with `line <n>:` (1-based). */
  problems: string[];
  /**
   * What is not a problem but worth saying, one sentence each starting with `line <n>:`: e.g. a
   * `cancelled` terminal with no `cause` where the transcript shows who stopped it (a missing
   * cause is not a wrong one). Present only when there is something to note, so a clean verdict
   * is `{ ok: true, problems: [] }`.
   */
  notes?: string[];
}

/**
 * What {@link checkTranscript} accepts: the text, its lines, or parsed lines.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const input: TranscriptInput = readFileSync("transcripts/cancel-race.jsonl", "utf8");
 * checkTranscript(input);
 * ```
 */
export type TranscriptInput = string | readonly string[] | readonly TranscriptLine[];

/**
 * A new connection: it owns no session yet, unless it is marked as beginning mid-session (then the
 * foreign-session rule is off). Its notes go to `notes`.
 */
function beginPart(history: SessionHistory, midSession: boolean, gaps: boolean, notes: string[]): void {
  history.midSession = midSession;
  history.gaps = gaps;
  history.notes = notes;
  history.connectionSessions = midSession ? undefined : new Set();
  history.connectionCancels = new Set();
}

/** The verdict of one part: `notes` only when there are some. */
function verdict(problems: string[], notes: string[]): TranscriptCheck {
  return notes.length === 0 ? { ok: problems.length === 0, problems } : { ok: problems.length === 0, problems, notes };
}

/** The transcript's lines, parsed; a line that does not parse is a problem (`line <n>: …`). */
function parseLines(input: TranscriptInput, problems: string[]): ParsedLine[] {
  if (input.length > 0 && typeof input !== "string" && typeof input[0] !== "string") {
    return (input as readonly TranscriptLine[]).map((l) => ({ line: l.line, dir: l.dir, message: l.message }));
  }
  return readTranscriptRows(input as string | readonly string[], (line, problem) => problems.push(`line ${line}: ${problem}`));
}

/**
 * Check one transcript: JSON-RPC 2.0 well-formedness (`jsonrpc: "2.0"`; a request has a
 * method and an id; a response has an id and exactly one of result and error, answers an
 * earlier client request, and only once; every result carries the request's `commandId` and
 * `status: "accepted"`), MSP's invariants 1–6, and MSP 2.0's A and B. Each problem names its
 * 1-based line.
 *
 * Approvals (invariant 6): the host may send one request, `tool/approve`, for a tool call whose
 * item an earlier `item/updated` set `approval: "pending"`, and the client answers each at most
 * once. Until the client answers `approve` while the item is still pending, the call must not
 * run: no `approval: "approved"`, no output, no `completed` status. An `approve` that comes after
 * the host withdrew the question, or after the client's own `turn/cancel` of that turn (the host
 * reads the cancel first, and withdraws), is late: it runs nothing. An answer that follows its turn's
 * `turn/completed` must be `cancelled`: the transcript is the client's view, and a client that
 * has seen the terminal has nothing left to decide.
 *
 * Items (MSP 2.0) are folded with `foldItem` from their `item/started`, `item/delta`s and
 * `item/updated` patches, and checked:
 * - A: every `item/delta` and `item/updated` of an item follows its `item/started`, precedes its
 *   `item/completed`, and has `revision` exactly one more than the item's previous notification
 *   (a gap, a repeat, a step back, a delta to a field the item's kind lacks, a patch of another
 *   kind or turn, an empty `append` are problems). Once an item's chain breaks, its later links
 *   and its completion are not reported again.
 * - B: the whole item of `item/completed` equals the fold except where the completion itself
 *   changes it: its `revision` is above the fold's; it sets `recordedAt`, `status`,
 *   `interrupted`, `failureReason`, `error` and `truncated`; its growing field (`text`, or a tool
 *   call's `visibleOutput`) must extend the folded value, never rewrite it (a host may complete
 *   with output its throttle held back, or text logged but not sent before a crash; a trailing
 *   U+FFFD of the folded output, a character the host had only part of, may be completed);
 *   `approval` may go from `"pending"` to `"cancelled"`; every other field is equal.
 *
 * Subagents (invariant 7): a parent turn's `turn/completed` follows the `turn/completed`
 * of every child turn it started; a child turn's `turn/started` names (`parent`, with `depth`) the
 * item whose `item/updated` patch linked it (`subagent`) before; `cause.kind: "parent"` is only on
 * a child turn whose parent ends `cancelled`; the links are well-formed.
 *
 * Sessions: a connection hears only the sessions it created or resumed, and the sessions linked
 * below them (from the `subagent` link on; a resume of a session hears its tree). A notification or
 * `tool/approve` for any other session is a problem (a foreign session), except the
 * `turn/completed` of a turn the connection sent `turn/cancel` for (invariant 4 puts it before an
 * `already_terminal` answer); and every item starts
 * (`item/started`, or the `items` of a `session/resume` answer) before its other notifications.
 * A transcript marked `beginsMidSession` may begin on a connection already in use: a session it
 * never created or resumed is then fine, and so is an item of a session the transcript joined
 * after the item started (the session's first notification here has a cursor past 1, no
 * `session/create` or `session/resume` answer with `items` showed the session whole, and the
 * item's turn did not begin here): it is not checked until its `item/completed`. A
 * `turn/completed` for a turn the transcript never started is fine either way. An accepted turn
 * with no `turn/completed` is a problem unless `options.excerpt` is set; a duplicate terminal
 * always is. A transcript with gaps (`options.gaps`) may leave lines out anywhere: it is checked
 * for what its lines contradict, not for what they lack (see {@link CheckTranscriptOptions.gaps}).
 *
 * Causes: a turn whose `turn/cancel` the host accepted, or whose question the client answered
 * `denyAndStop`, ends `cancelled` with `cause.kind: "user"`; any other kind (`disposed`, `hook`,
 * `parent`) is a problem. A `cancelled` terminal with no `cause` is not a wrong cause: it is a
 * note (`notes`), never a problem.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const { ok, problems } = checkTranscript(readFileSync("transcripts/cancel-race.jsonl", "utf8"));
 * if (!ok) console.error(problems.join("\n"));
 * ```
 */
export function checkTranscript(lines: TranscriptInput, options: CheckTranscriptOptions = {}): TranscriptCheck {
  const problems: string[] = [];
  const notes: string[] = [];
  const history = new SessionHistory();
  beginPart(history, options.beginsMidSession === true, options.gaps === true, notes);
  checkPart(parseLines(lines, problems), 1, (line) => `line ${line}`, history, problems);
  if (options.excerpt !== true && options.gaps !== true) reportUnended(history, () => problems);
  return verdict(problems, notes);
}

/**
 * Check the transcripts of successive connections to one host as one history, e.g. a crash
 * (`survive-host-crash.jsonl`) and the reconnection that resumes it
 * (`survive-host-crash.2.jsonl`). JSON-RPC ids reset with each part; turns, items and
 * `viewCursor`s carry over, so a turn accepted in part 1 may get its terminal in part 2.
 * Returns one verdict per part; a turn that never ends is reported in the part that accepted it.
 *
 * @example
 * ```ts
 * const parts = ["transcripts/survive-host-crash.jsonl", "transcripts/survive-host-crash.2.jsonl"].map((path) => readTranscript(path));
 * const [crash, resume] = checkTranscriptParts(parts);
 * ```
 */
export function checkTranscriptParts(parts: readonly TranscriptInput[], options: CheckTranscriptOptions = {}): TranscriptCheck[] {
  const history = new SessionHistory();
  const problems: string[][] = parts.map(() => []);
  const notes: string[][] = parts.map(() => []);
  const label = (part: number) => (line: number) => (parts.length > 1 ? `line ${line} (part ${part})` : `line ${line}`);
  parts.forEach((part, index) => {
    const partProblems = problems[index] as string[];
    beginPart(history, index === 0 && options.beginsMidSession === true, options.gaps === true, notes[index] as string[]);
    checkPart(parseLines(part, partProblems), index + 1, label(index + 1), history, partProblems);
  });
  if (options.excerpt !== true && options.gaps !== true) reportUnended(history, (part) => problems[part - 1] as string[]);
  return problems.map((p, index) => verdict(p, notes[index] as string[]));
}
