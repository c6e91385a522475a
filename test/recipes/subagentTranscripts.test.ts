/**
 * The recorded subagent trees (issue 23) against invariant 7: the committed wires keep it, and
 * the same wires with a subagent's terminal moved after its parent's (a parent resumed before its
 * subagents, a host ending the parent first) are caught. Tests read the fixtures; they never
 * regenerate them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkTranscriptParts } from "../../src/testing/index.js";

const read = (name: string) => readFileSync(`transcripts/${name}`, "utf8").split("\n").filter(Boolean);
const methodOf = (line: string) => (JSON.parse(String((JSON.parse(line) as { raw: string }).raw)) as { method?: string }).method;

describe("the recorded subagent trees and invariant 7", () => {
  it("keep it: stop-a-subagent-tree, subagent-fails-on-its-own, stop-while-subagent-asks, subagent-tree-restart (two parts)", () => {
    for (const name of ["stop-a-subagent-tree.jsonl", "subagent-fails-on-its-own.jsonl", "stop-while-subagent-asks.jsonl"]) {
      expect(checkTranscriptParts([read(name).join("\n")])[0]?.problems, name).toEqual([]);
    }
    const parts = ["subagent-tree-restart.jsonl", "subagent-tree-restart.2.jsonl"].map((name) => read(name).join("\n"));
    expect(checkTranscriptParts(parts).flatMap((part) => part.problems)).toEqual([]);
  });

  it("catch a restart's parent resumed before its subagents: its terminal would come before theirs", () => {
    const [first, second] = ["subagent-tree-restart.jsonl", "subagent-tree-restart.2.jsonl"].map(read) as [string[], string[]];
    // Part 2 is three resumes (4, 5 and 5 lines), deepest first; put the parent's (the last) first.
    const resumes = [second.slice(0, 4), second.slice(4, 9), second.slice(9)];
    expect(resumes.map((r) => methodOf(r[0] as string))).toEqual(["session/resume", "session/resume", "session/resume"]);
    const parentFirst = [...(resumes[2] as string[]), ...(resumes[0] as string[]), ...(resumes[1] as string[])];
    const problems = checkTranscriptParts([first.join("\n"), parentFirst.join("\n")]).flatMap((part) => part.problems);
    expect(
      problems.some((p) => /turn\/completed of turn .* before the turn\/completed of its child turn/.test(p)),
      problems.join("\n"),
    ).toBe(true);
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
