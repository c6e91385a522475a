/**
 * Scoped approvals (issue 22) end to end, over stdio and over WebSocket, with the real reference
 * host and the SDK: `approveForSession` then the same call runs unasked, naming the grant; a call
 * with different args is asked; the grant survives a host restart on the same data; `denyAndStop`
 * ends the turn `cancelled` with cause `user` and runs nothing; an answer the question did not
 * offer runs nothing. Each host's wire passes checkTranscript.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalDecision, LedgerItem, MspClient, ToolApproveParams, ToolCallItem } from "../../src/index.js";
import { openSession, memoryStorage } from "../../src/session/index.js";
import { checkTranscriptParts, formatTranscriptEntry, recordingWebSocket } from "../../src/testing/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { model, startHost, tempDataDir } from "../helpers/referenceHost.js";
import { startWsHost } from "../helpers/wsHost.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A host the test can restart on the same data, and the client of its current run, with each run's wire. */
interface Hosted {
  client: MspClient;
  /** Every run's wire (transcript lines), one part per connection. */
  wires: string[][];
  /** Close this client, stop the host, start it again on the same data and connect anew. */
  restart(): Promise<MspClient>;
}

type Transport = "stdio" | "websocket";

async function host(transport: Transport, modelName: string): Promise<Hosted> {
  const wires: string[][] = [];
  if (transport === "stdio") {
    const data = tempDataDir();
    cleanups.push(data.remove);
    const launch = () => {
      const run = startHost(model(modelName), data.dir);
      wires.push(run.wire);
      cleanups.push(() => run.host.close());
      return run.host;
    };
    const hosted: Hosted = {
      client: launch(),
      wires,
      async restart() {
        await hosted.client.close();
        hosted.client = launch();
        return hosted.client;
      },
    };
    return hosted;
  }
  const ws = await startWsHost(model(modelName));
  cleanups.push(() => ws.stop());
  const connect = async () => {
    const wire: string[] = [];
    wires.push(wire);
    const WebSocketClass = recordingWebSocket(WebSocket as unknown as WebSocketConstructor, (e) => wire.push(formatTranscriptEntry(e)));
    const client = await connectWebSocket(`ws://127.0.0.1:${ws.port}/`, { token: ws.token, WebSocket: WebSocketClass, defaultTimeoutMs: 15_000 });
    cleanups.push(() => client.close());
    return client;
  };
  const hosted: Hosted = {
    client: await connect(),
    wires,
    async restart() {
      await hosted.client.close();
      await ws.crash();
      await ws.restart();
      hosted.client = await connect();
      return hosted.client;
    },
  };
  return hosted;
}

function toolItems(client: MspClient, turnId: string): Array<ToolCallItem & LedgerItem> {
  return client.items.itemsOf(turnId).filter((i): i is ToolCallItem & LedgerItem => i.kind === "toolCall");
}

/** Answers every question with `answer(question)`, and records the questions. */
function answering(client: MspClient, answer: (q: ToolApproveParams) => ApprovalDecision): ToolApproveParams[] {
  const asked: ToolApproveParams[] = [];
  client.onApproval((request) => {
    asked.push(request);
    return { decision: answer(request) };
  });
  return asked;
}

async function expectWellFormed(hosted: Hosted): Promise<void> {
  await hosted.client.close();
  for (const wire of hosted.wires) expect(checkTranscriptParts([wire]).flatMap((part) => part.problems)).toEqual([]);
}

