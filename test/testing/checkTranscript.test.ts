import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkTranscript, checkTranscriptParts, parseTranscript, type CheckTranscriptOptions } from "../../src/testing/index.js";
import { checkFiles, committedTranscripts, groupParts } from "../../scripts/transcripts-check.js";

// These transcripts are excerpts of a connection already in use (no session/create or
// session/resume of their own): each is checked with the mid-session mark.
const checkExcerpt = (lines: Parameters<typeof checkTranscript>[0], options: CheckTranscriptOptions = {}) =>
  checkTranscript(lines, { beginsMidSession: true, ...options });

const read = (path: string) => readFileSync(path, "utf8");
const S = "0198f0aa-1111-7000-8000-0000000000aa";
const T = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10";
const C = "018f6a21-0f0f-7aaa-bbbb-0123456789ab";

const client = (msg: unknown) => JSON.stringify({ dir: "client", raw: JSON.stringify(msg) });
const server = (msg: unknown) => JSON.stringify({ dir: "server", raw: JSON.stringify(msg) });
const start = [
  client({ jsonrpc: "2.0", id: 1, method: "turn/start", params: { sessionId: S, commandId: T, input: [{ type: "text", text: "hi" }] } }),
  server({ jsonrpc: "2.0", id: 1, result: { commandId: T, status: "accepted", turnId: T, startedNewTurn: true, disposition: "started" } }),
];
const note = (method: string, n: number, params: Record<string, unknown>) =>
  server({ jsonrpc: "2.0", method, params: { sessionId: S, viewCursor: `v:${S}:${n}`, ...params }, emittedAtMs: 1754590945000 + n });
const completed = (n: number, terminal = "completed") => note("turn/completed", n, { turnId: T, terminal, reason: terminal, durationMs: 10 });

describe("checkTranscript on the committed transcripts", () => {
  const files = committedTranscripts();
  it("finds the committed transcripts", () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });
  const verdicts = checkFiles(files);
  for (const file of files) {
    it(`accepts ${file.split("/transcripts/")[1]}`, () => {
      expect(verdicts.get(file)?.problems).toEqual([]);
    });
  }
});

