/**
 * client.onApproval and client.approvals against a scripted host: every `tool/approve` is answered
 * exactly once, by the handler, the app, or the SDK (`cancelled`, when the question is withdrawn),
 * and a malformed question gets a JSON-RPC invalid-params error plus a `protocolError`.
 */
import { describe, expect, it } from "vitest";
import type { ApprovalQuestion, MspError, ToolApproveResult } from "../../src/index.js";
import { makePeer, notification, result, SESSION, terminal, type Peer } from "../helpers/peer.js";
import { openDialog } from "./openDialog.js";

const TURN = "0198f0aa-2222-7000-8000-000000000001";
const ITEM = "0198f0aa-3333-7000-8000-000000000001";

function ask(id: number | string, overrides: Record<string, unknown> = {}) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tool/approve",
    params: { sessionId: SESSION, turnId: TURN, itemId: ITEM, callId: "call-1", tool: "shell", args: '{"command":"ls"}', ...overrides },
  };
}

/** The tool call at revision `cursor`: whole, as `item/started` at 1 (MSP 2.0 never patches an item not started), then as a patch. */
function pendingItem(cursor: number, approval = "pending", status = "inProgress") {
  return notification(
    cursor === 1 ? "item/started" : "item/updated",
    {
      item: {
        itemId: ITEM,
        kind: "toolCall",
        turnId: TURN,
        revision: cursor,
        status,
        recordedAt: "2026-11-30T00:00:00Z",
        tool: "shell",
        callId: "call-1",
        args: '{"command":"ls"}',
        visibleOutput: "",
        truncated: false,
        approval,
      },
    },
    cursor,
  );
}

