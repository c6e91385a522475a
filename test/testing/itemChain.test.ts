/**
 * checkTranscript on MSP 2.0 item chains: items folded (foldItem) from item/started, item/delta
 * and item/updated patches; invariant A (each link follows its item/started, precedes its
 * item/completed, revision one more) and B (the completion extends the fold, never rewrites it);
 * transcripts that begin mid-session, and session/resume answers whose items seed the fold.
 */
import { describe, expect, it } from "vitest";
import { checkTranscript, checkTranscriptParts, type CheckTranscriptOptions } from "../../src/testing/index.js";

// These transcripts are excerpts of a connection already in use (no session/create or
// session/resume of their own): each is checked with the mid-session mark.
const checkExcerpt = (lines: Parameters<typeof checkTranscript>[0], options: CheckTranscriptOptions = {}) =>
  checkTranscript(lines, { beginsMidSession: true, ...options });
const checkExcerptParts = (parts: Parameters<typeof checkTranscriptParts>[0], options: CheckTranscriptOptions = {}) =>
  checkTranscriptParts(parts, { beginsMidSession: true, ...options });

const S = "0198f0aa-3333-7000-8000-0000000000cc";
const T = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f30";
const C = "018f6a21-0f0f-7aaa-bbbb-0123456789cd";
const at = "2025-08-07T18:40:00.000Z";

const client = (msg: unknown) => JSON.stringify({ dir: "client", raw: JSON.stringify(msg) });
const server = (msg: unknown) => JSON.stringify({ dir: "server", raw: JSON.stringify(msg) });
const start = [
  client({ jsonrpc: "2.0", id: 1, method: "turn/start", params: { sessionId: S, commandId: T, input: [{ type: "text", text: "hi" }] } }),
  server({ jsonrpc: "2.0", id: 1, result: { commandId: T, status: "accepted", turnId: T, startedNewTurn: true, disposition: "started" } }),
];
const note = (method: string, n: number, params: Record<string, unknown>) =>
  server({ jsonrpc: "2.0", method, params: { sessionId: S, viewCursor: `v:${S}:${n}`, ...params }, emittedAtMs: 1754591500000 + n });
const message = (revision: number, text: string, extra: Record<string, unknown> = {}) => ({
  itemId: "m1",
  kind: "message",
  turnId: T,
  revision,
  status: "inProgress",
  recordedAt: at,
  text,
  ...extra,
});
const tool = (revision: number, visibleOutput: string, extra: Record<string, unknown> = {}) => ({
  itemId: "t1",
  kind: "toolCall",
  turnId: T,
  revision,
  status: "inProgress",
  recordedAt: at,
  tool: "shell",
  callId: "call_1",
  args: '{"command":"make"}',
  visibleOutput,
  truncated: false,
  ...extra,
});
const delta = (n: number, revision: number, append: string, itemId = "m1", field = "text") =>
  note("item/delta", n, { turnId: T, itemId, revision, field, append, recordedAt: at });
const patch = (n: number, fields: Record<string, unknown>) => note("item/updated", n, { item: { turnId: T, recordedAt: at, ...fields } });
const done = (n: number) => note("turn/completed", n, { turnId: T, terminal: "completed", reason: "completed", durationMs: 10 });
const started = note("turn/started", 1, { turnId: T });