describe("checkTranscript on the broken transcripts", () => {
  const cases: Array<[string, RegExp]> = [
    ["invariant-1-missing-terminal", /^line 2: turn 018f6a1e-\S+, accepted here, never gets a turn\/completed \(invariant 1/],
    ["invariant-1-duplicate-terminal", /^line 4: a second turn\/completed for turn 018f6a1e-\S+; the first was at line 3 \(invariant 1\)$/],
    ["invariant-2-unclosed-item", /^line 4: turn\/completed for turn \S+ while item 0198f0ad-\S+, started at line 3, has no item\/completed \(invariant 2\)$/],
    ["invariant-3-item-after-terminal", /^line 4: item\/completed \(item \S+\) for turn \S+ after its turn\/completed at line 3 \(invariant 3\)$/],
    ["invariant-4-early-already-terminal", /^line 4: already_terminal rejection for turn \S+ before that turn's turn\/completed \(invariant 4\)$/],
    ["invariant-5-cursor-goes-back", /^line 4: turn\/completed: viewCursor v:\S+:9 does not increase on v:\S+:10 at line 3 \(invariant 5\)$/],
    ["jsonrpc-result-and-error", /^line 2: a response must have exactly one of result and error, it has both$/],
    ["jsonrpc-unmatched-response", /^line 2: response to id 7 matches no earlier client request$/],
    ["invariant-A-delta-gap", /^line 6: item\/delta of item 0198f0ad-\S+ has revision 4 after 2: a gap; revision 2 was at line 5 \(invariant A\)$/],
    ["invariant-A-delta-never-started", /^line 4: item\/delta for item 0198f0ad-\S+ before any item\/started of it \(invariant A\)$/],
    ["invariant-A-delta-after-completed", /^line 7: item\/delta for item 0198f0ad-\S+ after its item\/completed at line 6 \(invariant A\)$/],
    [
      "invariant-B-completed-text-differs",
      /^line 7: item\/completed of item 0198f0ad-\S+ does not extend its streamed text: from character 8 it has "World!", where the fold of its notifications up to line 6 has "world" \(invariant B\)$/,
    ],
  ];
  // Whole connections (from their session/create): checked without the mid-session mark.
  const whole: Array<[string, RegExp]> = [
    ["foreign-session", /^line 8: turn\/started for session 0198f0aa-2222-\S+, which this connection did not create or resume \(a foreign session\)$/],
    ["invariant-A-completed-never-started", /^line 8: item\/completed for item \S+ before any item\/started of it \(invariant A\)$/],
    ["invariant-A-stale-revision", /^line 12: item\/delta of item \S+ has revision 3, not above revision 4 at line 11: a step back \(invariant A\)$/],
    [
      "cut-message-not-interrupted",
      /^line 12: item\/completed of message \S+ is "cancelled" without interrupted: true: a text cut by a Stop must say so \(cut-off text\)$/,
    ],
    [
      "invariant-6-asked-twice",
      /^line 14: tool\/approve for item \S+ while the tool\/approve at line 13 about it is still open: at most one open question per item \(invariant 6\)$/,
    ],
    [
      "invariant-6-grant-too-wide",
      /^line 30: item\/updated: tool call \S+ \(shell \{"command":"echo three"\}\) ran under grant \S+, whose exact rule covers shell \{"command":"echo one"\}: a grant covers only the same call \(invariant 6\)$/,
    ],
    [
      "invariant-6-grant-rule-changed",
      /^line 30: item\/updated: item \S+ names grant \S+ with rule \["shell","\{\\"command\\":\\"echo one\\"\}","anyArgs"\], but item \S+ named it with .*"exact"\] \(invariant 6\)$/,
    ],
    // Invariant 6 (2.1) grants and denyAndStop, each approve-for-session.jsonl with lines dropped, moved or changed.
    [
      "invariant-6-grant-never-asked",
      /^line 15: item\/updated: item \S+ names grant \S+, which no earlier item of session \S+ named and no approveForSession answer to its own question created: a grant comes from an approveForSession answer \(invariant 6\)$/,
    ],
    [
      "invariant-6-grant-other-session",
      /^line 36: item\/updated: item \S+ names grant \S+, which no earlier item of session \S+5e55 named and no approveForSession answer to its own question created: .* \(invariant 6\)$/,
    ],
    [
      "invariant-6-grant-rule-not-offered",
      /^line 15: item\/updated: item \S+ names grant \S+ with rule \["shell",null,"anyArgs"\], but its question offered \["shell",.*"exact"\], answered approveForSession at line 14 \(invariant 6\)$/,
    ],
    [
      "invariant-6-grant-unknown-match",
      /^line 15: item\/updated: item \S+ names grant \S+ with match "any", which MSP 2.1 does not define \("exact" or "anyArgs"\) \(invariant 6\)$/,
    ],
    [
      "invariant-6-deny-and-stop-completes",
      /^line 46: turn\/completed of turn \S+ is completed with cause.kind missing, but the client answered denyAndStop at line 40: the turn ends cancelled, cause "user" \(invariant 6\)$/,
    ],
    [
      "cancel-cause-not-user",
      /^line 17: turn\/completed of turn \S+ is cancelled with cause.kind "disposed", but the host accepted the client's turn\/cancel at line 15: a Stop's cause is "user"$/,
    ],
    // Invariant S (MSP 2.1 steering), each a recording from the reference host with lines dropped, moved or added.
    [
      "invariant-S-no-splice",
      /^line 18: steering item of \S+ completes "cancelled" without carriedOver, but no inbox\/cancelled of turn \S+ before it lists it: discarded steering is listed in its turn's splice \(invariant S\)$/,
    ],
    [
      "invariant-S-splice-after-terminal",
      /^line 19: inbox\/cancelled for turn \S+ after its turn\/completed at line 18: the splice comes before the terminal \(invariant S\)$/,
    ],
    [
      "invariant-S-keepinbox-splice",
      /^line 19: inbox\/cancelled for turn \S+, whose turn\/cancel kept the inbox \(keepInbox: true\): a keepInbox cancel records no splice \(invariant S\)$/,
    ],
    ["invariant-S-carried-not-started", /^line 30: steer \S+, carried over at line 20, does not start in turn \S+, the session's next turn \(invariant S\)$/],
    [
      "invariant-S-steer-without-item",
      /^line 21: turn\/steer \S+, accepted at line 15, has no steering item \(a message with its steerId\) before turn \S+'s turn\/completed \(invariant S\)$/,
    ], // Recorded by muse check from the reference host behind one lying relay each (test/fixtures/broken-hosts).
    [
      "invariant-P-hook-stop-failed",
      /^line 11: turn\/completed of turn \S+ is failed with cause.kind "hook": a policy stop ends a turn cancelled \(invariant P\)$/,
    ],
    [
      "invariant-U-negative-count",
      /^line 17: turn\/completed: usage must be \{inputTokens, outputTokens, reasoningTokens\}, each a non-negative integer \(invariant U\)$/,
    ],
    ["invariant-A-revision-per-turn", /^line 16: item\/delta of item \S+ has revision 9 after 7: a gap; revision 7 was at line 12 \(invariant A\)$/],
  ];
  for (const [name, problem] of whole) {
    it(`rejects broken/${name}.jsonl, a whole connection, with one clear problem`, () => {
      const verdict = checkTranscript(read(`transcripts/broken/${name}.jsonl`));
      expect(verdict.ok).toBe(false);
      expect(verdict.problems).toHaveLength(1);
      expect(verdict.problems[0]).toMatch(problem);
    });
  }
  it("broken/invariant-6-answer-not-offered.jsonl: the client's answer was not offered, and the host ran the call anyway", () => {
    const { problems } = checkTranscript(read("transcripts/broken/invariant-6-answer-not-offered.jsonl"));
    expect(problems[0]).toMatch(
      /^line 13: tool\/approve id "approve-1": decision "approveForSession" was not offered \(approve, deny, denyAndStop\); the host refuses it and runs nothing \(invariant 6\)$/,
    );
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^line 14: item\/updated: tool call \S+, pending approval since line 11, set approval: "approved" with no approve answered while it was pending \(invariant 6\)$/,
      ),
    );
    // The refused answer created no grant: the item that names one names a grant nobody made.
    expect(problems).toContainEqual(expect.stringMatching(/^line 14: item\/updated: item \S+ names grant \S+, which no earlier item of session/));
  });
  it("broken/invariant-C-resume-items-behind.jsonl: a resume answer lists an item in progress unlike the stream up to its cursor (muse check's wire up to the resume, resume-items-behind.mjs)", () => {
    // The live turn goes on after the cursor: the slice is an excerpt.
    expect(checkTranscript(read("transcripts/broken/invariant-C-resume-items-behind.jsonl"), { excerpt: true }).problems).toEqual([
      expect.stringMatching(/^line 17: session\/resume lists item \S+ at revision 5 unlike the fold of its notifications up to line 15 \(invariant C\)$/),
    ]);
  });
  it("broken/invariant-7-child-never-ends.jsonl: a stopped tree whose child turns never end (muse check's wire, child-never-ends.mjs)", () => {
    expect(checkTranscript(read("transcripts/broken/invariant-7-child-never-ends.jsonl")).problems).toEqual([
      expect.stringMatching(/^line 55: turn\/completed of turn \S+ before the turn\/completed of its child turn \S+, linked at line 13 \(invariant 7\)$/),
      expect.stringMatching(/^line 55: turn\/completed of turn \S+ before the turn\/completed of its child turn \S+, linked at line 15 \(invariant 7\)$/),
    ]);
  });
  it("broken/invariant-6-runs-after-deny-and-stop.jsonl: a tool call runs after the client answered denyAndStop, and the turn completes", () => {
    expect(checkTranscript(read("transcripts/broken/invariant-6-runs-after-deny-and-stop.jsonl")).problems).toEqual([
      expect.stringMatching(
        /^line 41: item\/delta: tool call \S+ shows output after the client answered denyAndStop at line 36: the turn is stopping, nothing more runs \(invariant 6\)$/,
      ),
      expect.stringMatching(/^line 46: turn\/completed of turn \S+ is completed with cause.kind missing, but the client answered denyAndStop at line 36: /),
    ]);
  });
  it("an approveForSession answer to a question that stated no grant rule may create a grant with the rule the host chose", () => {
    const lines = read("transcripts/approve-for-session.jsonl")
      .trim()
      .split("\n")
      .map((text) => {
        const entry = JSON.parse(text) as { dir: string; raw: string };
        const msg = JSON.parse(entry.raw) as { method?: string; params?: Record<string, unknown> };
        if (msg.method === "tool/approve") delete msg.params?.["grant"];
        return JSON.stringify({ dir: entry.dir, raw: JSON.stringify(msg) });
      });
    expect(checkTranscript(lines).problems).toEqual([]);
  });
  it("the mid-session mark allows a foreign session, but an item of a session created in the transcript still starts first", () => {
    expect(checkExcerpt(read("transcripts/broken/foreign-session.jsonl")).problems).toEqual([]);
    expect(checkExcerpt(read("transcripts/broken/invariant-A-completed-never-started.jsonl")).problems).toHaveLength(1);
    // The same completion, its session and turn joined mid-way (no session/create or turn/started, the first cursor past 1): fine when marked, foreign when not.
    const joined = read("transcripts/broken/invariant-A-completed-never-started.jsonl").trim().split("\n").slice(7);
    expect(checkExcerpt(joined, { excerpt: true }).problems).toEqual([]);
    expect(checkTranscript(joined, { excerpt: true }).problems[0]).toMatch(/a foreign session/);
  });
  for (const [name, problem] of cases) {
    it(`rejects broken/${name}.jsonl with one clear problem`, () => {
      const verdict = checkExcerpt(read(`transcripts/broken/${name}.jsonl`));
      expect(verdict.ok).toBe(false);
      expect(verdict.problems).toHaveLength(1);
      expect(verdict.problems[0]).toMatch(problem);
    });
  }
});

