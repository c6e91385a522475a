/**
 * `muse run` steers: a line typed while the turn runs (here on a pipe, the same path as a
 * terminal's line mode) is sent as `turn/steer` of the running turn, against the real reference
 * host and its scripted model, whose step `consumesSteering` waits for steering and repeats it
 * (`{{steering}}`):
 * - a line typed mid-turn is steered and consumed: the screen shows it as the user's message, then
 *   "steering: heard", and the model's reply quotes it;
 * - a line typed while an approval question is open answers the question and never steers; the
 *   next line, typed once the question is closed, steers;
 * - a line typed after the host ended the turn (a relay holds the terminal back from muse) is
 *   refused `already_terminal`, printed as one line, and muse still ends with the turn's terminal;
 * - on a terminal (script(1)): a line typed in the terminal's line mode steers, and a half-typed
 *   line the terminal hands over when the question switches to raw mode is not read as keys.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { expectInOrder } from "./expectInOrder.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, MuseTerminal, startMuse, tempDir, useMuseBundles, type RunningMuse } from "./museProcess.js";

const bundles = useMuseBundles();
let temp: { dir: string; remove(): void };
let model: string;

beforeEach(() => {
  temp = tempDir("muse-steer-");
  model = join(temp.dir, "model.json");
});

const terminals: MuseTerminal[] = [];

afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
  temp.remove();
});

/** A model whose turn opens with `first` steps, then waits (up to 30 s) for steering and repeats it. */
function writeModel(first: unknown[]): void {
  writeFileSync(model, JSON.stringify({ turns: [{ steps: [...first, { consumesSteering: true, awaitSteeringMs: 30_000, text: "Heard: {{steering}}" }] }] }));
}

const host = () => hostCommand(bundles(), `--script ${JSON.stringify(model)}`);
/** muse with a piped stdin the test types into; killed after 20 s (before the model's 30 s wait ends). */
const withStdin = (args: string[]) => startMuse(bundles(), args, { stdin: "pipe", timeoutMs: 20_000 });

async function until(muse: RunningMuse, text: string, what: string): Promise<void> {
  if (!(await muse.waitFor((stdout) => stdout.includes(text), 15_000))) throw new Error(`never saw ${what}: ${muse.output()}`);
}

describe("muse run steers the running turn with a typed line", () => {
  it("a line typed mid-turn is steered, shown as the user's message, heard, and quoted by the model", async () => {
    writeModel([{ text: "Working on it." }]);
    const record = join(temp.dir, "wire.jsonl");
    const muse = withStdin(["run", "tidy the repo", "--steer-stdin", "--record", record, "--spawn", host()]);
    await until(muse, "Working on it.", "the first step");
    muse.child.stdin?.write("keep the lockfile\n");
    const result = await muse.result;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expectInOrder(result.stdout, [">> you (steering): keep the lockfile\n", "   steering: heard\n", "Heard: keep the lockfile", "turn completed: completed"]);
    // On the wire: one turn/steer of the running turn, with the typed text.
    const steers = jsonLines<{ dir: string; raw: string }>(await import("node:fs").then((fs) => fs.readFileSync(record, "utf8")))
      .map(({ raw }) => JSON.parse(raw) as { method?: string; params?: { input?: unknown } })
      .filter((m) => m.method === "turn/steer");
    expect(steers.map((m) => m.params?.input)).toEqual([[{ type: "text", text: "keep the lockfile" }]]);
  }, 60_000);

  it("a line typed while a question is open answers it and does not steer; the next line steers", async () => {
    const marker = join(temp.dir, "ran");
    writeModel([{ text: "Publishing.", toolCalls: [{ tool: "shell", args: { command: `touch ${marker}; echo published` }, approval: true }] }]);
    const muse = withStdin(["run", "publish", "--approve", "ask", "--steer-stdin", "--spawn", host()]);
    await until(muse, "[y/N] ", "the question");
    muse.child.stdin?.write("y\n");
    await until(muse, "= completed", "the tool's end");
    expect(muse.output()).not.toContain("you (steering)");
    muse.child.stdin?.write("only the unit tests\n");
    const result = await muse.result;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expectInOrder(result.stdout, ["[y/N] y\n", "  | published", ">> you (steering): only the unit tests\n", "Heard: only the unit tests", "turn completed"]);
    expect(result.stdout.match(/you \(steering\)/g)).toHaveLength(1);
    expect(result.stdout).not.toContain("you (steering): y");
  }, 60_000);

  it("a line typed after the turn ended is refused already_terminal, printed as one line; muse ends with the terminal", async () => {
    writeFileSync(model, JSON.stringify({ turns: [{ steps: [{ text: "All done." }] }] }));
    const relay = join(repoRoot, "test/cli/fixtures/holdTerminalRelay.mjs");
    const spawnLine = `${JSON.stringify(process.execPath)} ${JSON.stringify(relay)} -- ${host()}`;
    const muse = withStdin(["run", "finish", "--steer-stdin", "--spawn", spawnLine]);
    // The host ended the turn; the relay holds its terminal back from muse until a refusal passes.
    await until(muse, "All done.", "the reply");
    muse.child.stdin?.write("and update the README\n");
    const result = await muse.result;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // The refusal and the terminal reach muse together; each is printed whole, after the reply.
    expectInOrder(result.stdout, ["All done.", "turn completed: completed"]);
    expect(result.stdout).toMatch(/^Not steered: the turn already ended \(completed\) \("and update the README"\)$/m);
    expect(result.stdout).not.toContain("you (steering)");
  }, 60_000);
});