describe("checkTranscript folds MSP 2.0 item chains", () => {
  it("accepts a streamed message and a tool call whose output grows by deltas and is truncated by a patch", () => {
    const lines = [
      ...start,
      started,
      note("item/started", 2, { item: message(1, "") }),
      delta(3, 2, "Hello, "),
      delta(4, 3, "world"),
      note("item/completed", 5, { item: message(4, "Hello, world", { status: "completed" }) }),
      note("item/started", 6, { item: tool(1, "") }),
      delta(7, 2, "building\n", "t1", "visibleOutput"),
      patch(8, { itemId: "t1", kind: "toolCall", revision: 3, visibleOutput: "building\nlin", truncated: true }),
      // The completion carries the output the host held back (its throttle), and the exit status.
      note("item/completed", 9, { item: tool(4, "building\nlin", { status: "failed", truncated: true, failureReason: "exit code 2" }) }),
      done(10),
    ];
    expect(checkExcerpt(lines)).toEqual({ ok: true, problems: [] });
  });

  it("reports a repeat, a step back, a patch gap, a delta to a field the kind lacks, and a patch of another kind, once per chain", () => {
    const first = [...start, started, note("item/started", 2, { item: message(1, "") }), delta(3, 2, "Hel")];
    expect(checkExcerpt([...first, delta(4, 2, "Hel"), delta(5, 3, "lo"), note("item/completed", 6, { item: message(4, "Hello") }), done(7)]).problems).toEqual(
      ["line 6: item/delta of item m1 has revision 2, not above revision 2 at line 5: a repeat (invariant A)"],
    );
    expect(checkExcerpt([...first, delta(4, 1, "Hel"), delta(5, 3, "lo"), note("item/completed", 6, { item: message(4, "Hello") }), done(7)]).problems).toEqual(
      ["line 6: item/delta of item m1 has revision 1, not above revision 2 at line 5: a step back (invariant A)"],
    );
    // After a gap the chain is broken: its later links and its completion are not reported again.
    expect(
      checkExcerpt([
        ...first,
        patch(4, { itemId: "m1", kind: "message", revision: 4, status: "inProgress" }),
        delta(5, 5, "lo"),
        note("item/completed", 6, { item: message(6, "Help") }),
        done(7),
      ]).problems,
    ).toEqual(["line 6: item/updated of item m1 has revision 4 after 2: a gap; revision 2 was at line 5 (invariant A)"]);
    expect(
      checkExcerpt([...first, delta(4, 3, "out", "m1", "visibleOutput"), note("item/completed", 5, { item: message(4, "Hel") }), done(6)]).problems,
    ).toEqual(["line 6: item/delta of item m1 appends to visibleOutput, which a message does not have (invariant A)"]);
    expect(checkExcerpt([...first, patch(4, { itemId: "m1", kind: "reasoning", revision: 3 }), done(5)]).problems).toEqual([
      "line 6: item/updated of item m1 is a reasoning, not a message (invariant A)",
      "line 7: turn/completed for turn 018f6a1e-9b3c-7c21-a54a-2f30bd3c9f30 while item m1, started at line 4, has no item/completed (invariant 2)",
    ]);
    expect(checkExcerpt([...first, delta(4, 3, ""), note("item/completed", 5, { item: message(4, "Hel") }), done(6)]).problems).toEqual([
      "line 6: item/delta of item m1 appends nothing: append must be a non-empty string (invariant A)",
    ]);
  });

  it("reports a delta or a patch after the item's completion, and after its turn's terminal (invariant 3)", () => {
    const closed = [...start, started, note("item/started", 2, { item: message(1, "") }), note("item/completed", 3, { item: message(2, "Hi") })];
    expect(checkExcerpt([...closed, patch(4, { itemId: "m1", kind: "message", revision: 3, interrupted: true }), done(5)]).problems).toEqual([
      "line 6: item/updated for item m1 after its item/completed at line 5 (invariant A)",
    ]);
    expect(checkExcerpt([...closed, done(4), delta(5, 3, "!")]).problems).toEqual([
      `line 7: item/delta (item m1) for turn ${T} after its turn/completed at line 6 (invariant 3)`,
    ]);
  });

  it("compares the completion with the fold (invariant B): it may extend the growing field and set its own fields, never rewrite", () => {
    const streaming = [...start, started, note("item/started", 2, { item: tool(1, "") }), delta(3, 2, "caf\uFFFD", "t1", "visibleOutput")];
    const complete = (item: Record<string, unknown>) => checkExcerpt([...streaming, note("item/completed", 4, { item }), done(5)]).problems;
    // A character the host had only half of when it sent the delta, completed in the final output.
    expect(complete(tool(3, "café\n", { status: "completed" }))).toEqual([]);
    expect(complete(tool(3, "cab\n", { status: "completed" }))).toEqual([
      'line 6: item/completed of item t1 does not extend its streamed visibleOutput: from character 3 it has "b\\n", where the fold of its notifications up to line 5 has "f" (invariant B)',
    ]);
    expect(complete(tool(2, "caf\uFFFD", { status: "completed" }))).toEqual([
      "line 6: item/completed of item t1 has revision 2, not above revision 2 at line 5 (invariant B)",
    ]);
    expect(complete(tool(3, "café", { status: "completed", args: '{"command":"rm -rf /"}' }))).toEqual([
      'line 6: item/completed of item t1 has args "{\\"command\\":\\"rm -rf /\\"}", where the fold of its notifications up to line 5 has "{\\"command\\":\\"make\\"}" (invariant B)',
    ]);
    // A message's text is streamed whole: a completion that rewrites it is a problem.
    const text = [...start, started, note("item/started", 2, { item: message(1, "") }), delta(3, 2, "Hello")];
    expect(checkExcerpt([...text, note("item/completed", 4, { item: message(3, "Hello", { status: "cancelled", interrupted: true }) }), done(5)]).ok).toBe(
      true,
    );
    expect(checkExcerpt([...text, note("item/completed", 4, { item: message(3, "Help", { status: "completed" }) }), done(5)]).problems).toEqual([
      'line 6: item/completed of item m1 does not extend its streamed text: from character 4 it has "p", where the fold of its notifications up to line 5 has "lo" (invariant B)',
    ]);
  });

  it("lets a completion withdraw a pending question (a restart), and still gates a tool call's output on its approve (invariant 6)", () => {
    const asking = [
      ...start,
      started,
      note("item/started", 2, { item: tool(1, "") }),
      patch(3, { itemId: "t1", kind: "toolCall", revision: 2, approval: "pending" }),
    ];
    const restarted = tool(3, "", { status: "failed", approval: "cancelled", failureReason: "host restarted" });
    expect(checkExcerpt([...asking, note("item/completed", 4, { item: restarted }), done(5)]).ok).toBe(true);
    expect(
      checkExcerpt([
        ...asking,
        delta(4, 3, "ran\n", "t1", "visibleOutput"),
        note("item/completed", 5, { item: tool(4, "ran\n", { status: "completed", approval: "pending" }) }),
        done(6),
      ]).problems[0],
    ).toBe("line 6: item/delta: tool call t1, pending approval since line 5, shows output with no approve answered while it was pending (invariant 6)");
  });

  it("tolerates deltas of an item it never saw start when the transcript began mid-session, but not of an item whose turn began in it", () => {
    // The first notification of the session has cursor 8: the item may have started before the transcript.
    const midway = [
      note("item/delta", 8, { turnId: T, itemId: "m1", revision: 5, field: "text", append: "lo" }),
      note("item/completed", 9, { item: message(6, "Hello") }),
    ];
    expect(checkExcerpt([...midway, done(10)]).ok).toBe(true);
    // Seen from cursor 1: nothing started before the transcript.
    expect(checkExcerpt([started, delta(2, 5, "lo"), note("item/completed", 3, { item: message(6, "Hello") }), done(4)]).problems).toEqual([
      "line 2: item/delta for item m1 before any item/started of it (invariant A)",
    ]);
    // Joined mid-session, but the item's turn began here: so did its items.
    expect(
      checkExcerpt([note("turn/started", 8, { turnId: T }), delta(9, 5, "lo"), note("item/completed", 10, { item: message(6, "Hello") }), done(11)]).problems,
    ).toEqual(["line 2: item/delta for item m1 before any item/started of it (invariant A)"]);
  });

  it("seeds the fold from a session/resume answer's items, and then knows every item of the session", () => {
    const resume = (items: unknown[]) => [
      client({ jsonrpc: "2.0", id: 1, method: "session/resume", params: { sessionId: S, afterCursor: `v:${S}:7`, commandId: C } }),
      server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted", sessionId: S, replayed: 3, items } }),
    ];
    const replay = [delta(8, 3, "lo"), note("item/completed", 9, { item: message(4, "Hello", { status: "completed" }) }), done(10)];
    expect(checkExcerpt([...resume([message(2, "Hel")]), ...replay])).toEqual({ ok: true, problems: [] });
    expect(checkExcerpt([...resume([message(1, "")]), ...replay]).problems).toEqual([
      "line 3: item/delta of item m1 has revision 3 after 1: a gap; revision 1 was at line 2 (session/resume) (invariant A)",
    ]);
    expect(checkExcerpt([...resume([]), ...replay]).problems).toEqual(["line 3: item/delta for item m1 before any item/started of it (invariant A)"]);
    // An item listed in progress is open until its item/completed (invariant 2).
    expect(checkExcerpt([...resume([message(2, "Hel")]), done(8)]).problems).toEqual([
      `line 3: turn/completed for turn ${T} while item m1, started at line 2, has no item/completed (invariant 2)`,
    ]);
  });

  it("carries the fold across the parts of a reconnection", () => {
    const live = [...start, started, note("item/started", 2, { item: message(1, "") }), delta(3, 2, "Hel")];
    const resumed = [
      client({ jsonrpc: "2.0", id: 1, method: "session/resume", params: { sessionId: S, afterCursor: `v:${S}:3`, commandId: C } }),
      server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted", sessionId: S, replayed: 3, items: [message(2, "Hel")] } }),
      delta(4, 3, "lo"),
      note("item/completed", 5, { item: message(4, "Hello", { status: "completed" }) }),
      done(6),
    ];
    expect(checkExcerptParts([live, resumed]).map((v) => v.problems)).toEqual([[], []]);
    // At the revision the client holds, the resume's item must be the client's fold (invariant C).
    const unlike = server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted", sessionId: S, replayed: 3, items: [message(2, "Hex")] } });
    expect(checkExcerptParts([live, [resumed[0] as string, unlike]], { excerpt: true })[1]?.problems).toEqual([
      "line 2 (part 2): session/resume lists item m1 at revision 2 unlike the fold of its notifications up to line 5 (part 1) (invariant C)",
    ]);
    // A part 2 whose resume lists no items (a 1.0 answer) and whose replay skips a delta: the gap is the fold's, across parts.
    const answer = server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted", sessionId: S, replayed: 2 } });
    expect(checkExcerptParts([live, [resumed[0] as string, answer, delta(4, 4, "o"), ...resumed.slice(3)]])[1]?.problems).toEqual([
      "line 3 (part 2): item/delta of item m1 has revision 4 after 2: a gap; revision 2 was at line 5 (part 1) (invariant A)",
    ]);
  });
});