describe("checkTranscript", () => {
  it("takes text, lines, or parsed lines alike", () => {
    const text = read("transcripts/cancel-race.jsonl");
    expect(checkExcerpt(text)).toEqual({ ok: true, problems: [] });
    expect(checkExcerpt(text.trimEnd().split("\n")).ok).toBe(true);
    expect(checkExcerpt(parseTranscript(text)).ok).toBe(true);
    const broken = read("transcripts/broken/invariant-4-early-already-terminal.jsonl");
    expect(checkExcerpt(parseTranscript(broken)).problems).toEqual(checkExcerpt(broken).problems);
  });

  it("lets an excerpt end before its turn does, but never forgives a duplicate terminal", () => {
    const open = [...start, note("turn/started", 1, { turnId: T })];
    expect(checkExcerpt(open).ok).toBe(false);
    expect(checkExcerpt(open, { excerpt: true })).toEqual({ ok: true, problems: [] });
    const dup = [...start, completed(1), completed(2)];
    expect(checkExcerpt(dup, { excerpt: true }).problems).toEqual([`line 4: a second turn/completed for turn ${T}; the first was at line 3 (invariant 1)`]);
  });

  it("accepts an item/completed with no item/started only where the transcript begins mid-session (its first cursor past 1, the turn not begun in it)", () => {
    const item = { itemId: "i1", kind: "message", turnId: T, revision: 3, status: "completed", recordedAt: "2025-08-07T18:42:45.000Z", text: "done" };
    expect(checkExcerpt([note("item/completed", 7, { item }), completed(8)], { excerpt: true }).problems).toEqual([]);
    expect(checkExcerpt([note("item/completed", 7, { item }), note("item/completed", 8, { item }), completed(9)], { excerpt: true }).problems).toEqual([
      "line 2: a second item/completed for item i1; the first was at line 1 (invariant 2)",
    ]);
    // The turn accepted here: its items start here.
    expect(checkExcerpt([...start, note("item/completed", 1, { item }), completed(2)]).problems).toEqual([
      "line 3: item/completed for item i1 before any item/started of it (invariant A)",
    ]);
  });

  it("flags nothing-after-terminal for turn/started too", () => {
    expect(checkExcerpt([...start, completed(1), note("turn/started", 2, { turnId: T })]).problems).toEqual([
      `line 4: turn/started for turn ${T} after its turn/completed at line 3 (invariant 3)`,
    ]);
  });

  it("compares viewCursors numerically by their trailing sequence, per session", () => {
    // "…:10" after "…:9" is an increase, though a string compare says otherwise.
    expect(checkExcerpt([...start, note("turn/started", 9, { turnId: T }), completed(10)]).ok).toBe(true);
    const other = server({ jsonrpc: "2.0", method: "turn/started", params: { sessionId: "other", viewCursor: "v:other:1", turnId: "t2" } });
    expect(checkExcerpt([...start, note("turn/started", 5, { turnId: T }), other, completed(6)]).ok).toBe(true);
    // Strict cursors: one that is not v:<sessionId>:<n> is a problem of its own, and compares with nothing.
    const opaque = (c: string) => server({ jsonrpc: "2.0", method: "turn/started", params: { sessionId: "x", viewCursor: c, turnId: `t-${c}` } });
    expect(checkExcerpt([opaque("v:x:2"), opaque("zzz"), opaque("v:x:1")]).problems).toEqual([
      'line 2: turn/started: viewCursor "zzz" is not a cursor of session x (v:<sessionId>:<n>, invariant 5)',
      "line 3: turn/started: viewCursor v:x:1 does not increase on v:x:2 at line 1 (invariant 5)",
    ]);
  });

  it("checks JSON-RPC well-formedness, one problem per line", () => {
    const problems = checkExcerpt([
      "not json",
      client({ jsonrpc: "1.0", id: 1, method: "host/info", params: { commandId: C } }),
      server({ jsonrpc: "2.0", id: 1 }),
      server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted" } }),
      server({ jsonrpc: "2.0", id: 1, result: { commandId: C, status: "accepted" } }),
      client({ jsonrpc: "2.0", id: 2, method: "host/info", params: { commandId: C } }),
      server({ jsonrpc: "2.0", id: 2, result: { status: "accepted" } }),
      server({ jsonrpc: "2.0", method: "turn/completed", params: { sessionId: S, viewCursor: "v:1", turnId: T, terminal: "stopped" } }),
    ]).problems;
    expect(problems).toEqual([
      "line 1: not JSON",
      'line 2: jsonrpc must be "2.0", got "1.0"',
      "line 3: a response must have exactly one of result and error, it has neither",
      "line 5: a second response to id 1 (host/info); the first was at line 4",
      "line 7: host/info: the result must carry the commandId",
      'line 8: turn/completed: terminal "stopped" is not one of completed, cancelled, failed',
    ]);
  });

  it("checks the parts of a reconnection as one history", () => {
    const crash = read("transcripts/survive-host-crash.jsonl");
    const resume = read("transcripts/survive-host-crash.2.jsonl");
    expect(checkTranscript(crash).ok).toBe(false);
    expect(checkTranscriptParts([crash, resume]).map((v) => v.ok)).toEqual([true, true]);
    // Replaying from the start instead of after the cursor duplicates what was seen.
    // (part 2's session/resume, then part 1's notifications, without its session/create and turn/start exchanges, then the rest of part 2)
    const [resumeRequest, ...resumeRest] = resume.trim().split("\n");
    const replayed = [resumeRequest, ...crash.split("\n").slice(4), ...resumeRest].join("\n");
    const [, replayAll] = checkTranscriptParts([crash, replayed], { excerpt: true });
    const last = crash.trim().split("\n").length - 1; // the last line is the unanswered host/info: the last cursor is the line before
    expect(replayAll?.problems[0]).toMatch(
      new RegExp(`^line 2 \\(part 2\\): turn/started: viewCursor \\S+:1 does not increase on \\S+:\\d+ at line ${last} \\(part 1\\) \\(invariant 5\\)$`),
    );
    expect(groupParts(["t/a.2.jsonl", "t/b.jsonl", "t/a.jsonl"])).toEqual([["t/a.jsonl", "t/a.2.jsonl"], ["t/b.jsonl"]]);
  });
});

