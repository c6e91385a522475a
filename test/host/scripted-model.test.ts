/** Tests of the scripted model loader and its chunked stream. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScriptedModel, parseScriptedModel, streamStep, type ModelChunk } from "../../src/host/scripted-model.js";
import { fixture } from "./host-process.js";

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

  it("reports unreadable and non-JSON files with the model name", () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-model-"));
    try {
      const path = join(dir, "bad.json");
      writeFileSync(path, "{ nope");
      expect(() => loadScriptedModel(path, "bad")).toThrow(/cannot read scripted model bad/);
      expect(() => loadScriptedModel(join(dir, "missing.json"), "gone")).toThrow(/cannot read scripted model gone/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("streamStep", () => {
  it("streams reasoning chunks, then text chunks, then tool calls", async () => {
    const model = parseScriptedModel({ turns: [{ steps: [{ reasoning: "abcde", text: "xyz", chunkSize: 2, toolCalls: [{ tool: "shell", args: { command: "true" } }] }] }] }, "m");
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
