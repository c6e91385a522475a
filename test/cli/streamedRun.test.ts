/**
 * `muse run` and `muse resume` on MSP 2.0's streamed items, against the real reference host
 * serving the msp-check model: a long message streamed in small item/delta appends and a tool's
 * output. The --record transcript passes checkTranscript; the message muse prints is the text
 * folded (foldItem) from the transcript's deltas, and --json's notifications fold to the same; a
 * resume after a cursor mid-message gets the message so far in the answer's items, shows it whole,
 * and its replayed deltas fold onto it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { foldItem, type Item } from "../../src/index.js";
import { checkTranscript } from "../../src/testing/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { jsonLines } from "./jsonLines.js";
import { hostCommand, modelPath, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir("muse-stream-");
});
afterEach(() => data.remove());

/** About 2 500 characters, some of them outside ASCII, on one line. */
const LONG = Array.from({ length: 40 }, (_, i) => `Part ${i + 1}: the café's ledger — streamed as appends, never whole. `)
  .join("")
  .trimEnd();
const CHUNK = 7;
const TOOL_LINES = 20;
const directive = JSON.stringify({
  steps: [{ reasoning: "A long answer.", text: LONG, chunkSize: CHUNK, tool: { runMs: TOOL_LINES * 15, outputEveryMs: 15 } }, { text: "Done." }],
});
const host = () =>
  hostCommand(
    bundles(),
    `--script ${modelPath("hello")} --model ${JSON.stringify(`msp-check=${join(repoRoot, "packages/host/models/check.json")}`)} --data ${JSON.stringify(data.dir)}`,
  );
const toolOutput = Array.from({ length: TOOL_LINES }, (_, i) => `msp-check tool output ${i + 1} of ${TOOL_LINES}\n`).join("");

interface Folded {
  /** Each item as folded from its notifications just before its item/completed. */
  beforeCompletion: Map<string, Item>;
  completed: Map<string, Item>;
  deltas: Map<string, number>;
}

/** Fold the item notifications of `notifications` (wire order) with foldItem, as any reader of the stream does. */
function fold(notifications: ReadonlyArray<{ method?: string; params?: Record<string, unknown> }>, seed: readonly Item[] = []): Folded {
  const held = new Map<string, Item>(seed.map((item) => [item.itemId, item]));
  const out: Folded = { beforeCompletion: new Map(), completed: new Map(), deltas: new Map() };
  for (const { method, params } of notifications) {
    if (method === undefined || params === undefined || !method.startsWith("item/")) continue;
    const itemId = method === "item/delta" ? String(params["itemId"]) : (params["item"] as Item).itemId;
    if (method === "item/delta") out.deltas.set(itemId, (out.deltas.get(itemId) ?? 0) + 1);
    const before = held.get(itemId);
    if (method === "item/completed" && before !== undefined) out.beforeCompletion.set(itemId, before);
    const next = foldItem(before, method, params);
    if (typeof next === "string") throw new Error(next);
    if (next !== undefined) held.set(itemId, next);
    if (method === "item/completed") out.completed.set(itemId, next ?? (params["item"] as Item));
  }
  return out;
}

const kindOf = (items: Map<string, Item>, kind: string): Item => [...items.values()].find((i) => i.kind === kind) as Item;

describe("muse run streams MSP 2.0 deltas", () => {
  it("--record: the transcript passes checkTranscript, and the message printed is the text folded from its item/delta appends", async () => {
    const file = join(data.dir, "run.jsonl");
    const result = await runMuse(bundles(), ["run", directive, "--model", "msp-check", "--record", file, "--spawn", host()], { timeoutMs: 30_000 });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const transcript = readFileSync(file, "utf8");
    expect(checkTranscript(transcript)).toEqual({ ok: true, problems: [] });

    const messages = jsonLines<{ dir: string; raw: string }>(transcript)
      .filter((l) => l.dir === "server")
      .map((l) => JSON.parse(l.raw) as { method?: string; params?: Record<string, unknown> });
    const folded = fold(messages);
    const message = kindOf(folded.beforeCompletion, "message") as Item & { text: string };
    // Streamed as appends only: the fold of item/started and the deltas is the whole text, one delta a chunk.
    expect(message.text).toBe(LONG);
    expect(folded.deltas.get(message.itemId)).toBe(Math.ceil(LONG.length / CHUNK));
    expect(kindOf(folded.completed, "message")).toMatchObject({ text: LONG, status: "completed" });
    // What muse printed: the message on its own line, equal to the folded text.
    const lines = result.stdout.split("\n");
    expect(lines[1]).toBe("(thinking) A long answer.");
    expect(lines[2]).toBe(message.text);
    // The tool's output: what was folded before the completion is a prefix of the completed output, printed line by line.
    const tool = kindOf(folded.completed, "toolCall") as Item & { visibleOutput: string };
    expect(tool.visibleOutput).toBe(toolOutput);
    expect(toolOutput.startsWith((kindOf(folded.beforeCompletion, "toolCall") as Item & { visibleOutput: string }).visibleOutput)).toBe(true);
    expect(folded.deltas.get(tool.itemId)).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("  | "))).toEqual(
      toolOutput
        .trimEnd()
        .split("\n")
        .map((l) => `  | ${l}`),
    );
    expect(lines.slice(-3)).toEqual(["Done.", expect.stringMatching(/^turn completed: completed after \d+\.\d s$/), ""]);
  }, 60_000);

  it("--json prints the wire's deltas, which fold to the same text; a resume after a cursor mid-message seeds the fold with its items and shows the message whole", async () => {
    const run = await runMuse(bundles(), ["run", directive, "--model", "msp-check", "--json", "--spawn", host()], { timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    const events = jsonLines<{ type: string; sessionId?: string; method?: string; params?: Record<string, unknown> }>(run.stdout);
    const notifications = events.filter((e) => e.type === "notification");
    const folded = fold(notifications);
    const message = kindOf(folded.completed, "message");
    expect(kindOf(folded.beforeCompletion, "message")).toMatchObject({ text: LONG });
    // A cursor halfway through the message's deltas.
    const deltas = notifications.filter((e) => e.method === "item/delta" && e.params?.["itemId"] === message.itemId);
    const middle = deltas[Math.floor(deltas.length / 2)]?.params as { viewCursor: string; revision: number };
    const sessionId = events[0]?.sessionId as string;

    const resumed = await runMuse(bundles(), ["resume", "--session", sessionId, "--after", middle.viewCursor, "--json", "--spawn", host()], {
      timeoutMs: 30_000,
    });
    expect([resumed.code, resumed.stderr]).toEqual([0, ""]);
    const replay = jsonLines<{ type: string; items?: Item[]; method?: string; params?: Record<string, unknown> }>(resumed.stdout);
    const seed = replay[0]?.items ?? [];
    expect(seed).toEqual([expect.objectContaining({ itemId: message.itemId, revision: middle.revision, text: LONG.slice(0, (middle.revision - 1) * CHUNK) })]);
    const refolded = fold(
      replay.filter((e) => e.type === "notification"),
      seed,
    );
    expect(refolded.beforeCompletion.get(message.itemId)).toMatchObject({ text: LONG });

    const text = await runMuse(bundles(), ["resume", "--session", sessionId, "--after", middle.viewCursor, "--spawn", host()], { timeoutMs: 30_000 });
    expect(text.code).toBe(0);
    // The message, first seen mid-stream, is shown whole, then the rest of the turn.
    expect(text.stdout.split("\n").slice(2, 3)).toEqual([LONG]);
  }, 90_000);
});