describe.each<Transport>(["stdio", "websocket"])("scoped approvals over %s", (transport) => {
  it("approveForSession: the same call later runs unasked naming the grant, a different call is asked, and the grant survives a restart", async () => {
    const hosted = await host(transport, "grants.json");
    let client = hosted.client;
    const { sessionId } = await client.command("session/create", {});
    let asked = answering(client, (q) => (JSON.parse(q.args).command === "echo one" ? "approveForSession" : "deny"));

    const first = await client.startTurn({ sessionId, input }).completed;
    expect(first.terminal).toBe("completed");
    expect(asked).toHaveLength(1);
    expect(asked[0]?.decisions).toEqual(["approve", "approveForSession", "deny", "denyAndStop"]);
    expect(asked[0]?.grant).toEqual({ tool: "shell", args: '{"command":"echo one"}', match: "exact" });
    const [granted] = toolItems(client, first.turnId);
    expect(granted).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "one\n" });
    const grant = granted?.grant;
    expect(grant).toEqual({ grantId: expect.any(String), tool: "shell", args: '{"command":"echo one"}', match: "exact" });

    const second = await client.startTurn({ sessionId, input }).completed;
    expect(asked.map((q) => q.args)).toEqual(['{"command":"echo one"}', '{"command":"echo two"}']); // only "echo two" was asked
    const [covered, other] = toolItems(client, second.turnId);
    expect(covered).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "one\n", grant });
    expect(other).toMatchObject({ status: "failed", approval: "denied", visibleOutput: "" });
    expect(other?.grant).toBeUndefined();

    // The grant is durable: a restarted host on the same data approves the same call without asking.
    const cursor = client.lastViewCursor(sessionId);
    client = await hosted.restart();
    asked = answering(client, () => "deny");
    await client.command("session/resume", cursor === undefined ? { sessionId } : { sessionId, afterCursor: cursor });
    const third = await client.startTurn({ sessionId, input }).completed;
    expect(third.terminal).toBe("completed");
    expect(asked).toEqual([]);
    expect(toolItems(client, third.turnId)[0]).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "one\n", grant });
    await expectWellFormed(hosted);
  });

  it("denyAndStop: the call is denied, nothing runs, and the turn ends cancelled with cause user", async () => {
    const hosted = await host(transport, "grants-stop.json");
    const { client } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const asked = answering(client, () => "denyAndStop");
    const terminal = await client.startTurn({ sessionId, input }).completed;
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.cause).toEqual({ kind: "user" });
    expect(asked).toHaveLength(1);
    const [denied, skipped] = toolItems(client, terminal.turnId);
    expect(denied).toMatchObject({ status: "failed", approval: "denied", visibleOutput: "" });
    expect(skipped).toMatchObject({ status: "cancelled", visibleOutput: "" });
    expect(client.items.itemsOf(terminal.turnId).some((i) => i.kind === "message" && i.text === "Done.")).toBe(false);
    await expectWellFormed(hosted);
  });

  it("an answer the question did not offer is refused and runs nothing; no grant is recorded", async () => {
    const hosted = await host(transport, "grants-narrow.json");
    const { client } = hosted;
    const { sessionId } = await client.command("session/create", {});
    const asked = answering(client, (q) => (q.decisions?.includes("approveForSession") === true ? "deny" : "approveForSession"));
    const first = await client.startTurn({ sessionId, input }).completed;
    expect(asked[0]?.decisions).toEqual(["approve", "deny"]);
    const [refused] = toolItems(client, first.turnId);
    expect(refused).toMatchObject({ status: "failed", approval: "denied", visibleOutput: "" });
    expect(refused?.failureReason).toMatch(/not offered/);
    expect(refused?.grant).toBeUndefined();
    // Not a grant: the same call is asked again in the next turn.
    await client.startTurn({ sessionId, input }).completed;
    expect(asked).toHaveLength(2);
    await client.close();
    // The one problem is the client's answer (this test's deliberate fault).
    const problems = hosted.wires.flatMap((wire) => checkTranscriptParts([wire]).flatMap((part) => part.problems));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/not offered/);
  });
});

describe("the session layer's answers", () => {
  it("answerApproval takes approveForSession and refuses, with a TypeError, a decision the question did not offer", async () => {
    const ws = await startWsHost(model("grants-narrow.json"));
    cleanups.push(() => ws.stop());
    const session = await openSession({
      storage: memoryStorage(),
      connect: () =>
        connectWebSocket(`ws://127.0.0.1:${ws.port}/`, { token: ws.token, WebSocket: WebSocket as unknown as WebSocketConstructor, defaultTimeoutMs: 10_000 }),
      onWarning: () => {},
    });
    cleanups.push(() => session.close());
    const asked = () => session.getSnapshot().turns.flatMap((t) => t.approvals)[0];
    const waitAsked = async () => {
      for (let i = 0; i < 500 && asked() === undefined; i++) await new Promise((r) => setTimeout(r, 20));
      return asked();
    };
    const first = session.startTurn("go");
    const question = await waitAsked();
    expect(question).toBeDefined();
    expect(question?.decisions).toEqual(["approve", "deny"]);
    expect(question?.grant).toBeUndefined();
    expect(() => session.answerApproval(question!.itemId, "approveForSession")).toThrow(TypeError);
    expect(() => session.answerApproval(question!.itemId, "denyAndStop")).toThrow(/not offered/);
    expect(asked()).toBeDefined(); // still open: nothing was sent
    session.answerApproval(question!.itemId, "deny");
    expect((await first.settled({ timeoutMs: 15_000 })).terminal?.terminal).toBe("completed");

    const second = session.startTurn("go");
    const full = await waitAsked();
    expect(full?.decisions).toEqual(["approve", "approveForSession", "deny", "denyAndStop"]);
    expect(full?.grant).toEqual({ tool: "shell", args: '{"command":"echo one"}', match: "exact" });
    session.answerApproval(full!.itemId, "approveForSession");
    const done = await second.settled({ timeoutMs: 15_000 });
    expect(done.terminal?.terminal).toBe("completed");
    const call = done.items.find((i): i is ToolCallItem => i.kind === "toolCall");
    expect(call).toMatchObject({ approval: "approved", grant: { match: "exact" } });
  });
});
