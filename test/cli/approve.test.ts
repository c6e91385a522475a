/**
 * `muse run` answers the host's `tool/approve` questions, against the real reference host and a
 * tool call that asks first (`approval: true`) and whose only side effect is a marker file:
 * - under a pseudo-terminal (script(1)), the y/N prompt read as one key: `y` runs the tool, `n`
 *   denies it and the turn goes on, Ctrl-C at the prompt is Stop (the SDK answers `cancelled`
 *   before `turn/cancel`, the turn's own terminal is printed, exit 130, the tool never ran);
 * - off a terminal, `--approve all|none` (none by default, with a reason that says to pass
 *   --approve), `--approve ask` reading a line, and a prompt withdrawn when the SDK answers first;
 * - `--json` approval events, and `--record` transcripts that pass checkTranscript (invariant 6).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";
import { createHost } from "../../packages/host/src/server/museHost.js";
import { loadScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { expectInOrder } from "./expectInOrder.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, modelPath, MuseTerminal, runMuse, startMuse, tempDir, useMuseBundles, type RunningMuse } from "./museProcess.js";
import { serveSharedHost } from "./sharedHostServer.js";

const bundles = useMuseBundles();
let temp: { dir: string; remove(): void };
let marker: string;
let model: string;
const terminals: MuseTerminal[] = [];

beforeEach(() => {
  temp = tempDir("muse-approve-");
  marker = join(temp.dir, "ran");
  model = join(temp.dir, "model.json");
  // One step whose tool call asks first and touches the marker, then a closing step that runs whatever the answer.
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
});

afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
  temp.remove();
});

const host = () => hostCommand(bundles(), `--script ${JSON.stringify(model)}`);

function onTerminal(extra: string[] = []): MuseTerminal {
  const t = new MuseTerminal(bundles(), ["run", "publish", "--spawn", host(), ...extra]);
  terminals.push(t);
  return t;
}

/** The recorded wire's messages, in order. */
function wire(file: string): Array<{ dir: string; message: Record<string, unknown> }> {
  return jsonLines<{ dir: string; raw: string }>(readFileSync(file, "utf8")).map(({ dir, raw }) => ({
    dir,
    message: JSON.parse(raw) as Record<string, unknown>,
  }));
}

function recordingOk(file: string): void {
  const { problems } = checkTranscript(readFileSync(file, "utf8"));
  expect(problems).toEqual([]);
}

