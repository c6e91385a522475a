/** Tests of the scripted model loader and its chunked stream. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScriptedModel, parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { stepChunks, streamStep, type ModelChunk } from "../../packages/host/src/model/scriptedModel.js";
import { fixture } from "./hostProcess.js";

async function collect(gen: AsyncGenerator<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const c of gen) out.push(c);
  return out;
}

describe("loadScriptedModel", () => {
  it("loads a fixture with defaults filled in and wraps turns around", () => {
    const model = loadScriptedModel(fixture("hello.json"), "default");
    expect(model.name).toBe("default");
    expect(model.turns).toHaveLength(2);
    expect(model.turnAt(0).steps[0]).toEqual({ reasoning: "The user said hi.", text: "Hello there, friend!", chunkSize: 5, chunkDelayMs: 0, toolCalls: [] });
    expect(model.turnAt(2)).toBe(model.turnAt(0));
    expect(model.turnAt(3).steps[0]?.text).toBe("Second turn.");
    expect(model.turnAt(1).steps[0]?.chunkSize).toBe(8);
  });

  it("names the first problem in an invalid script", () => {
    expect(() => parseScriptedModel({ turns: [] }, "x")).toThrow(/\$\.turns: turns must be a non-empty array/);
    expect(() => parseScriptedModel({ turns: [{ steps: [{ text: 3 }] }] }, "x")).toThrow(/\$\.turns\[0\]\.steps\[0\]: text must be a string/);
    expect(() => parseScriptedModel({ turns: [{ steps: [{ chunkSize: 0 }] }] }, "x")).toThrow(/chunkSize/);
    expect(() => parseScriptedModel({ turns: [{ steps: [{ toolCalls: [{ args: {} }] }] }] }, "x")).toThrow(/toolCalls\[0\]: tool must be a non-empty string/);
  });

  it("reports an unreadable file with the model name, and a non-JSON file as file:line:column", () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-model-"));
    try {
      const path = join(dir, "bad.json");
      writeFileSync(path, "{ nope");
      expect(() => loadScriptedModel(path, "bad")).toThrow(`${path}:1:3: invalid JSON: expected a property name in double quotes, found 'n'`);
      writeFileSync(path, '{\n  "turns": [\n    { "steps": [{ "text": "a", }] }\n  ]\n}\n');
      expect(() => loadScriptedModel(path, "bad")).toThrow(`${path}:3:32: invalid JSON: unexpected '}' after ',': JSON allows no trailing comma`);
      expect(() => loadScriptedModel(join(dir, "missing.json"), "gone")).toThrow(/cannot read scripted model gone from .*missing\.json: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects an unknown key with its JSON path, the keys it expected and the nearest one", () => {
    const step = (extra: Record<string, unknown>) => ({ turns: [{ steps: [{ text: "a" }, extra] }] });
    expect(() => parseScriptedModel(step({ txt: "hi" }), "x")).toThrow(
      "invalid scripted model at $.turns[0].steps[1].txt: unknown key (expected one of reasoning, text, chunkSize, chunkDelayMs, toolCalls, usage, stopByHook, fail, consumesSteering, awaitSteeringMs; did you mean text?)",
    );
    expect(() => parseScriptedModel(step({ chunk_delay_ms: 5 }), "x")).toThrow(/steps\[1\]\.chunk_delay_ms: unknown key \(expected one of .*\)$/);
    expect(() => parseScriptedModel(step({ "tool calls": [] }), "x")).toThrow(/steps\[1\]\["tool calls"\]: unknown key .*did you mean toolCalls\?/);
    expect(() => parseScriptedModel({ turns: [{ steps: [{ text: "a" }], step: [] }] }, "x")).toThrow(
      /\$\.turns\[0\]\.step: unknown key \(expected one of steps; did you mean steps\?\)/,
    );
    expect(() => parseScriptedModel({ turns: [{ steps: [{ toolCalls: [{ tool: "shell", arg: {} }] }] }] }, "x")).toThrow(
      /\$\.turns\[0\]\.steps\[0\]\.toolCalls\[0\]\.arg: unknown key \(expected one of tool, args, approval, decisions; did you mean args\?\)/,
    );
    expect(() => parseScriptedModel({ turn: [] }, "x")).toThrow(
      /\$\.turn: unknown key \(expected one of turns, description, turnTimeLimitMs, agents; did you mean turns\?\)/,
    );
    expect(() => parseScriptedModel({ description: 3, turns: [{ steps: [{}] }] }, "x")).toThrow(/\$\.description: description must be a string/);
    expect(parseScriptedModel({ description: "what this model shows", turns: [{ steps: [{}] }] }, "x").turns).toHaveLength(1);
  });

  it("reads a step's consumesSteering and awaitSteeringMs (MSP 2.1 steering), and rejects bad ones with their path", () => {
    const model = parseScriptedModel(
      { turns: [{ steps: [{ text: "a" }, { consumesSteering: true, awaitSteeringMs: 5000, text: "heard {{steering}}" }] }] },
      "x",
    );
    expect(model.turnAt(0).steps[0]?.consumesSteering).toBeUndefined();
    expect(model.turnAt(0).steps[1]).toMatchObject({ consumesSteering: true, awaitSteeringMs: 5000 });
    const step = (extra: Record<string, unknown>) => ({ turns: [{ steps: [extra] }] });
    expect(() => parseScriptedModel(step({ consumesSteering: "yes" }), "x")).toThrow(
      "$.turns[0].steps[0].consumesSteering: consumesSteering must be a boolean",
    );
    expect(() => parseScriptedModel(step({ consumesSteering: true, awaitSteeringMs: -1 }), "x")).toThrow(
      "$.turns[0].steps[0].awaitSteeringMs: awaitSteeringMs must be an integer from 0 to 600000",
    );
    expect(() => parseScriptedModel(step({ consumesSteering: true, awaitSteeringMs: 600_001 }), "x")).toThrow(/awaitSteeringMs must be an integer/);
    expect(() => parseScriptedModel(step({ awaitSteeringMs: 10 }), "x")).toThrow(
      "$.turns[0].steps[0].awaitSteeringMs: awaitSteeringMs needs consumesSteering: true",
    );
  });

  it("reads a step's usage and stopByHook and the script's turnTimeLimitMs (MSP 2.1), and rejects bad ones with their path", () => {
    const model = parseScriptedModel(
      { turnTimeLimitMs: 500, turns: [{ steps: [{ text: "a", usage: { inputTokens: 3, outputTokens: 1 } }, { stopByHook: "budget" }] }] },
      "x",
    );
    expect(model.turnTimeLimitMs).toBe(500);
    expect(model.declaresUsage).toBe(true);
    expect(model.turnAt(0).steps[0]?.usage).toEqual({ inputTokens: 3, outputTokens: 1, reasoningTokens: 0 });
    expect(model.turnAt(0).steps[1]?.stopByHook).toBe("budget");
    // A model with no usage anywhere declares none: its terminals carry no usage field.
    const plain = parseScriptedModel({ turns: [{ steps: [{ text: "a" }] }] }, "x");
    expect(plain.declaresUsage).toBeUndefined();
    expect(plain.turnTimeLimitMs).toBeUndefined();
    const step = (extra: Record<string, unknown>) => ({ turns: [{ steps: [extra] }] });
    expect(() => parseScriptedModel(step({ usage: { inputTokens: -1 } }), "x")).toThrow(
      "invalid scripted model at $.turns[0].steps[0].usage.inputTokens: inputTokens must be a non-negative integer",
    );
    expect(() => parseScriptedModel(step({ usage: { outputTokens: 1.5 } }), "x")).toThrow(/usage\.outputTokens: outputTokens must be a non-negative integer/);
    expect(() => parseScriptedModel(step({ usage: { inputToken: 1 } }), "x")).toThrow(/usage\.inputToken: unknown key .*did you mean inputTokens\?/);
    expect(() => parseScriptedModel(step({ usage: 5 }), "x")).toThrow(/steps\[0\]\.usage: usage must be an object/);
    expect(() => parseScriptedModel(step({ stopByHook: "" }), "x")).toThrow(/steps\[0\]\.stopByHook: stopByHook must be a non-empty string/);
    expect(() => parseScriptedModel({ turnTimeLimitMs: 0, turns: [{ steps: [{}] }] }, "x")).toThrow(
      /\$\.turnTimeLimitMs: turnTimeLimitMs must be a positive integer/,
    );
  });

  it("reads the script's agents (issue 23) and checks every task call names one, with a prompt; rejects bad ones with their path", () => {
    const task = (args: Record<string, unknown>) => ({ turns: [{ steps: [{ toolCalls: [{ tool: "task", args }] }] }] });
    const model = parseScriptedModel(
      { ...task({ prompt: "go", agent: "a" }), agents: { a: { description: "one", turns: [{ steps: [{ text: "A" }] }, { steps: [{ text: "never" }] }] } } },
      "x",
    );
    expect(model.agents?.get("a")?.steps[0]?.text).toBe("A");
    expect(parseScriptedModel({ turns: [{ steps: [{ text: "hi" }] }] }, "x").agents).toBeUndefined();
    expect(() => parseScriptedModel(task({ prompt: "go", agent: "b" }), "x")).toThrow(
      /\$\.turns\[0\]\.steps\[0\]\.toolCalls\[0\]\.args\.agent: a task call's agent must name one of the script's agents \(none\)/,
    );
    expect(() => parseScriptedModel({ ...task({ agent: "a" }), agents: { a: { turns: [{ steps: [{}] }] } } }, "x")).toThrow(
      /args\.prompt: a task call's prompt must be a string/,
    );
    expect(() => parseScriptedModel({ ...task({ prompt: "go", agent: "a" }), agents: [] }, "x")).toThrow(/\$\.agents: agents must be an object/);
    expect(() => parseScriptedModel({ ...task({ prompt: "go", agent: "a" }), agents: { a: { turns: [] } } }, "x")).toThrow(
      /\$\.agents\.a\.turns: turns must be a non-empty array/,
    );
    expect(() => parseScriptedModel({ ...task({ prompt: "go", agent: "a" }), agents: { a: { turns: [{ steps: [{}] }], agents: {} } } }, "x")).toThrow(
      /\$\.agents\.a\.agents: unknown key/,
    );
    // An agent's own task calls are checked too (a grandchild names an agent of the same script).
    expect(() => parseScriptedModel({ ...task({ prompt: "go", agent: "a" }), agents: { a: task({ prompt: "deeper", agent: "zz" }) } }, "x")).toThrow(
      /\$\.agents\.a\.turns\[0\]\.steps\[0\]\.toolCalls\[0\]\.args\.agent: .*\(a\)/,
    );
  });

  it("names the file when a model file is JSON but not a valid script", () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-model-"));
    try {
      const path = join(dir, "typo.json");
      writeFileSync(path, JSON.stringify({ turns: [{ steps: [{ txt: "hi" }] }] }));
      expect(() => loadScriptedModel(path, "typo")).toThrow(`${path}: invalid scripted model at $.turns[0].steps[0].txt: unknown key`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("streamStep", () => {
  it("streams reasoning chunks, then text chunks, then tool calls", async () => {
    const model = parseScriptedModel(
      { turns: [{ steps: [{ reasoning: "abcde", text: "xyz", chunkSize: 2, toolCalls: [{ tool: "shell", args: { command: "true" } }] }] }] },
      "m",
    );
    const chunks = await collect(streamStep(model.turnAt(0).steps[0]!, new AbortController().signal));
    expect(chunks).toEqual([
      { kind: "reasoning", delta: "ab" },
      { kind: "reasoning", delta: "cd" },
      { kind: "reasoning", delta: "e" },
      { kind: "text", delta: "xy" },
      { kind: "text", delta: "z" },
      { kind: "toolCall", call: { tool: "shell", args: { command: "true" } } },
    ]);
  });

  it("stepChunks yields, without pauses, exactly what streamStep streams: reasoning, text (by characters), tool calls", async () => {
    for (const text of ["hello world", "a😀b😀😀c", "é\u2028x"]) {
      const model = parseScriptedModel(
        { turns: [{ steps: [{ reasoning: "think", text, chunkSize: 2, toolCalls: [{ tool: "shell", args: { command: "true" } }] }] }] },
        "m",
      );
      const step = model.turnAt(0).steps[0]!;
      const streamed = await collect(streamStep(step, new AbortController().signal));
      expect([...stepChunks(step)]).toEqual(streamed);
      expect(streamed.map((c) => (c.kind === "text" ? c.delta : "")).join("")).toBe(text);
    }
  });

  it("never splits a surrogate pair", async () => {
    const model = parseScriptedModel({ turns: [{ steps: [{ text: "a😀b", chunkSize: 2 }] }] }, "m");
    const chunks = await collect(streamStep(model.turnAt(0).steps[0]!, new AbortController().signal));
    expect(chunks.map((c) => (c.kind === "text" ? c.delta : ""))).toEqual(["a😀", "b"]);
  });

  it("stops promptly when the signal aborts during a chunk delay", async () => {
    const model = parseScriptedModel({ turns: [{ steps: [{ text: "aaaaaaaa", chunkSize: 1, chunkDelayMs: 1000 }] }] }, "m");
    const abort = new AbortController();
    const started = Date.now();
    setTimeout(() => abort.abort({ kind: "user" }), 20);
    await expect(collect(streamStep(model.turnAt(0).steps[0]!, abort.signal))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(500);
  });
});
