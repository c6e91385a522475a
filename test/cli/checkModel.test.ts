/** The checkable model hook of the reference host: `{"kind": "msp-check"}` turns a prompt's JSON directive into a turn. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTurnOf, parseCheckModel } from "../../src/host/checkModel.js";
import { loadScriptedModel, parseScriptedModel } from "../../src/host/modelLoader.js";
import { spawnReferenceHost } from "../../src/node/index.js";
import { repoRoot } from "../helpers/repoRoot.js";

const prompt = (directive: unknown) => [{ type: "text" as const, text: JSON.stringify(directive) }];

describe("the msp-check model", () => {
  it("loads from models/check.json through the scripted-model loader", () => {
    const model = loadScriptedModel(join(repoRoot, "models", "check.json"), "msp-check");
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
    await using host = spawnReferenceHost({ models: { "msp-check": join(repoRoot, "models", "check.json") }, stderr: "ignore", defaultTimeoutMs: 15_000 });
    const { sessionId } = await host.command("session/create", { model: "msp-check" });
    const good = host.startTurn({ sessionId, input: prompt({ steps: [{ reasoning: "hmm", text: "Hello, checker.", chunkSize: 4 }] }) });
    expect((await good.terminal).terminal).toBe("completed");
    const texts = host.items.itemsOf((await good.accepted).turnId).map((item) => [item.kind, "text" in item ? item.text : undefined]);
    expect(texts).toEqual([
      ["reasoning", "hmm"],
      ["message", "Hello, checker."],
    ]);
    const badTurn = host.startTurn({ sessionId, input: prompt({ steps: [{ text: 3 }] }) });
    const terminal = await badTurn.terminal;
    expect(terminal.terminal).toBe("failed");
    expect(terminal.reason).toMatch(/invalid msp-check directive at \$\.steps\[0\]\.text/);
  });
});
