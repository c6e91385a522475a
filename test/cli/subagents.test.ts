/**
 * `muse run` with subagents (issue 23), as real processes against the real reference host:
 * - a tree run prints each child turn nested under its delegating call, indented two spaces a
 *   level and named by its agent, with its own terminal line;
 * - `--json` carries every notification of the tree, each session's included;
 * - under a pseudo-terminal, Ctrl-C on a 3-level tree with a shell tool running at each level sends
 *   one stop, says how many subagents it is stopping, prints each child stopped "because its parent
 *   turn stopped" (leaves first) before the top-level turn's own terminal, exits 130, and leaves no
 *   tool process running; a second Ctrl-C closes the connection at once, as without subagents, and
 *   the grandchild's tool that ignores SIGTERM is gone too;
 * - a child's approval question is asked at muse's prompt, saying which subagent asks, and `y`
 *   runs its tool.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { expectInOrder } from "./expectInOrder.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, MuseTerminal, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const terminals: MuseTerminal[] = [];
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
  for (const c of cleanups.splice(0)) c();
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const normalise = (text: string) => text.replace(UUID, "<id>").replace(/after \d+\.\d s/g, "after <s> s");
const fixture = (name: string) => JSON.stringify(join(repoRoot, name));
const reviewHost = () => hostCommand(bundles(), `--script ${fixture("test/cli/fixtures/subagentsReview.json")}`);

function start(args: string[]): MuseTerminal {
  const terminal = new MuseTerminal(bundles(), args);
  terminals.push(terminal);
  return terminal;
}

describe("muse run shows the subagent tree", () => {
  it("prints each child turn under its delegating call, indented a level deeper and named, with its own terminal", async () => {
    const result = await runMuse(bundles(), ["run", "review it", "--spawn", reviewHost()], { timeoutMs: 60_000 });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(normalise(result.stdout).trimEnd().split("\n")).toEqual([
      "session <id> (model default)",
      "Delegating the review.",
      '> task: {"prompt":"review the change","agent":"reviewer"}',
      "  [reviewer] started: review the change",
      "  [reviewer] Reviewing; asking a checker.",
      '  [reviewer] > task: {"prompt":"run the checks","agent":"checker"}',
      "    [checker] started: run the checks",
      "    [checker] Checking.",
      "    [checker] > shell: echo check 1 ok; echo check 2 ok",
      "    [checker]   | check 1 ok",
      "    [checker]   | check 2 ok",
      "    [checker]   = completed",
      "    [checker] All checks pass.",
      "    [checker] turn completed: completed after <s> s",
      "  [reviewer]   = completed",
      "  [reviewer] The change looks right.",
      "  [reviewer] turn completed: completed after <s> s",
      "  = completed",
      "Review done.",
      "turn completed: completed after <s> s",
    ]);
  }, 90_000);

  it("--json carries every notification of the tree: each session's turn, items and terminal", async () => {
    const result = await runMuse(bundles(), ["run", "review it", "--json", "--spawn", reviewHost()], { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const events = jsonLines(result.stdout);
    expect(events.at(-1)).toEqual({ type: "exit", code: 0 });
    const notifications = events.filter((e) => e["type"] === "notification") as Array<{ method: string; params: Record<string, unknown> }>;
    const sessions = [...new Set(notifications.map((n) => n.params["sessionId"]))];
    expect(sessions).toHaveLength(3);
    const starts = notifications.filter((n) => n.method === "turn/started");
    expect(starts.map((n) => n.params["depth"] ?? 0)).toEqual([0, 1, 2]);
    const ends = notifications.filter((n) => n.method === "turn/completed");
    expect(ends.map((n) => n.params["sessionId"])).toEqual([...sessions].reverse()); // leaves first
    // Per session, the cursors run 1, 2, 3, … with none left out.
    for (const sessionId of sessions) {
      const cursors = notifications.filter((n) => n.params["sessionId"] === sessionId).map((n) => Number(String(n.params["viewCursor"]).split(":").at(-1)));
      expect(cursors).toEqual(cursors.map((_, i) => i + 1));
    }
    const checker = notifications.find((n) => n.method === "item/completed" && (n.params["item"] as { tool?: string }).tool === "shell");
    expect(checker?.params["sessionId"]).toBe(sessions[2]);
  }, 90_000);
});

describe("Ctrl-C stops the whole tree (a pseudo-terminal)", () => {
  it("one stop of the top-level turn: stopping 3 of 3 subagents, each child stopped because its parent stopped, leaves first, exit 130, no tool left", async () => {
    const t = start(["run", "go", "--spawn", hostCommand(bundles(), `--script ${fixture("test/fixtures/models/subagents-tree.json")}`)]);
    // A shell tool runs at every level: the parent's, worker-a's, worker-b's and the searcher's.
    const pidsShown = /started (\d+)[\s\S]*started (\d+)[\s\S]*started (\d+)[\s\S]*started (\d+)/;
    const shown = await t.waitFor(pidsShown, 60_000);
    const pids = shown.slice(1, 5).map(Number);
    t.interrupt();
    await t.waitFor(/stopping…/, 30_000);
    const { code } = await t.exited;
    expect(code, t.text).toBe(130);
    const text = t.text;
    expect(text).toContain("stopping… (3 of 3 subagents running)");
    expect(t.raw).toContain("stopping 3 of 3 subagents… (Ctrl-C again closes the connection)");
    expect(text).not.toContain("closing the connection");
    // Each child's own terminal under its name, indented by its depth; the grandchild's before its parent's; the top-level turn's last.
    const endOf = (who: string) => text.indexOf(`${who} turn cancelled: stopped because its parent turn stopped`);
    const searcher = endOf("    [searcher]");
    const workerB = endOf("  [worker-b]");
    const workerA = endOf("  [worker-a]");
    const top = text.indexOf("turn cancelled: you stopped it");
    expect(
      [searcher, workerB, workerA, top].every((i) => i >= 0),
      text,
    ).toBe(true);
    expect(searcher).toBeLessThan(workerB);
    expect(Math.max(searcher, workerB, workerA)).toBeLessThan(top);
    expect(top).toBeGreaterThan(text.indexOf("stopping…"));
    expectInOrder(text, ["  [worker-b] started: do part B", "    [searcher] started: search", "    [searcher] Searching the tree."]);
    expect(await waitGone(pids, 10_000)).toBe(true);
  }, 120_000);
});

describe("a second Ctrl-C on a tree (a pseudo-terminal)", () => {
  it("closes the connection at once, as without subagents: exit 130, no terminal, the grandchild's stubborn tool gone", async () => {
    const model = fixture("test/cli/fixtures/subagentsStubborn.json");
    const t = start(["run", "go", "--spawn", hostCommand(bundles(), `--kill-grace-ms 20000 --script ${model}`)]);
    const [, pid] = await t.waitFor(/ {4}\[stubborn\] +│ job pid (\d+)/, 60_000);
    await t.waitFor(/tick 3\b/, 30_000);
    t.interrupt();
    await t.waitFor(/stopping… \(2 of 2 subagents running\)/, 30_000);
    await t.waitFor(/\[stubborn\] +│ SIGTERM ignored/, 30_000); // the drain would last the 20 s grace
    t.interrupt();
    const { code } = await t.exited;
    expect(code, t.text).toBe(130);
    expect(t.text).toContain("closing the connection without waiting for the terminal");
    expect(t.text).not.toContain("turn cancelled:");
    expect(await waitGone([Number(pid)], 10_000)).toBe(true);
  }, 120_000);
});

describe("a subagent's approval question", () => {
  it("is asked at muse's prompt saying which subagent asks; y runs its tool and the tree completes", async () => {
    const temp = tempDir("muse-subagent-approve-");
    cleanups.push(temp.remove);
    const marker = join(temp.dir, "cleaned");
    const model = join(temp.dir, "model.json");
    writeFileSync(
      model,
      JSON.stringify({
        turns: [
          { steps: [{ text: "Delegating the cleanup.", toolCalls: [{ tool: "task", args: { prompt: "clean up", agent: "cleaner" } }] }, { text: "Cleaned." }] },
        ],
        agents: {
          cleaner: {
            turns: [
              {
                steps: [
                  { text: "Cleaning.", toolCalls: [{ tool: "shell", args: { command: `touch ${marker}; echo swept` }, approval: true }] },
                  { text: "Swept." },
                ],
              },
            ],
          },
        },
      }),
    );
    const t = start(["run", "clean", "--spawn", hostCommand(bundles(), `--script ${JSON.stringify(model)}`)]);
    await t.waitFor(/\? subagent cleaner asks: Run shell: touch \S+; echo swept\?.*\[y\/N\]/, 60_000);
    expect(existsSync(marker)).toBe(false);
    t.type("y");
    const { code } = await t.exited;
    expect(code, t.text).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expectInOrder(t.text, [
      "  [cleaner] started: clean up",
      "  [cleaner] ● shell: touch",
      "? subagent cleaner asks: Run shell: touch",
      "[y/N] y",
      "  [cleaner]   │ swept",
      "  [cleaner]   └ completed",
      "  [cleaner] turn completed: completed",
      "Cleaned.",
    ]);
    // The top-level turn's own terminal, unindented, last.
    const topEnd = /(?<!\] )turn completed: completed/.exec(t.text);
    expect(topEnd?.index ?? -1).toBeGreaterThan(t.text.indexOf("Cleaned."));
  }, 120_000);
});