/** The client's answers (responses to host requests), in wire order. */
function answers(peer: Peer) {
  return peer.received.filter((m) => !("method" in m));
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

describe("client.onApproval", () => {
  it("answers with the handler's decision, once, and reports it in approvalAnswered", async () => {
    const peer = makePeer();
    const seen: Array<[string, ToolApproveResult]> = [];
    peer.client.events.on("approvalAnswered", (q, a) => seen.push([q.request.itemId, a]));
    peer.client.onApproval((request) => ({ decision: request.tool === "shell" ? "approve" : "deny" }));
    peer.send(pendingItem(1));
    peer.send(ask(7));
    expect(await peer.nth(1)).toEqual({ jsonrpc: "2.0", id: 7, result: { decision: "approve" } });
    expect(seen).toEqual([[ITEM, { decision: "approve" }]]);
    expect(peer.client.approvals.size).toBe(0);
    await peer.client.close();
  });

  it("an async handler's answer, reason included; extra fields are not sent", async () => {
    const peer = makePeer();
    peer.client.onApproval(async () => ({ decision: "deny", reason: "not here", extra: 1 }) as ToolApproveResult);
    peer.send(ask("q-1"));
    expect(await peer.nth(1)).toEqual({ jsonrpc: "2.0", id: "q-1", result: { decision: "deny", reason: "not here" } });
    await peer.client.close();
  });

  it("no handler → deny, reason 'no approval handler'", async () => {
    const peer = makePeer();
    peer.send(ask(1));
    expect(await peer.nth(1)).toMatchObject({ id: 1, result: { decision: "deny", reason: "no approval handler" } });
    await peer.client.close();
  });

  it("a handler that throws, rejects, or answers nonsense → deny with its message", async () => {
    const peer = makePeer();
    let call = 0;
    peer.client.onApproval(() => {
      call += 1;
      if (call === 1) throw new Error("boom");
      if (call === 2) return Promise.reject(new Error("async boom"));
      return { decision: "maybe" } as unknown as ToolApproveResult;
    });
    peer.send(ask(1));
    peer.send(ask(2));
    peer.send(ask(3));
    await peer.nth(3);
    const byId = (id: number) => peer.received.find((m) => m["id"] === id)?.["result"];
    expect(byId(1)).toEqual({ decision: "deny", reason: "boom" });
    expect(byId(2)).toEqual({ decision: "deny", reason: "async boom" });
    expect(byId(3)).toEqual({
      decision: "deny",
      reason: `approval handler: decision "maybe" is not one of approve, deny, cancelled, approveForSession, denyAndStop`,
    });
    await peer.client.close();
  });

  it("onApproval is replace-only: the last handler answers; undefined removes it", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => ({ decision: "deny" }));
    peer.client.onApproval(() => ({ decision: "approve" }));
    peer.send(ask(1));
    expect((await peer.nth(1))["result"]).toEqual({ decision: "approve" });
    peer.client.onApproval(undefined);
    peer.send(ask(2));
    expect((await peer.nth(2))["result"]).toEqual({ decision: "deny", reason: "no approval handler" });
    await peer.client.close();
  });

  it("turn cancelled by this client: answers cancelled BEFORE turn/cancel, aborts the signal, ignores the handler's late answer", async () => {
    const peer = makePeer();
    const dialog = openDialog(peer.client);
    peer.send(ask(5));
    await settle();
    expect(peer.client.approvals.openOf(TURN)).toHaveLength(1);
    const cancelled = peer.client.cancelTurn({ sessionId: SESSION, turnId: TURN });
    const [first, second] = [await peer.nth(1), await peer.nth(2)];
    expect(first).toEqual({ jsonrpc: "2.0", id: 5, result: { decision: "cancelled", reason: "turn cancelled" } });
    expect(second).toMatchObject({ method: "turn/cancel", params: { turnId: TURN } });
    expect(dialog.signal?.aborted).toBe(true);
    dialog.answer({ decision: "approve" });
    peer.send(result(second["id"], { commandId: "c", turnId: TURN }));
    peer.send(terminal(TURN, 1, "cancelled", "cancelled"));
    expect((await cancelled).turnCompleted.terminal).toBe("cancelled");
    await settle();
    expect(answers(peer)).toHaveLength(1);
    await peer.client.close();
  });

  it("the turn ends: answered cancelled ('turn ended') before turn/completed listeners run", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {}));
    let openAtTerminal = -1;
    peer.client.events.on("turn/completed", () => (openAtTerminal = peer.client.approvals.size));
    peer.send(ask(1));
    peer.send(terminal(TURN, 1, "failed", "host restarted"));
    expect(await peer.nth(1)).toMatchObject({ id: 1, result: { decision: "cancelled", reason: "turn ended" } });
    expect(openAtTerminal).toBe(0);
    await peer.client.close();
  });

  it("the host withdraws the question (item off pending): answered cancelled, once", async () => {
    const peer = makePeer();
    const dialog = openDialog(peer.client);
    peer.send(pendingItem(1));
    peer.send(ask(1));
    peer.send(pendingItem(2, "cancelled", "cancelled"));
    expect(await peer.nth(1)).toMatchObject({ id: 1, result: { decision: "cancelled", reason: "withdrawn by the host" } });
    expect(dialog.signal?.aborted).toBe(true);
    await settle();
    expect(answers(peer)).toHaveLength(1);
    await peer.client.close();
  });

  it("the connection closes: answered cancelled ('connection closed') and the signal aborts", async () => {
    const peer = makePeer();
    const dialog = openDialog(peer.client);
    peer.send(ask(1));
    await settle();
    await peer.client.close();
    await settle();
    expect(dialog.signal?.aborted).toBe(true);
    expect(answers(peer)).toEqual([{ jsonrpc: "2.0", id: 1, result: { decision: "cancelled", reason: "connection closed" } }]);
  });

  it("the app answers through client.approvals; the handler's signal aborts and its answer is ignored", async () => {
    const peer = makePeer();
    const dialog = openDialog(peer.client);
    const asked: ApprovalQuestion[] = [];
    peer.client.events.on("approvalAsked", (q) => asked.push(q));
    peer.send(ask(1));
    await settle();
    const [question] = peer.client.approvals.openOf(TURN);
    expect(question).toBe(asked[0]);
    expect(question?.answer("approve")).toBe(true);
    expect(question?.answer("deny")).toBe(false);
    expect(peer.client.approvals.openOf(TURN)).toEqual([]);
    expect(dialog.signal?.aborted).toBe(true);
    dialog.answer({ decision: "deny" });
    await settle();
    expect(answers(peer)).toEqual([{ jsonrpc: "2.0", id: 1, result: { decision: "approve" } }]);
    expect(() => question?.answer("maybe" as never)).toThrow(TypeError);
    await peer.client.close();
  });

  it("an approvalAsked listener may answer at once; the handler is then not asked", async () => {
    const peer = makePeer();
    let called = false;
    peer.client.onApproval(() => {
      called = true;
      return { decision: "deny" };
    });
    peer.client.events.on("approvalAsked", (question) => question.answer("approve", "auto-approved"));
    peer.send(ask(1));
    expect(await peer.nth(1)).toEqual({ jsonrpc: "2.0", id: 1, result: { decision: "approve", reason: "auto-approved" } });
    expect(called).toBe(false);
    await peer.client.close();
  });

  it("a malformed tool/approve gets -32602 and a protocolError; the handler never sees it", async () => {
    const peer = makePeer();
    let called = false;
    peer.client.onApproval(() => {
      called = true;
      return { decision: "approve" };
    });
    const problems: MspError<"protocol">[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e));
    peer.send(ask(9, { itemId: 42 }));
    expect(await peer.nth(1)).toEqual({ jsonrpc: "2.0", id: 9, error: { code: -32602, message: "Invalid params: itemId must be a string" } });
    expect(problems.map((e) => e.data.problem)).toEqual(["tool/approve: itemId must be a string"]);
    expect(called).toBe(false);
    await peer.client.close();
  });

  it("a question for a turn that already ended is answered cancelled at once and reported", async () => {
    const peer = makePeer();
    let called = false;
    peer.client.onApproval(() => {
      called = true;
      return { decision: "approve" };
    });
    const problems: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e.data.problem));
    peer.send(terminal(TURN, 1));
    peer.send(ask(3));
    expect(await peer.nth(1)).toMatchObject({ id: 3, result: { decision: "cancelled", reason: "turn ended" } });
    expect(called).toBe(false);
    expect(problems).toContain(`tool/approve for turn ${TURN} after its turn/completed`);
    await peer.client.close();
  });

  it("a second request with an open question's id is reported and not answered twice", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {}));
    const problems: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e.data.problem));
    peer.send(ask(4));
    peer.send(ask(4));
    await settle();
    expect(problems).toEqual(["tool/approve: request id 4 is already open"]);
    expect(peer.client.approvals.size).toBe(1);
    await peer.client.close();
    await settle();
    expect(answers(peer)).toHaveLength(1);
  });

  it("other host-to-client requests still get method not found", async () => {
    const peer = makePeer();
    peer.send({ jsonrpc: "2.0", id: 1, method: "tool/other", params: {} });
    expect(await peer.nth(1)).toMatchObject({ id: 1, error: { code: -32601 } });
    await peer.client.close();
  });

  it("client.approvals is read-only at runtime: a frozen view", async () => {
    const peer = makePeer();
    expect(Object.isFrozen(peer.client.approvals)).toBe(true);
    expect(Object.keys(peer.client.approvals).sort()).toEqual(["openOf", "size"]);
    await peer.client.close();
  });
});
