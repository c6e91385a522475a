/**
 * The committed transcripts are MSP 2.0 wires recorded from the recipes' live arms: a streamed
 * text grows only by item/delta appends, other changes are item/updated patches, and every
 * item/completed is the fold (foldItem) of what came before it. Tests read the fixtures; they never
 * regenerate them.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { foldItem, type Item } from "../../src/index.js";
import { readTranscript } from "../../src/testing/index.js";
import { recipes } from "../../recipes/index.js";
import { hasLiveArm } from "../../recipes/recipe.js";

const files = readdirSync("transcripts")
  .filter((name) => name.endsWith(".jsonl"))
  .sort();

/** The parts of one scenario, `x.jsonl`, `x.2.jsonl`, …, in order. */
function scenarios(): string[][] {
  const byStem = new Map<string, string[]>();
  for (const name of files) {
    const stem = name.replace(/(\.\d+)?\.jsonl$/, "");
    byStem.set(stem, [...(byStem.get(stem) ?? []), name]);
  }
  return [...byStem.values()].map((parts) => parts.sort((a, b) => a.length - b.length || a.localeCompare(b)));
}

/** Fields an item/completed may set that no delta or patch did before it. */
const SET_BY_COMPLETION = new Set(["status", "revision", "recordedAt", "interrupted", "failureReason", "error"]);

/**
 * A delegating tool call (issue 23: it carries a `subagent` link) gets its `visibleOutput` at
 * completion: its subagent's last message, so far (docs/protocol.md, "The result"). True when the
 * completed call's output is exactly the text of the last message item of the linked child turn.
 */
function delegatedResult(held: ReadonlyMap<string, Item>, folded: Record<string, unknown>, completed: Record<string, unknown>): boolean {
  const link = folded["subagent"] as { turnId?: unknown } | undefined;
  if (link === undefined || typeof link.turnId !== "string") return false;
  const messages = [...held.values()].filter((item) => item.turnId === link.turnId && item.kind === "message" && item.author === undefined);
  const last = messages.at(-1);
  return last?.kind === "message" && completed["visibleOutput"] === last.text;
}

describe("the committed transcripts", () => {
  it("come from a recipe's live arm: every recipe but canned-host-test has one", () => {
    const withoutLiveArm = recipes.filter((r) => !hasLiveArm(r)).map((r) => r.name);
    expect(withoutLiveArm).toEqual(["canned-host-test"]);
  });

  // Recorded from the reference host before it announced MSP 2.1 (issue 22 complete): the
  // transcripts are fixtures and are not re-recorded, so they say 2.0, which the SDK (2.1) accepts
  // like any 2.x. The live host says 2.1; the recipes' live runs check that, not these files.
  it("answer host/info with MSP 2.0 (recorded before the host announced 2.1), except the hand-written host from the future (3.0)", () => {
    const versions: string[] = [];
    for (const name of files) {
      for (const { message } of readTranscript(`transcripts/${name}`)) {
        const version = (message["result"] as Record<string, unknown> | undefined)?.["protocolVersion"];
        if (typeof version === "string") versions.push(`${name}: ${version}`);
      }
    }
    expect(versions).toContain("fingerprint-check.2.jsonl: 3.0");
    expect(versions.filter((v) => !v.endsWith(": 2.0"))).toEqual(["fingerprint-check.2.jsonl: 3.0"]);
  });

  for (const parts of scenarios()) {
    it(`${parts.join(" + ")}: texts grow by item/delta only, and each item/completed is the fold of what came before`, () => {
      const held = new Map<string, Item>();
      const problems: string[] = [];
      for (const name of parts) {
        for (const { line, message } of readTranscript(`transcripts/${name}`)) {
          const where = `${name}:${line}`;
          const items = (message["result"] as Record<string, unknown> | undefined)?.["items"];
          if (Array.isArray(items)) for (const item of items as Item[]) held.set(item.itemId, item);
          const method = message["method"];
          if (typeof method !== "string" || !method.startsWith("item/")) continue;
          const params = message["params"] as Record<string, unknown>;
          const patch = params["item"] as Record<string, unknown> | undefined;
          if (method === "item/updated" && patch !== undefined && ("text" in patch || "visibleOutput" in patch)) {
            problems.push(`${where}: an item/updated patch carries text or visibleOutput (MSP 1.0's whole item)`);
          }
          const itemId = String(method === "item/delta" ? params["itemId"] : patch?.["itemId"]);
          const before = held.get(itemId);
          if (method === "item/completed") {
            const completed = patch as Record<string, unknown>;
            if (before === undefined) problems.push(`${where}: item/completed of an item never started`);
            else {
              const folded = before as unknown as Record<string, unknown>;
              for (const key of new Set([...Object.keys(folded), ...Object.keys(completed)])) {
                if (key === "visibleOutput" && delegatedResult(held, folded, completed)) continue;
                if (!SET_BY_COMPLETION.has(key) && JSON.stringify(folded[key]) !== JSON.stringify(completed[key])) {
                  problems.push(`${where}: item/completed ${key} is ${JSON.stringify(completed[key])}, the fold has ${JSON.stringify(folded[key])}`);
                }
              }
              if (completed["revision"] !== before.revision + 1)
                problems.push(`${where}: item/completed revision ${String(completed["revision"])} after ${before.revision}`);
            }
          }
          const next = foldItem(before, method, params);
          if (typeof next === "string") problems.push(`${where}: ${next}`);
          else if (next === undefined) problems.push(`${where}: ${method} changes nothing (already reflected)`);
          else held.set(itemId, next);
        }
      }
      expect(problems).toEqual([]);
      expect([...held.values()].filter((item) => item.status === "inProgress").map((item) => item.itemId)).toEqual([]);
    });
  }
});
