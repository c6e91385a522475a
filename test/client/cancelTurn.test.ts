import { describe, expect, it } from "vitest";
import { cancelTurn, MspError, type TurnCanceller } from "../../src/index.js";
import { makePeer, rejection, result, SESSION, terminal } from "../helpers/peer.js";

describe("cancelTurn", () => {
  it("resolves accepted + the turn's own terminal, which arrives after the ack", async () => {
    const peer = makePeer();
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" });
    const sent = await peer.nth(1);
    expect(sent["method"]).toBe("turn/cancel");
    expect(sent["params"]).toMatchObject({ sessionId: SESSION, turnId: "t" });
    expect((sent["params"] as Record<string, unknown>)["keepInbox"]).toBeUndefined();
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled during tool execution"));
    const outcome = await p;
    expect(outcome.ack).toBe("accepted");
    expect(outcome.turnCompleted.terminal).toBe("cancelled");
    await peer.client.close();
  });

  it("reads already_terminal as done, with the terminal that preceded the rejection", async () => {
    const peer = makePeer();
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" });
    const sent = await peer.nth(1);
    peer.send(terminal("t", 1, "completed", "completed"));
    peer.send(rejection(sent["id"], { commandId: "c", reason: "already_terminal", turnId: "t", terminal: "completed" }));
    const outcome = await p;
    expect(outcome).toMatchObject({ ack: "already_terminal", turnCompleted: { terminal: "completed" } });
    await peer.client.close();
  });

  it("takes the narrowest client: a wrapper with only command, turns and defaultTimeoutMs cancels through it", async () => {
    const peer = makePeer();
    const sent: string[] = [];
    const narrow: TurnCanceller = {
      command: (method, params, options) => {
        sent.push(method);
        return peer.client.command(method, params, options);
      },
      turns: peer.client.turns,
      defaultTimeoutMs: 5_000,
    };
    const p = cancelTurn(narrow, { sessionId: SESSION, turnId: "t" });
    const cancel = await peer.nth(1);
    peer.send(result(cancel["id"], { commandId: "c", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled during tool execution"));
    expect((await p).turnCompleted.reason).toBe("cancelled during tool execution");
    expect(sent).toEqual(["turn/cancel"]);
    await peer.client.close();
  });

  it("throws every other rejection unchanged: a stale turnId does not wait forever", async () => {
    const peer = makePeer();
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "stale" }).catch((e: unknown) => e);
    const sent = await peer.nth(1);
    peer.send(rejection(sent["id"], { commandId: "c", reason: "unknown_turn", turnId: "stale" }));
    const error = (await p) as MspError<"commandRejected">;
    expect(error).toBeInstanceOf(MspError);
    expect([error.kind, error.data["reason"]]).toEqual(["commandRejected", "unknown_turn"]);
    expect(peer.client.turns.waiterCount).toBe(0);
    await peer.client.close();
  });

  it("concurrent cancels of one turn share one request, each keeps its own signal", async () => {
    const peer = makePeer();
    const controller = new AbortController();
    const a = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t", keepInbox: true });
    const b = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t", keepInbox: true }, { signal: controller.signal }).catch((e: unknown) => e);
    const sent = await peer.nth(1);
    expect((sent["params"] as Record<string, unknown>)["keepInbox"]).toBe(true);
    controller.abort();
    expect(((await b) as MspError).kind).toBe("aborted");
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled"));
    expect((await a).turnCompleted.terminal).toBe("cancelled");
    expect(peer.received).toHaveLength(1);
    // A later cancel of the same turn is a new request again.
    const c = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" });
    const sent2 = await peer.nth(2);
    peer.send(rejection(sent2["id"], { commandId: "c2", reason: "already_terminal", turnId: "t", terminal: "cancelled" }));
    expect((await c).ack).toBe("already_terminal");
    await peer.client.close();
  });

  it("the client owns the cancels in flight: client.cancelTurn and cancelTurn(client) of one turn join one request", async () => {
    const peer = makePeer();
    const viaMethod = peer.client.cancelTurn({ sessionId: SESSION, turnId: "t" });
    const viaFunction = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" });
    const sent = await peer.nth(1);
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled"));
    expect([(await viaMethod).ack, (await viaFunction).ack]).toEqual(["accepted", "accepted"]);
    expect(peer.received).toHaveLength(1);
    await peer.client.close();
  });

  it("a narrow client without its own cancelTurn sends one turn/cancel per call", async () => {
    const peer = makePeer();
    const narrow: TurnCanceller = {
      command: (method, params, options) => peer.client.command(method, params, options),
      turns: peer.client.turns,
      defaultTimeoutMs: 5_000,
    };
    const first = cancelTurn(narrow, { sessionId: SESSION, turnId: "t" });
    const second = cancelTurn(narrow, { sessionId: SESSION, turnId: "t" });
    const [a, b] = [await peer.nth(1), await peer.nth(2)];
    peer.send(result(a["id"], { commandId: "c1", turnId: "t" }));
    peer.send(result(b["id"], { commandId: "c2", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled"));
    expect([(await first).ack, (await second).ack]).toEqual(["accepted", "accepted"]);
    await peer.client.close();
  });

  it("a different keepInbox is a different request: a joined caller never gets the other's inbox policy", async () => {
    const peer = makePeer();
    const keep = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t", keepInbox: true });
    const discard = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" });
    const [first, second] = [await peer.nth(1), await peer.nth(2)];
    expect((first["params"] as Record<string, unknown>)["keepInbox"]).toBe(true);
    expect((second["params"] as Record<string, unknown>)["keepInbox"]).toBeUndefined();
    peer.send(result(first["id"], { commandId: "c1", turnId: "t" }));
    peer.send(result(second["id"], { commandId: "c2", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled"));
    expect([(await keep).ack, (await discard).ack]).toEqual(["accepted", "accepted"]);
    await peer.client.close();
  });

  it("each joined caller keeps its own time bound: a short first caller does not fail a patient second one", async () => {
    const peer = makePeer();
    const impatient = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" }, { timeoutMs: 20 }).catch((e: unknown) => e);
    const patient = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" }, { timeoutMs: 5_000 });
    const sent = await peer.nth(1);
    const error = (await impatient) as MspError<"timeout">;
    expect([error.kind, error.data["timeoutMs"]]).toEqual(["timeout", 20]);
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    peer.send(terminal("t", 1, "cancelled", "cancelled"));
    expect((await patient).turnCompleted.terminal).toBe("cancelled");
    expect(peer.received).toHaveLength(1);
    await peer.client.close();
  });

  it("without timeoutMs the connection's default bounds ack and terminal together", async () => {
    const peer = makePeer({ defaultTimeoutMs: 200 });
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" }).catch((e: unknown) => e);
    const sent = await peer.nth(1);
    await new Promise((r) => setTimeout(r, 60));
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    const error = (await p) as MspError<"timeout">;
    // The terminal wait got what was left of the one 200 ms budget, not a fresh 200 ms.
    expect([error.kind, error.data["turnId"]]).toEqual(["timeout", "t"]);
    expect(error.data["timeoutMs"]).toBeLessThanOrEqual(140);
    await peer.client.close();
  });

  it("bounds the whole operation: ack received but no terminal → timeout", async () => {
    const peer = makePeer();
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" }, { timeoutMs: 30 }).catch((e: unknown) => e);
    const sent = await peer.nth(1);
    peer.send(result(sent["id"], { commandId: "c", turnId: "t" }));
    const error = (await p) as MspError<"timeout">;
    expect([error.kind, error.data["turnId"]]).toEqual(["timeout", "t"]);
    await peer.client.close();
  });

  it("settles as connectionClosed when the connection closes mid-cancel", async () => {
    const peer = makePeer();
    const p = cancelTurn(peer.client, { sessionId: SESSION, turnId: "t" }).catch((e: unknown) => e);
    await peer.nth(1);
    await peer.client.close();
    expect(((await p) as MspError).kind).toBe("connectionClosed");
  });
});
