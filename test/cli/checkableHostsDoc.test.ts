/** docs/checkable-hosts.md stays true: its directives are directives, and its scenario table names every scenario, in order. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_SCENARIOS } from "../../packages/host/src/cli/check/index.js";
import { checkTurnOf } from "../../packages/host/src/model/checkModel.js";
import { repoRoot } from "../helpers/repoRoot.js";

const page = readFileSync(join(repoRoot, "docs/checkable-hosts.md"), "utf8");

/** The fenced block right after each `<!-- marker -->` line. */
function blocksAfter(marker: string): string[] {
  const out: string[] = [];
  const lines = page.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() !== `<!-- ${marker} -->`) return;
    const end = lines.indexOf("```", i + 2);
    out.push(lines.slice(i + 2, end).join("\n"));
  });
  return out;
}

describe("docs/checkable-hosts.md", () => {
  it("shows directives the msp-check model accepts", () => {
    const directives = blocksAfter("checked directive");
    expect(directives).toHaveLength(6);
    for (const text of directives) {
      const turn = checkTurnOf([{ type: "text", text }]);
      expect(turn.steps.length).toBeGreaterThan(0);
      expect(turn.steps[0]?.text).not.toMatch(/msp-check model: send a JSON directive/);
    }
  });

  it("lists every scenario in its table, in the order they run", () => {
    const rows = page
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| scenario") && !line.startsWith("| step key"))
      .map((line) => line.split("|")[1]?.trim())
      .filter((name) => name !== undefined && CHECK_SCENARIOS.includes(name));
    expect(rows).toEqual([...CHECK_SCENARIOS]);
  });
});