describe("checkTranscript: a connection hears only its own sessions", () => {
  const resume = (id: number) => client({ jsonrpc: "2.0", id, method: "session/resume", params: { sessionId: S, commandId: C } });
  const resumed = (id: number) => server({ jsonrpc: "2.0", id, result: { commandId: C, status: "accepted", sessionId: S, replayed: 0 } });
  const refused = (id: number) =>
    server({ jsonrpc: "2.0", id, error: { code: -32001, message: "unknown session", data: { commandId: C, reason: "unknown_session" } } });
  const ask = server({
    jsonrpc: "2.0",
    id: "approve-1",
    method: "tool/approve",
    params: { sessionId: S, turnId: T, itemId: "i1", callId: "c1", tool: "shell", args: "{}" },
  });

  it("a session resumed here may replay before the resume's answer; one never resumed, or refused, is foreign", () => {
    expect(checkTranscript([resume(1), note("turn/started", 1, { turnId: T }), resumed(1), completed(2)]).problems).toEqual([]);
    expect(checkTranscript([note("turn/started", 1, { turnId: T })]).problems).toEqual([
      `line 1: turn/started for session ${S}, which this connection did not create or resume (a foreign session)`,
    ]);
    expect(checkTranscript([resume(1), refused(1), note("turn/started", 1, { turnId: T })]).problems).toEqual([
      `line 3: turn/started for session ${S}, which this connection did not create or resume (a foreign session)`,
    ]);
  });

  it("a tool/approve about a foreign session is one too; each part of a reconnection owns only what it created or resumed", () => {
    expect(checkTranscript([ask], { excerpt: true }).problems[0]).toBe(
      `line 1: tool/approve for session ${S}, which this connection did not create or resume (a foreign session)`,
    );
    const first = [resume(1), resumed(1), ...start, note("turn/started", 1, { turnId: T })];
    // Part 2 never resumed S: the mark applies to the first part only.
    const [, second] = checkTranscriptParts([first, [completed(2)]], { beginsMidSession: true });
    expect(second?.problems).toEqual([`line 1 (part 2): turn/completed for session ${S}, which this connection did not create or resume (a foreign session)`]);
  });

  it("a turn/completed answering this connection's turn/cancel may come from a session it did not resume (invariant 4 puts it before already_terminal)", () => {
    const cancel = client({ jsonrpc: "2.0", id: 1, method: "turn/cancel", params: { sessionId: S, turnId: T, commandId: C } });
    const late = server({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32001, message: "already terminal", data: { commandId: C, reason: "already_terminal", turnId: T } },
    });
    expect(checkTranscript([cancel, completed(7), late]).problems).toEqual([]);
    expect(checkTranscript([completed(7)]).problems[0]).toMatch(/a foreign session/);
  });

  it("a turn the client stopped ends with the user's cause, whether the cancel's answer comes before or after the terminal", () => {
    const cancel = client({ jsonrpc: "2.0", id: 2, method: "turn/cancel", params: { sessionId: S, turnId: T, commandId: C } });
    const ack = server({ jsonrpc: "2.0", id: 2, result: { commandId: C, status: "accepted" } });
    const ended = (kind: string) => note("turn/completed", 2, { turnId: T, terminal: "cancelled", reason: "cancelled", durationMs: 5, cause: { kind } });
    const begun = [resume(9), resumed(9), ...start, note("turn/started", 1, { turnId: T })];
    expect(checkTranscript([...begun, cancel, ack, ended("user")]).problems).toEqual([]);
    expect(checkTranscript([...begun, cancel, ack, ended("disposed")]).problems).toEqual([
      `line 8: turn/completed of turn ${T} is cancelled with cause.kind "disposed", but the host accepted the client's turn/cancel at line 7: a Stop's cause is "user"`,
    ]);
    expect(checkTranscript([...begun, cancel, ended("disposed"), ack]).problems).toEqual([
      `line 8: turn/completed of turn ${T} is cancelled with cause.kind "disposed", but the host accepted the client's turn/cancel at line 8: a Stop's cause is "user" (its turn/completed is at line 7)`,
    ]);
    // No accepted cancel: a host shutdown's cause is the host's to give.
    expect(checkTranscript([...begun, ended("disposed")]).problems).toEqual([]);
  });
});

