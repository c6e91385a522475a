/**
 * What `muse-host` tells a person: `--help` explains every flag (with defaults and units), a bad
 * command line gets the synopsis, and a broken model file is named with line and column.
 * Real processes for the CLI paths.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HELP, USAGE, parseServeArgs } from "../../packages/host/src/serve/serveArgs.js";
import { DEFAULT_KILL_GRACE_MS, DEFAULT_OUTPUT_CAP_BYTES } from "../../packages/host/src/tools/shellTool.js";
import { repoRoot } from "../helpers/repoRoot.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function museHost(args: string[], env: NodeJS.ProcessEnv = process.env): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ["--import", "tsx", "packages/host/src/serve/main.ts", ...args], {
    cwd: repoRoot,
    env,
    encoding: "utf8",
    input: "",
    timeout: 20_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The flags the synopsis shows, e.g. `--kill-grace-ms`. */
const synopsisFlags = [...new Set(USAGE.match(/--[a-z-]+/g) ?? [])];

describe("muse-host --help", () => {
  it("prints one explaining line per flag, with the defaults and units of the numeric ones", () => {
    expect(synopsisFlags).toEqual([
      "--stdio",
      "--ws",
      "--script",
      "--agent",
      "--data",
      "--agent-bin",
      "--model",
      "--default-model",
      "--kill-grace-ms",
      "--turn-time-limit-ms",
      "--max-subagent-depth",
      "--max-subagents-per-turn",
      "--output-cap-bytes",
      "--max-open-logs",
      "--max-live-sessions",
      "--lock-stale-ms",
      "--max-message-bytes",
      "--token-file",
      "--allow-origin",
      "--allow-remote",
      "--ui",
      "--ui-dir",
      "--max-send-queue-bytes",
      "--stall-timeout-ms",
      "--max-connections",
      "--max-sessions-per-connection",
      "--version",
      "--help",
    ]);
    for (const flag of synopsisFlags) {
      const line = HELP.split("\n").find((l) => new RegExp(`^  ${flag}\\b`).test(l));
      expect(line, flag).toBeDefined();
      // the flag, its argument, then at least a few words saying what it does
      expect(line?.replace(/^\s+\S+( [A-Z=]+)?(, -h)?\s+/, "").split(" ").length, flag).toBeGreaterThanOrEqual(4);
    }
    expect(HELP).toMatch(/--kill-grace-ms N +on cancel or shutdown, milliseconds from SIGTERM to SIGKILL[\s\S]*\(default: 2000\)/);
    expect(HELP).toContain(`(default: ${DEFAULT_KILL_GRACE_MS})`);
    expect(HELP).toMatch(/--output-cap-bytes N +bytes of output kept per tool call[\s\S]*\(default: 65536\)/);
    expect(HELP).toContain(`(default: ${DEFAULT_OUTPUT_CAP_BYTES})`);
    expect(HELP).toMatch(/--max-open-logs N +session-log file descriptors kept open[\s\S]*\(default: 128, or a\s+quarter of ulimit -n if lower\)/);
    expect(HELP).toMatch(/--max-live-sessions N +sessions kept loaded in memory[\s\S]*\(default: 1000\)/);
    expect(HELP).toMatch(/--data DIR .*\n.*default: a fresh temp dir, removed when the host exits/);
  });

  it("every flag parseServeArgs accepts is in the help, and the help names no flag it rejects", () => {
    const helpFlags = [...new Set(HELP.match(/^ {2}--[a-z-]+/gm)?.map((f) => f.trim()) ?? [])];
    const serveFlags = helpFlags.filter((f) => f !== "--version" && f !== "--help");
    const valueOf: Record<string, string> = {
      "--script": "a.json",
      "--agent": "codex",
      "--agent-bin": "/bin/codex",
      "--data": "/d",
      "--model": "m=a.json",
      "--default-model": "m",
      "--kill-grace-ms": "1",
      "--turn-time-limit-ms": "1",
      "--max-subagent-depth": "1",
      "--max-subagents-per-turn": "1",
      "--output-cap-bytes": "1",
      "--max-open-logs": "1",
      "--max-live-sessions": "1",
      "--lock-stale-ms": "2000",
      "--ws": "0",
      "--max-message-bytes": "1",
      "--token-file": "t",
      "--allow-origin": "http://localhost:1",
      "--ui-dir": "/ui",
      "--max-send-queue-bytes": "1",
      "--stall-timeout-ms": "1",
      "--max-connections": "1",
      "--max-sessions-per-connection": "1",
    };
    for (const flag of serveFlags) {
      // The agent's flags go without a script (an agent runs the turns instead).
      const turns = flag === "--agent-bin" ? ["--agent", "codex"] : flag === "--agent" || flag === "--script" ? [] : ["--script", "a.json"];
      const args = ["--stdio", "--ws", "0", ...turns, flag, ...(valueOf[flag] === undefined ? [] : [valueOf[flag]])];
      expect(() => parseServeArgs(args), flag).not.toThrow();
    }
    expect(serveFlags.sort()).toEqual(synopsisFlags.filter((f) => f !== "--version" && f !== "--help").sort());
  });

  it("the real process prints the help on stdout and exits 0; a bad flag gets the synopsis and a pointer to --help, exit 2", () => {
    const help = museHost(["--help"]);
    expect(help).toMatchObject({ status: 0, stdout: `${HELP}\n`, stderr: "" });
    expect(museHost(["serve", "--stdio", "--help"])).toMatchObject({ status: 0, stdout: `${HELP}\n`, stderr: "" });
    const bad = museHost(["serve", "--stdio", "--script", "a.json", "--kill-grace", "5"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(`muse-host: unknown option --kill-grace\n${USAGE}\n(muse-host --help says what each flag does)\n`);
  });
});

describe("muse-host with a broken model file", () => {
  function modelFile(text: string): string {
    const dir = mkdtempSync(join(tmpdir(), "muse-model-cli-"));
    dirs.push(dir);
    const path = join(dir, "model.json");
    writeFileSync(path, text);
    return path;
  }

  it("invalid JSON: one line, file:line:column: what is wrong; exit 2, no usage", () => {
    const path = modelFile('{\n  "turns": [\n    { "steps": [{ "text": "hi" }] }\n    { "steps": [] }\n  ]\n}\n');
    const run = museHost(["serve", "--stdio", "--script", path]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`muse-host: ${path}:4:5: invalid JSON: expected ',' or ']' after an array element, found '{'\n`);
  });

  it("a typo'd key: one line naming the file, the JSON path and the key it probably meant; exit 2", () => {
    const path = modelFile(JSON.stringify({ turns: [{ steps: [{ text: "a" }, { txt: "b" }] }] }));
    const run = museHost(["serve", "--stdio", "--model", `typo=${path}`]);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      `muse-host: ${path}: invalid scripted model at $.turns[0].steps[1].txt: unknown key (expected one of reasoning, text, chunkSize, chunkDelayMs, toolCalls, usage, stopByHook, fail, consumesSteering, awaitSteeringMs; did you mean text?)\n`,
    );
  });
});

describe("muse-host serve --agent", () => {
  it("--agent codex needs no script and takes --agent-bin; a script beside it, another agent, or --agent-bin alone is refused", () => {
    expect(parseServeArgs(["--stdio", "--agent", "codex", "--agent-bin", "/opt/codex"])).toMatchObject({ agent: "codex", agentBin: "/opt/codex" });
    expect(() => parseServeArgs(["--stdio", "--agent", "codex", "--script", "a.json"])).toThrow(
      "--agent codex runs the turns: --script cannot be given with it",
    );
    expect(() => parseServeArgs(["--stdio", "--agent", "claude"])).toThrow('--agent "claude" is not bridged (codex and acp are)');
    expect(() => parseServeArgs(["--stdio", "--script", "a.json", "--agent-bin", "/opt/codex"])).toThrow("--agent-bin needs --agent codex");
  });

  it("--agent acp takes the agent's command line after --, untouched; without one, with --agent-bin, a script, or a -- without it, it is refused", () => {
    expect(parseServeArgs(["--stdio", "--agent", "acp", "--data", "d", "--", "npx", "gemini", "--acp", "--stdio"])).toMatchObject({
      agent: "acp",
      dataDir: "d",
      agentCommand: ["npx", "gemini", "--acp", "--stdio"],
    });
    expect(() => parseServeArgs(["--stdio", "--agent", "acp"])).toThrow("--agent acp needs the agent's command after --");
    expect(() => parseServeArgs(["--stdio", "--agent", "acp", "--"])).toThrow("--agent acp needs the agent's command after --");
    expect(() => parseServeArgs(["--stdio", "--agent", "acp", "--agent-bin", "/x", "--", "a"])).toThrow("--agent-bin is for --agent codex");
    expect(() => parseServeArgs(["--stdio", "--agent", "acp", "--script", "a.json", "--", "a"])).toThrow(
      "--agent acp runs the turns: --script cannot be given with it",
    );
    expect(() => parseServeArgs(["--stdio", "--script", "a.json", "--", "a"])).toThrow("a command after -- needs --agent acp");
  });
});
