import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { recipes } from "../../recipes/index.js";

const required = [
  "cancel-mid-turn",
  "cancel-race",
  "stale-turn",
  "cancel-before-ack",
  "two-waiters",
  "keep-inbox",
  "fingerprint-check",
  "switch-model",
  "survive-host-crash",
  "approve-tool",
  "deny-tool",
  "stop-while-asking",
  "approve-for-session",
  "steer-a-running-turn",
  "stop-a-subagent-tree",
  "subagent-fails-on-its-own",
  "stop-while-subagent-asks",
  "subagent-tree-restart",
  "stop-a-codex-turn",
  "stop-an-acp-turn",
];

describe("the cookbook", () => {
  it("registers every recipe the issue asks for, each name once", () => {
    const names = recipes.map((r) => r.name);
    for (const name of required) expect(names).toContain(name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives every recipe its own file with a header comment, and an existing transcript", () => {
    for (const recipe of recipes) {
      const source = readFileSync(`recipes/${recipe.name}.ts`, "utf8");
      expect(source.startsWith(`/**\n * ${recipe.name}: `), `${recipe.name} header`).toBe(true);
      expect(existsSync(`transcripts/${recipe.transcript}`), recipe.transcript).toBe(true);
      expect(source, `${recipe.name} imports only the public API`).not.toMatch(/from "\.\.\/src\//);
    }
  });

  it("runs every recipe's canned arm: N passed, 0 failed", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "recipes/run.ts", "--canned"], { encoding: "utf8", timeout: 120_000 });
    expect(run.stdout).toMatch(new RegExp(`\\n${recipes.length} passed, 0 failed\\n$`));
    expect(run.status).toBe(0);
  }, 120_000);

  it("fails a recipe whose transcript disagrees with it, naming the recipe", () => {
    // stale-turn with another recipe's transcript: the canned host sees an unexpected command.
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `
      const { recipes } = await import("./recipes/index.ts");
      const stale = recipes.find((r) => r.name === "stale-turn");
      stale.transcript = "cancel-race.jsonl";
      process.argv.push("--canned", "--only", "stale-turn");
      await import("./recipes/run.ts");
    `,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(run.stdout).toMatch(/✗ stale-turn \(canned\)/);
    expect(run.stdout).toMatch(/0 passed, 1 failed/);
    expect(run.status).not.toBe(0);
  }, 60_000);
});
