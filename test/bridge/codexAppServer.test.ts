/**
 * The Codex app-server client: against the real binary (@openai/codex 0.169.0) with the scripted
 * Responses server, a turn streams and completes, an approval request reaches the callback and
 * its answer is Codex's decision, and steering is typed both ways; against a stand-in that
 * misbehaves on cue (test/fixtures/codex/fake-app-server.sh), each failure is its own typed error
 * and no wait is unbounded.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { CodexBinaryNotFoundError } from "../../packages/host/src/bridge/codex/codexBinary.js";
import { CodexAppServer, type CodexAppServerOptions } from "../../packages/host/src/bridge/codex/codexAppServer.js";
import { CodexExitedError, CodexProtocolError, CodexRpcError, CodexStartError, CodexTimeoutError } from "../../packages/host/src/bridge/codex/codexErrors.js";
import { stopCodexTurn } from "../../packages/host/src/bridge/codex/codexTurnStop.js";
import type { ServerNotification } from "../../packages/host/src/bridge/codex/generated/ServerNotification.js";
import type { ServerRequest } from "../../packages/host/src/bridge/codex/generated/ServerRequest.js";
import { makeCodexHome, type CodexHomeOptions, type CodexTestHome } from "../fixtures/codex/codexHome.js";
import { execThenMessage, startResponsesServer, type ModelRequest, type ResponsesServer, type ScriptedReply } from "../fixtures/codex/responsesServer.js";
import { processGone } from "../helpers/processGone.js";

const WAIT_MS = 30_000;
const FAKE = fileURLToPath(new URL("../fixtures/codex/fake-app-server.sh", import.meta.url));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 60_000);

async function real(
  script: (request: ModelRequest) => ScriptedReply,
  home: Omit<CodexHomeOptions, "baseUrl"> = {},
  options: Partial<CodexAppServerOptions> = {},
): Promise<{ server: CodexAppServer; model: ResponsesServer; home: CodexTestHome; seen: ServerNotification[] }> {
  const model = await startResponsesServer(script);
  cleanups.push(() => model.close());
  const codexHome = makeCodexHome({ baseUrl: model.baseUrl, ...home });
  cleanups.push(() => codexHome.remove());
  const server = await CodexAppServer.start({ codexHome: codexHome.codexHome, cwd: codexHome.workDir, env: codexHome.env, ...options });
  cleanups.push(() => server.close());
  const seen: ServerNotification[] = [];
  server.onNotification((n) => seen.push(n));
  return { server, model, home: codexHome, seen };
}

function fake(mode: string, options: Partial<CodexAppServerOptions> = {}): Promise<CodexAppServer> {
  return CodexAppServer.start({ binary: FAKE, codexHome: "/nonexistent", env: { ...process.env, FAKE_CODEX_MODE: mode }, ...options });
}

const text = (t: string) => [{ type: "text" as const, text: t, text_elements: [] }];

// A real app-server on a loaded 2-core machine: each test waits within its own bounds, under a roomy test timeout.
describe("CodexAppServer against the real binary", { timeout: 90_000 }, () => {
  it("runs a turn: the agent message streams as deltas and the turn completes", async () => {
    const { server, home, seen } = await real(() => ({ kind: "message", text: "Hello from the scripted model." }));
    const { thread } = await server.request("thread/start", { cwd: home.workDir });
    const completed = server.waitForNotification((n) => n.method === "turn/completed", WAIT_MS, "turn/completed");
    const { turn } = await server.request("turn/start", { threadId: thread.id, input: text("say hello") });
    const terminal = await completed;

    expect(terminal.method === "turn/completed" && terminal.params.turn).toMatchObject({ id: turn.id, status: "completed" });
    const deltas = seen.flatMap((n) => (n.method === "item/agentMessage/delta" ? [n.params.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Hello from the scripted model.");
    expect(seen.some((n) => n.method === "thread/tokenUsage/updated" && n.params.turnId === turn.id)).toBe(true);
  });

  it("hands an approval request to the callback, and its answer is Codex's decision", async () => {
    const asked: ServerRequest[] = [];
    const script = (r: ModelRequest): ScriptedReply =>
      r.hasToolOutput ? { kind: "message", text: "ran" } : { kind: "exec", cmd: "echo approved-ran", escalate: true };
    const { server, home, seen } = await real(
      script,
      { approvalPolicy: "on-request", sandboxMode: "workspace-write" },
      {
        onServerRequest: async (request) => {
          asked.push(request);
          return { decision: "accept" };
        },
      },
    );
    const { thread } = await server.request("thread/start", { cwd: home.workDir });
    const completed = server.waitForNotification((n) => n.method === "turn/completed", WAIT_MS, "turn/completed");
    await server.request("turn/start", { threadId: thread.id, input: text("run it") });
    await completed;

    expect(asked.map((r) => r.method)).toEqual(["item/commandExecution/requestApproval"]);
    // A command this short sends no outputDelta: its output comes whole in item/completed.
    const done = seen.find((n) => n.method === "item/completed" && n.params.item.type === "commandExecution");
    expect(done?.method === "item/completed" && done.params.item).toMatchObject({ status: "completed", exitCode: 0, aggregatedOutput: "approved-ran\n" });
    expect(seen.some((n) => n.method === "serverRequest/resolved")).toBe(true);
  });

  it("steers the running turn, and a wrong expectedTurnId is a typed refusal", async () => {
    const { server, home } = await real(execThenMessage("sleep 41"));
    const { thread } = await server.request("thread/start", { cwd: home.workDir });
    const running = server.waitForNotification((n) => n.method === "item/started" && n.params.item.type === "commandExecution", WAIT_MS, "item/started");
    const { turn } = await server.request("turn/start", { threadId: thread.id, input: text("run it") });
    await running;

    await expect(server.request("turn/steer", { threadId: thread.id, expectedTurnId: "not-the-turn", input: text("x") })).rejects.toSatisfy(
      (e) => e instanceof CodexRpcError && e.method === "turn/steer" && /expected active turn id/.test(e.rpcMessage),
    );
    expect(await server.request("turn/steer", { threadId: thread.id, expectedTurnId: turn.id, input: text("also this") })).toEqual({ turnId: turn.id });
    await stopCodexTurn(server, { threadId: thread.id, turnId: turn.id });
  });

  it("a child that dies ends the connection with CodexExitedError, for pending and later requests", async () => {
    const { server, home } = await real(() => ({ kind: "message", text: "unused" }));
    process.kill(server.pid, "SIGKILL");
    const reason = await server.closed;
    expect(reason).toBeInstanceOf(CodexExitedError);
    expect((reason as CodexExitedError).signal).toBe("SIGKILL");
    await expect(server.request("thread/start", { cwd: home.workDir })).rejects.toBeInstanceOf(CodexExitedError);
    await expect(server.waitForNotification(() => true, 1000, "anything")).rejects.toBeInstanceOf(CodexExitedError);
  });
});

describe("CodexAppServer's typed failures", () => {
  it("a binary that is not there", async () => {
    await expect(CodexAppServer.start({ binary: "/nonexistent/codex", codexHome: "/nonexistent" })).rejects.toBeInstanceOf(CodexBinaryNotFoundError);
  });

  it("a child that exits before initialize is answered", async () => {
    const error = await fake("exit").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodexStartError);
    expect((error as CodexStartError).cause).toBeInstanceOf(CodexExitedError);
    expect(((error as CodexStartError).cause as CodexExitedError).exitCode).toBe(3);
    expect(((error as CodexStartError).cause as CodexExitedError).stderrTail).toContain("exiting as asked");
  });

  it("an initialize that is never answered is a bounded timeout, and the child is stopped", async () => {
    const error = await fake("silent", { startTimeoutMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodexStartError);
    expect((error as CodexStartError).cause).toBeInstanceOf(CodexTimeoutError);
  });

  it("a line that is not JSON ends the connection with CodexProtocolError", async () => {
    const error = await fake("garbage").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodexStartError);
    expect((error as CodexStartError).cause).toBeInstanceOf(CodexProtocolError);
    expect(((error as CodexStartError).cause as CodexProtocolError).excerpt).toBe("this is not json");
  });

  it("a broken line after initialize rejects the pending request and every later one", async () => {
    const server = await fake("garbage-later");
    cleanups.push(() => server.close());
    await expect(server.request("thread/start", {})).rejects.toBeInstanceOf(CodexProtocolError);
    expect(await server.closed).toBeInstanceOf(CodexProtocolError);
    await expect(server.request("thread/start", {})).rejects.toBeInstanceOf(CodexProtocolError);
    await server.close();
    expect(processGone(server.pid)).toBe(true);
  });

  it("a request without an answer times out with CodexTimeoutError", async () => {
    const server = await fake("garbage-later", { requestTimeoutMs: 300 });
    cleanups.push(() => server.close());
    await expect(server.waitForNotification(() => true, 300, "a notification")).rejects.toBeInstanceOf(CodexTimeoutError);
  });
});