describe("muse run asks on a terminal (script(1))", () => {
  it("y approves: the prompt shows the command, the tool runs, exit 0", async () => {
    const record = join(temp.dir, "wire.jsonl");
    const t = onTerminal(["--record", record]);
    await t.waitFor(
      /\? Run shell: touch \S+; echo published\? \(y = once, a = always this exact call in this session, n = deny, s = deny and stop the turn\) \[y\/N\] $/m,
    );
    expect(existsSync(marker)).toBe(false); // asked before it ran
    t.type("y");
    const { code } = await t.exited;
    expect(code, t.text).toBe(0);
    expect(t.text).toMatch(/\[y\/N\] y\n/);
    expect(t.text).toContain("│ published");
    expect(t.text).toContain("turn completed: completed");
    expect(existsSync(marker)).toBe(true);
    recordingOk(record);
    const answers = wire(record).filter((l) => l.dir === "client" && "result" in l.message);
    expect(answers.map((l) => l.message["result"])).toEqual([{ decision: "approve" }]);
  });

  it("n denies: the call fails 'denied by the user' with muse's reason, the turn goes on, the tool never ran", async () => {
    const t = onTerminal();
    await t.waitFor(/\[y\/N\] $/m);
    t.type("n");
    const { code } = await t.exited;
    expect(code, t.text).toBe(0);
    expect(t.text).toMatch(/\[y\/N\] n\n/);
    expect(t.text).toContain("└ failed: denied by the user (answered n at the muse prompt)");
    expect(t.text.indexOf("turn completed: completed")).toBeGreaterThan(t.text.indexOf("Done.")); // the turn went on
    expect(existsSync(marker)).toBe(false);
  });

  it("Ctrl-C at the prompt is Stop: cancelled answered before turn/cancel, stopping…, the real terminal, exit 130, nothing ran", async () => {
    const record = join(temp.dir, "wire.jsonl");
    const t = onTerminal(["--record", record]);
    await t.waitFor(/\[y\/N\] $/m);
    t.interrupt(); // raw mode: the key \x03, not a SIGINT
    const { code } = await t.exited;
    expect(code, t.text).toBe(130);
    const text = t.text;
    expectInOrder(text, [
      "[y/N] ^C\n",
      "stopping…",
      "└ cancelled: tool call aborted before dispatch",
      "turn cancelled: you stopped it (cancelled while awaiting approval) after",
    ]);
    expect(text).not.toContain("Done.");
    expect(existsSync(marker)).toBe(false);
    recordingOk(record);
    const client = wire(record).filter((l) => l.dir === "client");
    const answer = client.findIndex((l) => "result" in l.message);
    const cancel = client.findIndex((l) => l.message["method"] === "turn/cancel");
    expect(client[answer]?.message["result"]).toEqual({ decision: "cancelled", reason: "turn cancelled" });
    expect(answer).toBeGreaterThanOrEqual(0);
    expect(cancel).toBeGreaterThan(answer);
  });

  it("other keys are ignored, Enter is no; the terminal leaves raw mode (a later Ctrl-C is a SIGINT)", async () => {
    const t = onTerminal();
    await t.waitFor(/\[y\/N\] $/m);
    t.type("x?");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.text).toMatch(/\[y\/N\] $/m); // still asking
    t.type("\r");
    const { code } = await t.exited;
    expect(code, t.text).toBe(0);
    expect(t.text).toMatch(/\[y\/N\] n\n/);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("the terminal samples of docs/muse-cli.md", () => {
  const page = readFileSync(join(repoRoot, "docs/muse-cli.md"), "utf8");
  for (const [key, typed, exit] of [
    ["y", "y", 0],
    ["^C", "\u0003", 130],
  ] as const) {
    it(`the ${key} sample is what muse shows when ${key} is pressed at the prompt`, async () => {
      const sample = new RegExp(`<!-- muse terminal sample: ${key.replace("^", "\\^")} -->\n\`\`\`text\n([^\`]*)\`\`\``).exec(page)?.[1];
      expect(sample).toBeDefined();
      const t = new MuseTerminal(bundles(), ["run", "publish the package", "--spawn", hostCommand(bundles(), `--script ${modelPath("cli-publish")}`)]);
      terminals.push(t);
      await t.waitFor(/\[y\/N\] $/m);
      t.type(typed);
      const { code } = await t.exited;
      expect(code, t.text).toBe(exit);
      // Each line of the sample is on the terminal (a spinner frame may precede it on its line), in order.
      let from = 0;
      for (const line of (sample as string).trimEnd().split("\n")) {
        const escaped = line.replace(/after \d+\.\d s/, "\u0000").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const pattern = new RegExp(escaped.replace("\u0000", "after \\d+\\.\\d s"));
        const found = pattern.exec(t.text.slice(from));
        expect(found, `${line}\n--- not found after offset ${from} in ---\n${t.text}`).not.toBeNull();
        from += (found?.index ?? 0) + (found?.[0].length ?? 0);
      }
    });
  }
});

describe("muse run off a terminal", () => {
  const run = (extra: string[], env?: NodeJS.ProcessEnv) =>
    runMuse(bundles(), ["run", "publish", "--spawn", host(), ...extra], env === undefined ? {} : { env });

  it("denies by default (--approve none), printing the question and a reason that says to pass --approve", async () => {
    const result = await run([]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}\? Run shell: touch \S+; echo published\? no \(--approve none\)$/m);
    expect(result.stdout).toContain(
      "  = failed: denied by the user (muse --approve none: pass --approve ask (on a terminal) or --approve all to let tools run)",
    );
    expect(result.stdout).toMatch(/Done\.\nturn completed: completed/);
    expect(existsSync(marker)).toBe(false);
  });

  it("--approve all runs the tool, printing the question answered", async () => {
    const result = await run(["--approve", "all"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}\? Run shell: touch \S+; echo published\? yes \(--approve all\)\n {2}\| published\n {2}= completed$/m);
    expect(existsSync(marker)).toBe(true);
  });

  it("--json emits approvalAsked and approvalAnswered with the wire's answer", async () => {
    const result = await run(["--approve", "none", "--json"]);
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    const asked = events.find((e) => e["type"] === "approvalAsked");
    const answered = events.find((e) => e["type"] === "approvalAnswered");
    expect(asked).toMatchObject({ tool: "shell", args: expect.stringContaining("echo published") as unknown });
    expect(answered).toEqual({
      type: "approvalAnswered",
      sessionId: asked?.["sessionId"],
      turnId: asked?.["turnId"],
      itemId: asked?.["itemId"],
      callId: asked?.["callId"],
      decision: "deny",
      reason: "muse --approve none: pass --approve ask (on a terminal) or --approve all to let tools run",
    });
    expect(events.indexOf(asked as Record<string, unknown>)).toBeLessThan(events.indexOf(answered as Record<string, unknown>));
    expect(result.stdout).not.toContain("[y/N]"); // no prompt text in NDJSON
  });

  it("rejects an --approve that is not ask, all or none (exit 2)", async () => {
    const result = await run(["--approve", "sometimes"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^muse: --approve must be ask, all or none, got "sometimes"$/m);
  });
});

/** muse with a piped stdin the test writes to (line mode), and its pid for signals. */
const withStdin = (args: string[]) => startMuse(bundles(), args, { stdin: "pipe", timeoutMs: 15_000 });

/** Wait until muse's stdout includes `text`; throws after 10 s. */
async function until(muse: RunningMuse, text: string, what: string): Promise<void> {
  if (!(await muse.waitFor((stdout) => stdout.includes(text)))) throw new Error(`never saw ${what}`);
}

describe("muse run --approve ask off a terminal (a line per question)", () => {
  it("reads y from a line and runs the tool", async () => {
    const muse = withStdin(["run", "publish", "--approve", "ask", "--spawn", host()]);
    await until(muse, "[y/N] ", "the prompt");
    muse.child.stdin?.write("yes\n");
    const result = await muse.result;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\[y\/N\] y\n {2}\| published/);
    expect(existsSync(marker)).toBe(true);
  });

  it("denies when stdin ends before an answer", async () => {
    const muse = withStdin(["run", "publish", "--approve", "ask", "--spawn", host()]);
    muse.child.stdin?.end();
    const result = await muse.result;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("[y/N] no (stdin ended)");
    expect(result.stdout).toContain("= failed: denied by the user (muse --approve ask: stdin ended before an answer)");
    expect(existsSync(marker)).toBe(false);
  });

  it("a SIGINT while asking stops the turn: the SDK answers first, the prompt is withdrawn and says why, exit 130", async () => {
    const muse = withStdin(["run", "publish", "--approve", "ask", "--spawn", host()]);
    await until(muse, "[y/N] ", "the prompt");
    muse.child.kill("SIGINT");
    const result = await muse.result;
    expect(result.code, result.stdout + result.stderr).toBe(130);
    expect(result.stdout).toMatch(/\[y\/N\] \nstopping…\n {2}\? Run shell: touch \S+; echo published\? \(y = once, [^)]*\) withdrawn: turn cancelled\n/);
    expect(result.stdout).toMatch(/turn cancelled: you stopped it \(cancelled while awaiting approval\) after/);
    muse.child.stdin?.write("y\n"); // too late: nothing reads it, nothing runs
    expect(existsSync(marker)).toBe(false);
  });
});

describe("muse resume --approve", () => {
  it("answers the question the host asks again on resume: a muse that asked is killed, muse resume --approve all runs the tool", async () => {
    // One in-process reference host behind a WebSocket server, so the question outlives the first muse.
    const server = await serveSharedHost(createHost({ models: new Map([["default", loadScriptedModel(model, "default")]]), defaultModel: "default" }));
    try {
      const asking = withStdin(["run", "publish", "--approve", "ask", "--json", "--ws", server.url]);
      await until(asking, '"type":"approvalAsked"', "the first muse's question");
      const sessionId = (JSON.parse(asking.output().split("\n")[0] as string) as { sessionId: string }).sessionId;
      asking.child.kill("SIGKILL");
      await asking.result;
      expect(existsSync(marker)).toBe(false);
      const resumed = await runMuse(bundles(), ["resume", "--session", sessionId, "--approve", "all", "--ws", server.url]);
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/\n {2}\? Run shell: touch \S+; echo published\? yes \(--approve all\)\n {2}\| published\n {2}= completed\n/);
      expect(resumed.stdout).toMatch(/turn completed: completed after \d+\.\d s\n$/);
      // The question asked again shows after the replay it follows.
      expect(resumed.stdout.indexOf("? Run shell")).toBeGreaterThan(resumed.stdout.indexOf("> shell: touch"));
      expect(existsSync(marker)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