describe("npm run transcripts:check", () => {
  it("exits 0 on the committed transcripts and non-zero, naming file and line, on a broken one", async () => {
    const { spawnSync } = await import("node:child_process");
    const ok = spawnSync(process.execPath, ["--import", "tsx", "scripts/transcripts-check.ts"], { encoding: "utf8" });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/✓ transcripts\/cancel-race\.jsonl\n/);
    const bad = spawnSync(
      process.execPath,
      ["--import", "tsx", "scripts/transcripts-check.ts", "transcripts/cancel-race.jsonl", "transcripts/broken/invariant-4-early-already-terminal.jsonl"],
      { encoding: "utf8" },
    );
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain(
      "✗ transcripts/broken/invariant-4-early-already-terminal.jsonl\n    transcripts/broken/invariant-4-early-already-terminal.jsonl: line 4: already_terminal rejection",
    );
    expect(bad.stdout).toMatch(/1 ok, 1 with problems\n$/);
  }, 30_000);
});

describe("checkTranscript on MSP 2.1 terminals (invariants U and P)", () => {
  const begun = [...start, note("turn/started", 1, { turnId: T })];
  const ended = (params: Record<string, unknown>) => [...begun, note("turn/completed", 2, { turnId: T, reason: "r", durationMs: 10, ...params })];

  it("accepts usage on a cancelled turn and a hook stop with its reason", () => {
    const usage = { inputTokens: 120, outputTokens: 8, reasoningTokens: 0 };
    expect(checkExcerpt(ended({ terminal: "cancelled", cause: { kind: "hook", reason: "turn time limit (500 ms)" }, usage })).problems).toEqual([]);
    expect(checkExcerpt(ended({ terminal: "failed", usage })).problems).toEqual([]);
  });

  it("reports a bad usage count as invariant U", () => {
    for (const usage of [
      { inputTokens: -3, outputTokens: 0, reasoningTokens: 0 },
      { inputTokens: 1, outputTokens: 0.5, reasoningTokens: 0 },
      { inputTokens: 1, outputTokens: 2 },
    ]) {
      const { problems } = checkExcerpt(ended({ terminal: "completed", usage }));
      expect(problems, JSON.stringify(usage)).toEqual([
        "line 4: turn/completed: usage must be {inputTokens, outputTokens, reasoningTokens}, each a non-negative integer (invariant U)",
      ]);
    }
  });

  it("reports a hook cause on a terminal that is not cancelled, or with no reason, as invariant P", () => {
    expect(checkExcerpt(ended({ terminal: "completed", cause: { kind: "hook", reason: "budget" } })).problems).toEqual([
      `line 4: turn/completed of turn ${T} is completed with cause.kind "hook": a policy stop ends a turn cancelled (invariant P)`,
    ]);
    const noReason = `line 4: turn/completed of turn ${T} has cause.kind "hook" with no reason: a policy stop says why, in a non-empty cause.reason (invariant P)`;
    expect(checkExcerpt(ended({ terminal: "cancelled", cause: { kind: "hook", reason: "" } })).problems).toEqual([noReason]);
    expect(checkExcerpt(ended({ terminal: "cancelled", cause: { kind: "hook" } })).problems).toEqual([noReason]);
    expect(checkExcerpt(ended({ terminal: "failed", cause: { kind: "hook", reason: "  " } })).problems).toHaveLength(2);
  });
});
