/**
 * spawnReferenceHost and the shipped example models, with real processes: `hello` runs a turn to
 * `completed`; `run-tests` is cancelled while its tool runs and ends `cancelled`, the tool having
 * honoured SIGTERM. Run from the sources, so the host is packages/host/src/serve/main.ts under tsx.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { LedgerItem, ToolCallItem } from "../../src/index.js";
import { loadScriptedModel } from "../../packages/host/src/index.js";
import { exampleModelPath, spawnReferenceHost } from "../../src/node/index.js";
import { until } from "../../recipes/until.js";
import { processGone as isProcessGone } from "../helpers/processGone.js";
import { repoRoot } from "../helpers/repoRoot.js";

const input = [{ type: "text" as const, text: "go" }];

describe("exampleModelPath", () => {
  it("gives the absolute path of each model shipped in models/, each a valid script", () => {
    for (const name of ["hello", "run-tests"] as const) {
      const path = exampleModelPath(name);
      expect(isAbsolute(path)).toBe(true);
      expect(relative(repoRoot, path)).toBe(join("packages/host/models", `${name}.json`));
      expect(existsSync(path)).toBe(true);
      expect(loadScriptedModel(path, name).turns.length).toBeGreaterThan(0);
    }
  });

  it("throws a RangeError for a model it does not ship", () => {
    expect(() => exampleModelPath("helo" as "hello")).toThrow(new RangeError('exampleModelPath: no example model "helo" (shipped: hello, run-tests)'));
  });
});

describe("spawnReferenceHost", () => {
  it("with no options serves the hello model: a turn runs to completed with its one message", async () => {
    const host = spawnReferenceHost({ stderr: "ignore", defaultTimeoutMs: 15_000 });
    try {
      const info = await host.command("host/info", {});
      expect(info).toMatchObject({ name: "muse-host", models: [{ id: "default" }] });
      const { sessionId } = await host.command("session/create", {});
      const turn = host.startTurn({ sessionId, input });
      const terminal = await turn.waitForTerminal({ timeoutMs: 10_000 });
      expect(terminal).toMatchObject({ terminal: "completed", reason: "completed" });
      const items = host.items.itemsOf(terminal.turnId);
      expect(items.map((i) => [i.kind, i.status])).toEqual([["message", "completed"]]);
      expect(items[0]).toMatchObject({ text: loadScriptedModel(exampleModelPath("hello"), "hello").turnAt(0).steps[0]?.text });
    } finally {
      await host.close();
    }
  });

  it("run-tests: Stop while the tool runs ends the turn cancelled, promptly, the tool having drained on SIGTERM", async () => {
    const host = spawnReferenceHost({
      script: exampleModelPath("run-tests"),
      models: { hello: exampleModelPath("hello") },
      stderr: "ignore",
      defaultTimeoutMs: 15_000,
    });
    try {
      const { sessionId } = await host.command("session/create", {});
      const turn = host.startTurn({ sessionId, input });
      const { turnId } = await turn.accepted;
      const tool = () => host.items.itemsOf(turnId).find((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
      // Wait until the tool is really running (it has printed a few tests) before pressing Stop.
      await until(host, () => /test 3 \.\.\. ok/.test(tool()?.visibleOutput ?? ""), "the tool's third test line");
      const pressed = Date.now();
      const { ack, turnCompleted: terminal } = await turn.cancel({ timeoutMs: 10_000 });
      const tookMs = Date.now() - pressed;
      expect(ack).toBe("accepted");
      expect(terminal).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "user" } });
      expect(tool()).toMatchObject({ status: "cancelled", failureReason: "turn cancelled" });
      expect(tool()?.visibleOutput).toMatch(
        /^running 100 tests\ntest 1 \.\.\. ok\n[\s\S]*SIGTERM: stopping the test run\ntest run stopped after \d+ of 100 tests\n$/,
      );
      expect(tookMs).toBeLessThan(1_500); // the ~200 ms drain, not the 2 s SIGKILL grace
      expect(host.items.itemsOf(turnId).some((i) => i.kind === "message" && i.text === "All 100 tests passed.")).toBe(false);

      // The extra model is there too; the default is still run-tests.
      const hello = await host.command("session/create", { model: "hello" });
      const second = host.startTurn({ sessionId: hello.sessionId, input });
      expect((await second.waitForTerminal({ timeoutMs: 10_000 })).terminal).toBe("completed");
    } finally {
      await host.close();
    }
    expect(isProcessGone(host.pid)).toBe(true);
  });

  it("passes data, default model, tool grace and output cap through; relative paths are taken from process.cwd()", async () => {
    const data = mkdtempSync(join(tmpdir(), "muse-reference-data-"));
    onTestFinished(() => rmSync(data, { recursive: true, force: true }));
    const host = spawnReferenceHost({
      data,
      script: relative(process.cwd(), exampleModelPath("hello")),
      models: { tests: exampleModelPath("run-tests") },
      defaultModel: "tests",
      toolKillGraceMs: 300,
      outputCapBytes: 40,
      cwd: "/",
      stderr: "ignore",
    });
    let sessionId: string;
    try {
      const created = await host.command("session/create", {});
      sessionId = created.sessionId;
      expect(created["model"]).toBe("tests");
      const turn = host.startTurn({ sessionId: created.sessionId, input });
      const { turnId } = await turn.accepted;
      await until(host, () => host.items.itemsOf(turnId).some((i) => i.kind === "toolCall" && i.truncated), "truncated tool output");
      const tool = host.items.itemsOf(turnId).find((i) => i.kind === "toolCall") as ToolCallItem;
      expect(Buffer.byteLength(tool.visibleOutput)).toBeLessThanOrEqual(40);
      await turn.cancel({ timeoutMs: 10_000 });
    } finally {
      await host.close();
    }
    expect(existsSync(join(data, "sessions", `${sessionId}.jsonl`))).toBe(true); // a dir given with data is kept
    const args = host.process.spawnargs;
    expect(args.slice(args.indexOf("serve"))).toEqual([
      "serve",
      "--stdio",
      "--script",
      exampleModelPath("hello"),
      "--data",
      data,
      "--model",
      `tests=${exampleModelPath("run-tests")}`,
      "--default-model",
      "tests",
      "--kill-grace-ms",
      "300",
      "--output-cap-bytes",
      "40",
    ]);
  });

  it("throws a TypeError or RangeError for bad options before spawning anything", () => {
    expect(() => spawnReferenceHost({ toolKillGraceMs: -1 })).toThrow(RangeError);
    expect(() => spawnReferenceHost({ outputCapBytes: 1.5 })).toThrow(RangeError);
    expect(() => spawnReferenceHost({ toolKillGraceMs: "5" as unknown as number })).toThrow(TypeError);
    expect(() => spawnReferenceHost({ script: "" })).toThrow(TypeError);
    expect(() => spawnReferenceHost({ models: { "a=b": "x.json" } })).toThrow(RangeError);
    expect(() => spawnReferenceHost({ extraArgs: [1] as unknown as string[] })).toThrow(TypeError);
  });

  it("a model file with an error: the host exits 2 and pending work settles connectionClosed", async () => {
    const host = spawnReferenceHost({ script: join(repoRoot, "package.json"), stderr: "ignore" });
    const error = await host.command("session/create", {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "connectionClosed", data: { exitCode: 2 } });
    await host.close();
  });
});