describe("muse run without --steer-stdin, stdin a pipe", () => {
  it("a line piped before the question opens answers it, as scripts expect: it does not steer", async () => {
    const marker = join(temp.dir, "ran");
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          {
            steps: [
              { text: "Publishing.", toolCalls: [{ tool: "shell", args: { command: `touch ${marker}; echo published` }, approval: true }] },
              { text: "Done." },
            ],
          },
        ],
      }),
    );
    const muse = withStdin(["run", "publish", "--approve", "ask", "--spawn", host()]);
    muse.child.stdin?.end("y\n"); // written at once, before any question
    const result = await muse.result;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect(result.stdout).toContain("[y/N] y\n");
    expect(result.stdout).not.toContain("you (steering)");
  }, 60_000);
});

describe("muse run steers on a terminal (script(1))", () => {
  it("a line typed and Entered steers; a half-typed line is not read as keys when the question opens", async () => {
    const marker = join(temp.dir, "ran");
    // The first step waits for steering, repeats it, then asks before its tool call; then it is done.
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          {
            steps: [
              {
                consumesSteering: true,
                awaitSteeringMs: 30_000,
                text: "Heard: {{steering}}.",
                toolCalls: [{ tool: "shell", args: { command: `touch ${marker}; echo published` }, approval: true }],
              },
              { text: "Done." },
            ],
          },
        ],
      }),
    );
    const t = new MuseTerminal(bundles(), ["run", "publish", "--spawn", host()]);
    terminals.push(t);
    await t.waitFor(/session \S+/);
    // A whole line, then one left half-typed (no Enter): "use pnpm" holds an s, which is the key
    // "deny and stop" if it were read as keys at the question.
    t.type("keep the lockfile\ruse pnpm");
    await t.waitFor(/» you \(steering\): keep the lockfile\r?\n/);
    await t.waitFor(/Heard: keep the lockfile\./);
    await t.waitFor(/\[y\/N\] $/m);
    t.type("y");
    const { code } = await t.exited;
    expect(code, t.text).toBe(0);
    expect(t.text).toMatch(/\[y\/N\] y\r?\n/);
    expect(t.text).toMatch(/turn completed: completed/);
    expect(existsSync(marker)).toBe(true);
  }, 60_000);
});
