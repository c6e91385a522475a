/**
 * `muse resume` as real processes: a turn run by one muse and one host (with `--data`), replayed
 * by another muse and a restarted host: the whole session, or after a cursor, as text or --json;
 * a session whose turn muse abandoned mid-tool shows that turn's own end; unknown sessions and
 * cursors beyond the session are refused with the host's reason (exit 1).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_TURN_LINES } from "./demoTurn.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, modelPath, runMuse, startMuse, tempDir, useMuseBundles, type MuseResult } from "./museProcess.js";

const bundles = useMuseBundles();
let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir("muse-resume-");
});
afterEach(() => data.remove());

const host = (model: string) => hostCommand(bundles(), `--script ${modelPath(model)} --data ${JSON.stringify(data.dir)}`);

/** Run a demo turn with --json; its session id and every notification's cursor. */
async function runDemo(): Promise<{ sessionId: string; cursors: string[]; stdout: string }> {
  const result = await runMuse(bundles(), ["run", "check the build", "--json", "--spawn", host("cli-demo")]);
  expect(result.code).toBe(0);
  const events = jsonLines<{ type: string; sessionId?: string; params?: { viewCursor: string } }>(result.stdout);
  const cursors = events.filter((e) => e.type === "notification").map((e) => (e.params as { viewCursor: string }).viewCursor);
  return { sessionId: events[0]?.sessionId as string, cursors, stdout: result.stdout };
}

describe("muse resume", () => {
  it("replays a whole session from a restarted host, as the run showed it, and exits 0 (idle)", async () => {
    const { sessionId, cursors } = await runDemo();
    const result = await runMuse(bundles(), ["resume", "--session", sessionId, "--spawn", host("cli-demo")]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      `session ${sessionId}`,
      `replaying ${cursors.length} notifications`,
      expect.stringMatching(/^turn [0-9a-f-]{36} started$/),
    ]);
    expect(lines.slice(3)).toEqual([...DEMO_TURN_LINES, expect.stringMatching(/^turn completed: completed after \d+\.\d s$/), ""]);
  });

  it("--after CURSOR replays only what followed it; --json prints the same notifications the run did", async () => {
    const run = await runDemo();
    const after = run.cursors.at(-3) as string;
    const result = await runMuse(bundles(), ["resume", "--session", run.sessionId, "--after", after, "--json", "--spawn", host("cli-demo")]);
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    // The message in progress at that cursor (its last delta): the base of what the replay folds onto.
    expect(events[0]).toEqual({
      type: "session",
      sessionId: run.sessionId,
      replayed: 2,
      after,
      items: [expect.objectContaining({ kind: "message", text: "The build is fine.", status: "inProgress" })],
    });
    expect(events.at(-1)).toEqual({ type: "exit", code: 0 });
    const replayed = events.slice(1, -1) as Array<{ method: string; params: Record<string, unknown> }>;
    const original = jsonLines<{ method?: string; params?: Record<string, unknown> }>(run.stdout).slice(-3, -1);
    expect(replayed.map((e) => [e.method, e.params])).toEqual(original.map((e) => [e.method, e.params]));
  });

  it("shows how a turn muse abandoned mid-tool really ended, and exits with that terminal's code", async () => {
    const muse = startMuse(bundles(), ["run", "run the tests", "--json", "--spawn", host("run-tests")]);
    const deadline = Date.now() + 10_000;
    await muse.waitFor((out) => out.includes("test 3 ... ok"), deadline - Date.now());
    const sessionId = (JSON.parse(muse.output().split("\n")[0] as string) as { sessionId: string }).sessionId;
    // muse dies mid-tool. Its host reads EOF and cancels the turn (cause disposed), or, when it dies
    // too (its stderr pipe broke), a restarted host closes the turn failed "host restarted".
    muse.child.kill("SIGKILL");
    await muse.result;
    // Until the old host has let go of --data, a new one refuses it (muse exits 3): retry.
    let result: MuseResult | undefined;
    while (Date.now() < deadline + 10_000) {
      result = await runMuse(bundles(), ["resume", "--session", sessionId, "--spawn", host("run-tests")]);
      if (result.code !== 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const stdout = result?.stdout ?? "";
    expect(stdout).toContain("  | test 3 ... ok\n");
    const terminal = /\nturn (cancelled|failed): (.*) after \d+\.\d s\n$/.exec(stdout);
    expect(terminal, stdout).not.toBeNull();
    expect(["the host shut down (cancelled during tool execution)", "the host restarted"]).toContain(terminal?.[2]);
    expect(result?.code).toBe(terminal?.[1] === "cancelled" ? 130 : 1);
    expect(stdout).not.toContain("All 100 tests passed.");
  });

  it("muse run --session runs a turn in an existing session and shows only that turn; --model switches the session's model", async () => {
    const { sessionId } = await runDemo();
    const hostWithHello = hostCommand(bundles(), `--script ${modelPath("cli-demo")} --model hello=${modelPath("hello")} --data ${JSON.stringify(data.dir)}`);
    const again = await runMuse(bundles(), ["run", "again", "--session", sessionId, "--spawn", hostWithHello]);
    expect(again.code).toBe(0);
    expect(again.stdout.split("\n")[0]).toBe(`session ${sessionId}`);
    expect(again.stdout.match(/^turn completed/gm)).toHaveLength(1); // the first turn, replayed by the resume, is not shown
    const switched = await runMuse(bundles(), ["run", "hello", "--session", sessionId, "--model", "hello", "--json", "--spawn", hostWithHello]);
    const events = jsonLines<{ type: string; params?: { turnId?: string; model?: string } }>(switched.stdout);
    expect(switched.code).toBe(0);
    expect(events[0]).toEqual({ type: "session", sessionId, model: "hello" });
    expect(events.find((e) => e.type === "notification")?.params).toMatchObject({ model: "hello" });
  });

  it("refuses an unknown session and a cursor beyond the session, with the host's reason (exit 1)", async () => {
    const { sessionId } = await runDemo();
    const unknown = await runMuse(bundles(), ["resume", "--session", "0198f0b2-0000-7000-8000-000000000000", "--spawn", host("cli-demo")]);
    expect([unknown.code, unknown.stderr]).toEqual([1, "muse: session/resume rejected: unknown_session\n"]);
    const beyond = await runMuse(bundles(), ["resume", "--session", sessionId, "--after", `v:${sessionId}:999`, "--spawn", host("cli-demo")]);
    expect(beyond.code).toBe(1);
    expect(beyond.stderr).toBe(`muse: session/resume failed: afterCursor v:${sessionId}:999 is beyond the last cursor of session ${sessionId} (-32602)\n`);
  });
});
