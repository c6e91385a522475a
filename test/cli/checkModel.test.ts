/** The checkable model hook of the reference host: `{"kind": "msp-check"}` turns a prompt's JSON directive into a turn. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTurnOf, parseCheckModel } from "../../packages/host/src/model/checkModel.js";
import { loadScriptedModel, parseScriptedModel } from "../../packages/host/src/model/modelLoader.js";
import { spawnReferenceHost } from "../../src/node/index.js";
import { repoRoot } from "../helpers/repoRoot.js";

const prompt = (directive: unknown) => [{ type: "text" as const, text: JSON.stringify(directive) }];

describe("the msp-check model", () => {
  it("loads from models/check.json through the scripted-model loader", () => {
    const model = loadScriptedModel(join(repoRoot, "packages/host/models", "check.json"), "msp-check");
    expect(model.name).toBe("msp-check");
    expect(model.turnFor?.(0, prompt({ steps: [{ text: "hi", chunkSize: 1, chunkDelayMs: 5 }] }))).toEqual({
      steps: [{ text: "hi", chunkSize: 1, chunkDelayMs: 5, toolCalls: [] }],
    });
  });

  it("plays a tool run as a shell command that prints a line every outputEveryMs for runMs", () => {
    const turn = checkTurnOf(prompt({ steps: [{ text: "run", tool: { runMs: 1000, outputEveryMs: 250 } }, { text: "done" }] }));
    expect(turn.steps).toHaveLength(2);
    const call = turn.steps[0]?.toolCalls[0];
    expect(call?.tool).toBe("shell");
    expect(String(call?.args["command"])).toContain("-lt 4 ]");
    expect(String(call?.args["command"])).toContain("sleep 0.250");
  });

  it("asks before a tool run with approval: true, parsed as a scripted model's tool call is", () => {
    const asks = checkTurnOf(prompt({ steps: [{ tool: { runMs: 100, approval: true } }] })).steps[0]?.toolCalls[0];
    expect(asks?.approval).toBe(true);
    const runs = checkTurnOf(prompt({ steps: [{ tool: { runMs: 100, approval: false } }] })).steps[0]?.toolCalls[0];
    expect(runs).not.toHaveProperty("approval");
    expect(() => checkTurnOf(prompt({ steps: [{ tool: { runMs: 100, approval: "yes" } }] }))).toThrow(
      /at \$\.steps\[0\]\.tool\.approval: approval must be a boolean/,
    );
  });

  it("answers a prompt that is not a JSON object with a help message", () => {
    expect(checkTurnOf([{ type: "text", text: "hello" }]).steps[0]?.text).toMatch(/msp-check model: send a JSON directive/);
    expect(checkTurnOf(prompt([1, 2])).steps[0]?.text).toMatch(/msp-check model/);
  });

  it("reads MSP 2.1's usage and stopByHook per step, as a scripted model does, and names a bad one", () => {
    const turn = checkTurnOf(
      prompt({
        steps: [
          { text: "a", usage: { inputTokens: 3, reasoningTokens: 1 } },
          { text: "b", stopByHook: "budget" },
        ],
      }),
    );
    expect(turn.steps[0]?.usage).toEqual({ inputTokens: 3, outputTokens: 0, reasoningTokens: 1 });
    expect(turn.steps[1]?.stopByHook).toBe("budget");
    expect(() => checkTurnOf(prompt({ steps: [{ usage: { inputTokens: -1 } }] }))).toThrow(
      /\$\.steps\[0\]\.usage\.inputTokens: must be a non-negative integer/,
    );
    expect(() => checkTurnOf(prompt({ steps: [{ usage: { tokens: 1 } }] }))).toThrow(/\$\.steps\[0\]\.usage\.tokens: unknown key/);
    expect(() => checkTurnOf(prompt({ steps: [{ stopByHook: " " }] }))).toThrow(/\$\.steps\[0\]\.stopByHook: must be a non-empty string/);
  });

  it("plays a delegate as one task call per child directive, whose agent the model's agents read back as that directive", () => {
    const worker = { steps: [{ text: "working", tool: { runMs: 100 } }] };
    const delegator = { steps: [{ text: "asking", delegate: [{ steps: [{ text: "deep" }] }] }] };
    const turn = checkTurnOf(prompt({ steps: [{ text: "go", tool: { runMs: 50 }, delegate: [worker, delegator] }] }));
    const calls = turn.steps[0]?.toolCalls ?? [];
    expect(calls.map((c) => c.tool)).toEqual(["shell", "task", "task"]);
    const model = parseCheckModel({ kind: "msp-check" }, "msp-check");
    const agentOf = (i: number) => String(calls[i]?.args["agent"]);
    expect(model.agents?.get(agentOf(1))).toEqual(checkTurnOf(prompt(worker)));
    const child = model.agents?.get(agentOf(2));
    expect(child?.steps[0]?.toolCalls.map((c) => c.tool)).toEqual(["task"]);
    expect(model.agents?.get(String(child?.steps[0]?.toolCalls[0]?.args["agent"]))?.steps[0]?.text).toBe("deep");
    expect(typeof calls[1]?.args["prompt"]).toBe("string");
    // A name that is no directive is no agent.
    expect(model.agents?.get("searcher")).toBeUndefined();
    expect(model.agents?.has(JSON.stringify({ steps: [] }))).toBe(false);
    // A bad child directive fails the turn that delegates, naming its path.
    expect(() => checkTurnOf(prompt({ steps: [{ delegate: [{ steps: [{ txt: "x" }] }] }] }))).toThrow(
      /at \$\.steps\[0\]\.delegate\[0\]\.steps\[0\]\.txt: unknown key/,
    );
    expect(() => checkTurnOf(prompt({ steps: [{ delegate: [] }] }))).toThrow(/\$\.steps\[0\]\.delegate: delegate must be an array of 1 to 8 directives/);
    let nested: unknown = { steps: [{ text: "leaf" }] };
    for (let i = 0; i < 9; i++) nested = { steps: [{ delegate: [nested] }] };
    expect(() => checkTurnOf(prompt(nested))).toThrow(/delegate nests deeper than 8 levels/);
  });

  it("plays fail as a step that fails its turn as it begins", async () => {
    const turn = checkTurnOf(prompt({ steps: [{ text: "first" }, { fail: "the model erred" }] }));
    expect(turn.steps[1]?.fail).toBe("the model erred");
    expect(() => checkTurnOf(prompt({ steps: [{ fail: "" }] }))).toThrow(/\$\.steps\[0\]\.fail: must be a non-empty string/);
    await using host = spawnReferenceHost({
      models: { "msp-check": join(repoRoot, "packages/host/models", "check.json") },
      stderr: "ignore",
      defaultTimeoutMs: 15_000,
    });
    const { sessionId } = await host.command("session/create", { model: "msp-check" });
    const failing = host.startTurn({
      sessionId,
      input: prompt({ steps: [{ text: "first" }, { fail: "the model erred", text: "never" }, { text: "never either" }] }),
    });
    const terminal = await failing.completed;
    expect(terminal).toMatchObject({ terminal: "failed", reason: "failed: the model erred" });
    const texts = host.items.itemsOf((await failing.accepted).turnId).map((item) => ("text" in item ? item.text : undefined));
    expect(texts).toEqual(["first"]);
  });

  it("names the problem in a directive that is not one", () => {
    expect(() => checkTurnOf(prompt({ steps: [] }))).toThrow(/at \$\.steps: steps must be a non-empty array/);
    expect(() => checkTurnOf(prompt({ steps: [{ txt: "x" }] }))).toThrow(/at \$\.steps\[0\]\.txt: unknown key/);
    expect(() => checkTurnOf(prompt({ steps: [{ tool: { runMs: -1 } }] }))).toThrow(/\$\.steps\[0\]\.tool\.runMs/);
    expect(() => checkTurnOf(prompt({ steps: [{ tool: { runMs: 10, outputEveryMs: 1 } }] }))).toThrow(/outputEveryMs: must be at least 10/);
    expect(() => checkTurnOf(prompt({ step: [] }))).toThrow(/\$\.step: unknown key/);
  });

  it("rejects a model file with another kind or stray keys", () => {
    expect(() => parseScriptedModel({ kind: "other" }, "x")).toThrow(/\$\.kind: the only kind is "msp-check"/);
    expect(() => parseCheckModel({ kind: "msp-check", turns: [] }, "x")).toThrow(/\$\.turns: unknown key/);
  });

  it("drives a real reference host turn from the prompt, and fails a turn whose directive is bad", async () => {
    await using host = spawnReferenceHost({
      models: { "msp-check": join(repoRoot, "packages/host/models", "check.json") },
      stderr: "ignore",
      defaultTimeoutMs: 15_000,
    });
    const { sessionId } = await host.command("session/create", { model: "msp-check" });
    const good = host.startTurn({ sessionId, input: prompt({ steps: [{ reasoning: "hmm", text: "Hello, checker.", chunkSize: 4 }] }) });
    expect((await good.completed).terminal).toBe("completed");
    const texts = host.items.itemsOf((await good.accepted).turnId).map((item) => [item.kind, "text" in item ? item.text : undefined]);
    expect(texts).toEqual([
      ["reasoning", "hmm"],
      ["message", "Hello, checker."],
    ]);
    const badTurn = host.startTurn({ sessionId, input: prompt({ steps: [{ text: 3 }] }) });
    const terminal = await badTurn.completed;
    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toMatch(/invalid msp-check directive at \$\.steps\[0\]\.text/);
  });
});
