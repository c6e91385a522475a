/**
 * `muse run`'s prompt for a host that offers more than y/N (MSP 2.1, issue 22), against the real
 * reference host, off a terminal (a line per question): it lists the offered keys with the grant
 * rule shown exactly; `a` approves for the session, and the next `muse run` on the same session
 * and data prints which grant approved its call without asking; `s` denies and stops the turn.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hostCommand, startMuse, tempDir, useMuseBundles, type RunningMuse } from "./museProcess.js";

const bundles = useMuseBundles();
let temp: { dir: string; remove(): void };
let model: string;
let data: string;

beforeEach(() => {
  temp = tempDir("muse-approve-scoped-");
  model = join(temp.dir, "model.json");
  data = join(temp.dir, "data");
  mkdirSync(data);
  const turn = { steps: [{ text: "Greeting.", toolCalls: [{ tool: "shell", args: { command: "echo hello" }, approval: true }] }, { text: "Done." }] };
  writeFileSync(model, JSON.stringify({ turns: [turn, turn] }));
});

afterEach(() => temp.remove());

const host = () => hostCommand(bundles(), `--script ${JSON.stringify(model)} --data ${JSON.stringify(data)}`);
const withStdin = (args: string[]) => startMuse(bundles(), args, { stdin: "pipe", timeoutMs: 15_000 });

async function until(muse: RunningMuse, text: string, what: string): Promise<void> {
  if (!(await muse.waitFor((stdout) => stdout.includes(text)))) throw new Error(`never saw ${what}`);
}

const LEGEND = "Run shell: echo hello? (y = once, a = always this exact call in this session, n = deny, s = deny and stop the turn) [y/N]";

describe("muse run --approve ask, scoped approvals", () => {
  it("a approves for the session; the next run's same call is not asked and names its grant", async () => {
    const first = withStdin(["run", "greet", "--approve", "ask", "--spawn", host()]);
    await until(first, "[y/N] ", "the prompt");
    expect(first.output()).toContain(LEGEND);
    first.child.stdin?.write("a\n");
    const result = await first.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${LEGEND} a (approved for this session)\n  | hello\n  = completed`);
    const sessionId = /session (\S+)/.exec(result.stdout)?.[1];
    expect(sessionId).toBeDefined();

    const second = withStdin(["run", "greet", "--approve", "ask", "--session", sessionId!, "--spawn", host()]);
    second.child.stdin?.end();
    const again = await second.result;
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain("[y/N]");
    expect(again.stdout).toMatch(/ {2}\| not asked: approved by session grant \S+ \(exact shell \{"command":"echo hello"\}\)\n {2}\| hello\n {2}= completed/);
  });

  it("s denies and stops the turn (cause user)", async () => {
    const muse = withStdin(["run", "greet", "--approve", "ask", "--spawn", host()]);
    await until(muse, "[y/N] ", "the prompt");
    muse.child.stdin?.write("s\n");
    const result = await muse.result;
    expect(result.stdout).toContain(`${LEGEND} s (denied; stopping the turn)`);
    expect(result.stdout).toContain("= failed: denied by the user (answered s at the muse prompt)");
    expect(result.stdout).toMatch(/turn cancelled: you stopped it/); // cause user, in describeTerminal's words
    expect(result.stdout).not.toContain("| hello");
  });
});
