/**
 * checkTranscript on quotes, and on causes: the cookbook page's own exchange ("Cancel a running
 * turn", test/fixtures/cookbook-pages) passes marked as beginning mid-session with gaps; a missing
 * `cause` is a note, a wrong one a problem; a transcript with gaps (lines left out anywhere) is
 * checked only for what its lines contradict, while a whole transcript, or an excerpt that only
 * stops early, is still checked for what it lacks.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTranscript, type CheckTranscriptOptions } from "../../src/testing/index.js";
import { repoRoot } from "../helpers/repoRoot.js";

const SEED = readFileSync(join(repoRoot, "test/fixtures/cookbook-pages/cancel-a-running-turn.jsonl"), "utf8").trimEnd().split("\n");
const EXCERPT: CheckTranscriptOptions = { beginsMidSession: true, gaps: true };

type Row = { dir: "client" | "server"; message: Record<string, unknown> };
const rows = (lines: readonly string[]): Row[] =>
  lines.map((l) => {
    const { dir, raw } = JSON.parse(l) as { dir: "client" | "server"; raw: string };
    return { dir, message: JSON.parse(raw) as Record<string, unknown> };
  });
const text = (list: readonly Row[]) => list.map(({ dir, message }) => JSON.stringify({ dir, raw: JSON.stringify(message) }));
const paramsOf = (row: Row) => row.message["params"] as Record<string, unknown>;
/** The seed's lines with the terminal's params changed by `change`. */
const withTerminal = (change: (params: Record<string, unknown>) => void) => {
  const list = rows(SEED);
  change(paramsOf(list[5] as Row));
  return text(list);
};

const S = "0198f0aa-1111-7000-8000-0000000000aa";
const T = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10";
const ITEM = "0198f0ad-0001-7000-8000-000000000010";

describe("checkTranscript on the seed page's Stop", () => {
  it("accepts the page's exact four exchanges marked as beginning mid-session with gaps, noting the missing cause", () => {
    expect(SEED).toHaveLength(6);
    const verdict = checkTranscript(SEED, EXCERPT);
    expect(verdict.problems).toEqual([]);
    expect(verdict.ok).toBe(true);
    expect(verdict.notes).toEqual([
      `line 6: turn/completed of turn ${T} is cancelled with no cause after the host accepted the client's turn/cancel at line 4: a host that sends a cause says "user" here`,
    ]);
  });

  it("reports a wrong cause after the accepted turn/cancel: disposed, hook, parent", () => {
    for (const cause of [{ kind: "disposed" }, { kind: "hook", reason: "budget" }, { kind: "parent" }]) {
      const verdict = checkTranscript(
        withTerminal((p) => (p["cause"] = cause)),
        EXCERPT,
      );
      expect(verdict.ok).toBe(false);
      expect(verdict.problems).toContainEqual(
        `line 6: turn/completed of turn ${T} is cancelled with cause.kind "${cause.kind}", but the host accepted the client's turn/cancel at line 4: a Stop's cause is "user"`,
      );
    }
  });

  it("accepts cause user with no note", () => {
    expect(
      checkTranscript(
        withTerminal((p) => (p["cause"] = { kind: "user" })),
        EXCERPT,
      ),
    ).toEqual({ ok: true, problems: [] });
  });

  it("checks the cause when the terminal comes before the cancel's answer too", () => {
    const list = rows(SEED);
    const reordered = text([list[0], list[1], list[2], list[4], list[5], list[3]] as Row[]);
    expect(checkTranscript(reordered, EXCERPT).notes).toEqual([
      `line 6: turn/completed of turn ${T} is cancelled with no cause after the host accepted the client's turn/cancel at line 6: a host that sends a cause says "user" here (its turn/completed is at line 5)`,
    ]);
    const list2 = rows(SEED);
    paramsOf(list2[5] as Row)["cause"] = { kind: "disposed" };
    const wrong = text([list2[0], list2[1], list2[2], list2[4], list2[5], list2[3]] as Row[]);
    expect(checkTranscript(wrong, EXCERPT).problems).toEqual([
      `line 6: turn/completed of turn ${T} is cancelled with cause.kind "disposed", but the host accepted the client's turn/cancel at line 6: a Stop's cause is "user" (its turn/completed is at line 5)`,
    ]);
  });

  it("without gaps, the item/completed whose item/started is not there is invariant A, even in an excerpt that stops early", () => {
    // The turn began in the transcript (its turn/start was accepted here), so its items start in it.
    for (const options of [{ beginsMidSession: true }, { beginsMidSession: true, excerpt: true }]) {
      expect(checkTranscript(SEED, options).problems).toEqual([`line 5: item/completed for item ${ITEM} before any item/started of it (invariant A)`]);
    }
  });

  it("still fails the committed whole transcript whose item never started", () => {
    const broken = readFileSync(join(repoRoot, "transcripts/broken/invariant-A-completed-never-started.jsonl"), "utf8");
    expect(checkTranscript(broken).problems).toEqual([
      expect.stringMatching(/^line 8: item\/completed for item \S+ before any item\/started of it \(invariant A\)$/),
    ]);
  });
});

