import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkTranscript, checkTranscriptParts } from "../../src/testing/index.js";

const read = (path: string) => readFileSync(path, "utf8");
const lines = (path: string) => read(path).trimEnd().split("\n");
const GOOD = "test/fixtures/subagents/good-tree.jsonl";
const raw = (line: string) => JSON.parse((JSON.parse(line) as { raw: string }).raw) as Record<string, unknown> & { params?: Record<string, unknown> };
const row = (dir: "client" | "server", message: unknown) => JSON.stringify({ dir, raw: JSON.stringify(message) });
/** The good tree's line `n` (1-based) with its raw message changed by `edit`. */
const edited = (all: string[], n: number, edit: (message: ReturnType<typeof raw>) => void) =>
  all.map((line, i) => {
    if (i !== n - 1) return line;
    const message = raw(line);
    edit(message);
    return row(JSON.parse(line).dir as "client" | "server", message);
  });

const S1 = "01a23400-0a00-7000-8000-00000000a001";
const S2 = "01a23400-0b00-7000-8000-00000000b002";
const S3 = "01a23400-0c00-7000-8000-00000000c003";
const T2 = "01a23400-1b00-7000-8000-0000000001b2";

describe("checkTranscript on a subagent tree (invariant 7)", () => {
  it("accepts the hand-written good tree: children heard from their links, the tree ended from the leaves up", () => {
    expect(checkTranscript(read(GOOD)).problems).toEqual([]);
  });

  const broken: Array<[string, RegExp]> = [
    [
      "invariant-7-parent-ends-first",
      /^line 14: turn\/completed of turn 01a23400-1a00-\S+ before the turn\/completed of its child turn 01a23400-1b00-\S+, linked at line 7 \(invariant 7\)$/,
    ],
    [
      "invariant-7-child-never-linked",
      /^line 7: turn\/started of child turn 01a23400-1b00-\S+ names item 01a23400-2a00-\S+ of turn 01a23400-1a00-\S+ \(session \S+\), but no item\/updated before it linked that item to this turn with subagent \(invariant 7\)$/,
    ],
    [
      "invariant-7-parent-cause-without-cancel",
      /^line 14: turn\/completed of turn 01a23400-1a00-\S+ is completed, but its child turn 01a23400-1b00-\S+ ended cancelled with cause.kind "parent" at line 12: only a cancelled parent stops its children \(invariant 7\)$/,
    ],
  ];
  for (const [name, problem] of broken) {
    it(`rejects broken/${name}.jsonl, a hand-written tree, with one clear problem`, () => {
      const verdict = checkTranscript(read(`transcripts/broken/${name}.jsonl`));
      expect(verdict.problems).toHaveLength(1);
      expect(verdict.problems[0]).toMatch(problem);
    });
  }

  it("rejects a link that names another turn or session than the child's turn/started", () => {
    const all = lines(GOOD);
    const n = all.findIndex((l) => raw(l).method === "turn/started" && raw(l).params?.["turnId"] === T2) + 1;
    const wrongItem = edited(all, n, (m) => ((m.params?.["parent"] as Record<string, unknown>)["itemId"] = "01a23400-2a10-7000-8000-0000000002a4"));
    expect(checkTranscript(wrongItem).problems).toEqual([
      expect.stringMatching(
        new RegExp(`^line ${n}: turn/started of child turn ${T2} names item \\S+2a4 .*but the subagent link at line \\d+ is item \\S+2a1 .*\\(invariant 7\\)$`),
      ),
    ]);
    const wrongDepth = edited(all, n, (m) => (m.params!["depth"] = 2));
    expect(checkTranscript(wrongDepth).problems).toEqual([
      `line ${n}: turn/started of child turn ${T2} says depth 2, but its parent turn 01a23400-1a00-7000-8000-0000000001a1 is at depth 0 (invariant 7)`,
    ]);
    const badLink = edited(all, n, (m) => delete m.params!["depth"]);
    expect(checkTranscript(badLink).problems).toEqual([
      `line ${n}: turn/started: a child turn's depth must be a positive integer (1 below a top-level turn) (invariant 7)`,
    ]);
  });

  it("rejects cause parent on a turn no link made a child, and on a child whose parent had already ended uncancelled", () => {
    const all = lines(GOOD);
    // The first child (…d004) completes; say instead that its parent stopped it, then the top-level turn ends completed.
    const top = all.length;
    const uncancelled = edited(all, top, (m) => {
      m.params!["terminal"] = "completed";
      m.params!["reason"] = "completed";
      delete m.params!["cause"];
    });
    const problems = checkTranscript(uncancelled).problems;
    expect(problems.some((p) => /cause.kind "parent" at line \d+: only a cancelled parent stops its children/.test(p))).toBe(true);
    const lone = [
      ...lines("transcripts/getting-started.jsonl").slice(0, -1),
      ...lines("transcripts/getting-started.jsonl")
        .slice(-1)
        .map((l) => {
          const m = raw(l);
          Object.assign(m.params!, { terminal: "cancelled", reason: "cancelled during model stream", cause: { kind: "parent" } });
          return row("server", m);
        }),
    ];
    expect(checkTranscript(lone).problems).toEqual([
      expect.stringMatching(
        /^line \d+: turn\/completed of turn \S+ has cause.kind "parent", but no subagent link or turn\/started made it a child turn \(invariant 7\)$/,
      ),
    ]);
  });

  it("counts a child session as heard from its link on, and only a session linked below a heard one", () => {
    const all = lines(GOOD);
    // Without its link and parent, the grandchild's session is foreign: nothing this connection hears names it.
    const cut = all.filter((l) => {
      const m = raw(l);
      return !(m.method === "item/updated" && (m.params?.["item"] as Record<string, unknown>)["subagent"] !== undefined && m.params?.["sessionId"] === S2);
    });
    const n = cut.findIndex((l) => raw(l).params?.["sessionId"] === S3) + 1;
    const orphan = edited(cut, n, (m) => {
      delete m.params!["parent"];
      delete m.params!["depth"];
    });
    expect(checkTranscript(orphan).problems[0]).toBe(
      `line ${n}: turn/started for session ${S3}, which this connection did not create or resume (a foreign session)`,
    );
    // With its link but no parent: one problem (the missing parent), and the session is heard from the link.
    const m = all.findIndex((l) => raw(l).method === "turn/started" && raw(l).params?.["sessionId"] === S3) + 1;
    const unnamed = edited(all, m, (msg) => {
      delete msg.params!["parent"];
      delete msg.params!["depth"];
    });
    expect(checkTranscript(unnamed).problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^line ${m}: turn/started of turn \\S+ names no parent, but the subagent link at line ${m - 1} made it a child turn of item \\S+ \\(invariant 7\\)$`,
        ),
      ),
    ]);
    // A link in a session the connection does not hear makes nothing heard.
    const notOurs = lines(GOOD).slice(2); // no session/create: the top-level session is foreign, and so its tree
    const problems = checkTranscript(notOurs, { excerpt: true }).problems;
    expect(problems.filter((p) => p.includes(`session ${S2}, which this connection did not`)).length).toBeGreaterThan(0);
  });

  it("hears the tree of a resumed session on a new connection: the sessions known below it, and those named in childCursors", () => {
    const all = lines(GOOD);
    const cancelAt = all.findIndex((l) => raw(l).method === "turn/cancel");
    const cursorOf = (session: string) =>
      all
        .slice(0, cancelAt)
        .map(raw)
        .filter((m) => m.params?.["sessionId"] === session && typeof m.params?.["viewCursor"] === "string")
        .map((m) => m.params!["viewCursor"] as string)
        .at(-1) as string;
    const resume = (params: Record<string, unknown>) => [
      row("client", {
        jsonrpc: "2.0",
        id: 1,
        method: "session/resume",
        params: { commandId: "01a23400-0000-7000-8000-00000000c0r1", sessionId: S1, afterCursor: cursorOf(S1), ...params },
      }),
      row("server", {
        jsonrpc: "2.0",
        id: 1,
        result: { commandId: "01a23400-0000-7000-8000-00000000c0r1", status: "accepted", sessionId: S1, replayed: 0, items: [] },
      }),
    ];
    const rest = all.slice(cancelAt).map((l) => {
      const m = raw(l);
      if (m.method === "turn/cancel") m.id = 2;
      else if ("result" in m) m.id = 2;
      return row(JSON.parse(l).dir as "client" | "server", m);
    });
    const first = all.slice(0, cancelAt);
    expect(checkTranscriptParts([first, [...resume({}), ...rest]]).map((v) => v.problems)).toEqual([[], []]);
    expect(checkTranscriptParts([first, [...resume({ childCursors: { [S2]: cursorOf(S2), [S3]: cursorOf(S3) } }), ...rest]]).map((v) => v.problems)).toEqual([
      [],
      [],
    ]);
    // Alone, the second connection hears only what it resumed: here, the children's notifications come with no link to hear them by.
    const alone = checkTranscript([...resume({}), ...rest], { beginsMidSession: false, excerpt: true }).problems;
    expect(alone.some((p) => p.includes(`session ${S3}, which this connection did not create or resume`))).toBe(true);
    const named = checkTranscript([...resume({ childCursors: { [S2]: cursorOf(S2), [S3]: cursorOf(S3) } }), ...rest], { excerpt: true }).problems;
    expect(named.filter((p) => p.includes("a foreign session"))).toEqual([]);
  });
});
