/**
 * The recorded subagent trees (issue 23) against invariant 7: the committed wires keep it, and
 * the same wires with a subagent's terminal moved after its parent's (a replay that sends the
 * resumed session before its subagents, a host ending the parent first) are caught. The restart's
 * second part is one `session/resume` of the parent with `childCursors`, and its delegating calls
 * keep their subagents' last messages. Tests read the fixtures; they never regenerate them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkTranscriptParts } from "../../src/testing/index.js";

const read = (name: string) => readFileSync(`transcripts/${name}`, "utf8").split("\n").filter(Boolean);
const methodOf = (line: string) => (JSON.parse(String((JSON.parse(line) as { raw: string }).raw)) as { method?: string }).method;

interface Message {
  method?: string;
  id?: number;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
}
const messageOf = (line: string) => JSON.parse(String((JSON.parse(line) as { raw: string }).raw)) as Message;

describe("the recorded subagent trees and invariant 7", () => {
  it("keep it: stop-a-subagent-tree, subagent-fails-on-its-own, stop-while-subagent-asks, subagent-tree-restart (two parts)", () => {
    for (const name of ["stop-a-subagent-tree.jsonl", "subagent-fails-on-its-own.jsonl", "stop-while-subagent-asks.jsonl"]) {
      expect(checkTranscriptParts([read(name).join("\n")])[0]?.problems, name).toEqual([]);
    }
    const parts = ["subagent-tree-restart.jsonl", "subagent-tree-restart.2.jsonl"].map((name) => read(name).join("\n"));
    expect(checkTranscriptParts(parts).flatMap((part) => part.problems)).toEqual([]);
  });

  it("catch a restart's replay that sends the resumed parent before its subagents: its terminal would come before theirs", () => {
    const [first, second] = ["subagent-tree-restart.jsonl", "subagent-tree-restart.2.jsonl"].map(read) as [string[], string[]];
    const resume = second.findIndex((line) => methodOf(line) === "session/resume");
    const parentSession = messageOf(second[resume] as string).params?.["sessionId"];
    // The replay after the answer, with the parent session's notifications moved ahead of its subagents'.
    const replay = second.slice(resume + 2);
    const own = replay.filter((line) => messageOf(line).params?.["sessionId"] === parentSession);
    expect(own.length).toBeGreaterThan(0);
    expect(own.length).toBeLessThan(replay.length);
    const parentFirst = [...second.slice(0, resume + 2), ...own, ...replay.filter((line) => !own.includes(line))];
    const problems = checkTranscriptParts([first.join("\n"), parentFirst.join("\n")]).flatMap((part) => part.problems);
    expect(
      problems.some((p) => /turn\/completed of turn .* before the turn\/completed of its child turn/.test(p)),
      problems.join("\n"),
    ).toBe(true);
  });

  it("show the restart as one resume of the parent with childCursors, delegating calls closed with their subagents' last messages", () => {
    const [first, second] = ["subagent-tree-restart.jsonl", "subagent-tree-restart.2.jsonl"].map((name) => read(name).map(messageOf)) as [Message[], Message[]];
    // The subagent sessions part 1 saw start, each with its turn.
    const children = first
      .filter((m) => m.method === "turn/started" && m.params?.["parent"] !== undefined)
      .map((m) => ({ sessionId: String(m.params?.["sessionId"]), turnId: String(m.params?.["turnId"]) }));
    expect(children).toHaveLength(2);
    const resumes = second.filter((m) => m.method === "session/resume");
    expect(resumes).toHaveLength(1);
    const childCursors = resumes[0]?.params?.["childCursors"] as Record<string, string>;
    expect(Object.keys(childCursors).sort()).toEqual(children.map((c) => c.sessionId).sort());
    // Each child cursor is the last one part 1 saw of that session.
    for (const { sessionId } of children) {
      const seen = first.filter((m) => m.params?.["sessionId"] === sessionId && typeof m.params["viewCursor"] === "string").at(-1);
      expect(childCursors[sessionId]).toBe(seen?.params?.["viewCursor"]);
    }
    // What each subagent last said in part 1, and the delegating calls part 2 closes.
    const said = new Map<string, string>();
    for (const m of first) {
      const item = m.params?.["item"] as { kind?: string; turnId?: string; text?: string } | undefined;
      if (m.method === "item/completed" && item?.kind === "message") said.set(String(item.turnId), String(item.text));
    }
    const delegating = second
      .filter((m) => m.method === "item/completed")
      .map((m) => m.params?.["item"] as { status: string; failureReason?: string; visibleOutput: string; subagent?: { turnId: string } })
      .filter((item) => item.subagent !== undefined);
    expect(delegating).toHaveLength(2);
    for (const call of delegating) {
      expect(call).toMatchObject({ status: "failed", failureReason: "host restarted" });
      expect(said.get(call.subagent?.turnId as string)).toBeTruthy();
      expect(call.visibleOutput).toBe(said.get(call.subagent?.turnId as string));
    }
  });

  it("catch a stopped tree whose parent ends before a subagent", () => {
    const lines = read("stop-a-subagent-tree.jsonl");
    // The grandchild's turn/completed moved to the very end, after every other terminal.
    const grandchildEnd = lines.findIndex((line) => methodOf(line) === "turn/completed");
    const moved = [...lines.slice(0, grandchildEnd), ...lines.slice(grandchildEnd + 1), lines[grandchildEnd] as string];
    const problems = checkTranscriptParts([moved.join("\n")])[0]?.problems ?? [];
    expect(
      problems.some((p) => /before the turn\/completed of its child turn/.test(p)),
      problems.join("\n"),
    ).toBe(true);
  });
});