describe("checkTranscript with gaps: lines left out anywhere", () => {
  const head = rows(SEED).slice(0, 2);
  const note = (method: string, n: number, params: Record<string, unknown>): Row => ({
    dir: "server",
    message: { jsonrpc: "2.0", method, params: { sessionId: S, viewCursor: `v:${S}:${n}`, ...params } },
  });
  const message = (revision: number, extra: Record<string, unknown> = {}) => ({
    itemId: ITEM,
    kind: "message",
    turnId: T,
    revision,
    status: "inProgress",
    recordedAt: "2026-08-07T18:42:45.000Z",
    text: "",
    ...extra,
  });
  const delta = (n: number, revision: number, append: string) =>
    note("item/delta", n, { turnId: T, itemId: ITEM, revision, field: "text", append, recordedAt: "2026-08-07T18:42:45.000Z" });
  const terminal = (n: number) => note("turn/completed", n, { turnId: T, terminal: "completed", reason: "done", durationMs: 5 });

  it("accepts an item whose item/started, deltas and item/completed are left out, and a revision gap", () => {
    const lines = text([...head, note("item/started", 2, { item: message(1) }), delta(3, 2, "Hel"), delta(5, 5, "lo"), terminal(9)]);
    expect(checkTranscript(lines, EXCERPT)).toEqual({ ok: true, problems: [] });
    // The same lines as a whole transcript: a gap, and an item that never completes.
    expect(checkTranscript(lines, { beginsMidSession: true }).problems).toEqual([
      expect.stringMatching(/^line 5: item\/delta of item \S+ has revision 5 after 2: a gap; revision 2 was at line 4 \(invariant A\)$/),
      expect.stringMatching(/^line 6: turn\/completed for turn \S+ while item \S+, started at line 3, has no item\/completed \(invariant 2\)$/),
    ]);
  });

  it("still reports what the lines shown contradict: a repeat, an item after the terminal, a terminal after already_terminal", () => {
    const repeat = text([...head, delta(3, 4, "a"), delta(4, 4, "b")]);
    expect(checkTranscript(repeat, EXCERPT).problems).toEqual([expect.stringMatching(/revision 4, not above revision 4 at line 3: a repeat \(invariant A\)$/)]);
    const late = text([...head, terminal(4), delta(5, 3, "x")]);
    expect(checkTranscript(late, EXCERPT).problems).toEqual([
      expect.stringMatching(/^line 4: item\/delta \(item \S+\) for turn \S+ after its turn\/completed at line 3 \(invariant 3\)$/),
    ]);
    const cancel = rows(SEED)[2] as Row;
    const rejected: Row = {
      dir: "server",
      message: {
        jsonrpc: "2.0",
        id: 4,
        error: {
          code: -32001,
          message: "already terminal",
          data: { commandId: "018f6a21-0f0f-7aaa-bbbb-0123456789ab", reason: "already_terminal", turnId: T },
        },
      },
    };
    // Its terminal may be left out before the rejection...
    expect(checkTranscript(text([...head, cancel, rejected]), EXCERPT)).toEqual({ ok: true, problems: [] });
    // ...but not after it.
    expect(checkTranscript(text([...head, cancel, rejected, terminal(7)]), EXCERPT).problems).toEqual([
      `line 5: turn/completed for turn ${T} after the already_terminal rejection at line 4: the rejection follows the terminal (invariant 4)`,
    ]);
    expect(checkTranscript(text([...head, cancel, rejected]), { beginsMidSession: true }).problems).toContainEqual(
      `line 4: already_terminal rejection for turn ${T} before that turn's turn/completed (invariant 4)`,
    );
  });

  it("accepts a response whose request is left out only with gaps", () => {
    const lines = text(rows(SEED).slice(1));
    expect(checkTranscript(lines, EXCERPT).problems).toEqual([]);
    expect(checkTranscript(lines, { beginsMidSession: true }).problems).toContainEqual("line 1: response to id 3 matches no earlier client request");
  });
});
