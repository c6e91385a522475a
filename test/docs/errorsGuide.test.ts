/**
 * What docs/errors.md promises, against the public client API: runtime failures reject with
 * MspError (each kind with the `data` the page lists), and argument mistakes reject or throw
 * with TypeError/RangeError, never with MspError.
 */
import { describe, expect, it } from "vitest";
import { connect, MspError } from "@muse-code/sdk";
import { createLinkedPair } from "@muse-code/sdk/testing";
import { makePeer, rejection, SESSION } from "../helpers/peer.js";

const TURN = "018f6a1e-9b3c-7c21-a54a-2f30bd3c9f10";

/** The error a promise rejects with (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("errors.md: runtime failures reject with MspError, data per kind", () => {
  it("commandRejected carries the wire data: commandId and reason", async () => {
    const peer = makePeer();
    const pending = rejectionOf(peer.client.cancelTurn({ sessionId: SESSION, turnId: TURN }, { timeoutMs: 2_000 }));
    const sent = await peer.nth(1);
    const commandId = (sent["params"] as Record<string, unknown>)["commandId"];
    peer.send(rejection(sent["id"], { commandId, reason: "unknown_turn", turnId: TURN }));
    const error = await pending;
    expect(error).toBeInstanceOf(MspError);
    // Checking the kind is what narrows `data` (as the guide teaches).
    if (!(MspError.is(error) && error.kind === "commandRejected")) throw error;
    expect([error.data.reason, error.data.commandId, error.isAlreadyTerminal()]).toEqual(["unknown_turn", commandId, false]);
    await peer.client.close();
  });

  it("rpcError carries { code, message, data }", async () => {
    const peer = makePeer();
    const pending = rejectionOf(peer.client.command("session/rename", {}, { timeoutMs: 2_000 }));
    const sent = await peer.nth(1);
    peer.send({ jsonrpc: "2.0", id: sent["id"], error: { code: -32601, message: "Method not found: session/rename" } });
    const error = await pending;
    if (!(MspError.is(error) && error.kind === "rpcError")) throw error;
    expect([error.data.code, error.data.message]).toEqual([-32601, "Method not found: session/rename"]);
    await peer.client.close();
  });

  it("timeout carries timeoutMs and what was waited for; an abort is aborted, with the signal's reason as cause", async () => {
    const peer = makePeer();
    const timedOut = await rejectionOf(peer.client.command("host/info", {}, { timeoutMs: 20 }));
    if (!(MspError.is(timedOut) && timedOut.kind === "timeout")) throw timedOut;
    expect([timedOut.data.timeoutMs, timedOut.data.method]).toEqual([20, "host/info"]);
    const waited = await rejectionOf(peer.client.turns.terminalOf(TURN, { timeoutMs: 20 }));
    if (!(MspError.is(waited) && waited.kind === "timeout")) throw waited;
    expect([waited.data.timeoutMs, waited.data.turnId]).toEqual([20, TURN]);

    const controller = new AbortController();
    const reason = new Error("the user left the page");
    const pending = rejectionOf(peer.client.turns.terminalOf(TURN, { signal: controller.signal, timeoutMs: 60_000 }));
    controller.abort(reason);
    const aborted = await pending;
    if (!(MspError.is(aborted) && aborted.kind === "aborted")) throw aborted;
    expect([aborted.cause, aborted.data.turnId]).toEqual([reason, TURN]);
    await peer.client.close();
  });

  it("connectionClosed settles every pending command and wait at once, with the reason", async () => {
    const peer = makePeer();
    const command = rejectionOf(peer.client.command("host/info", {}, { timeoutMs: 60_000 }));
    const wait = rejectionOf(peer.client.turns.terminalOf(TURN, { timeoutMs: 60_000 }));
    await peer.client.close();
    for (const error of [await command, await wait]) {
      if (!(MspError.is(error) && error.kind === "connectionClosed")) throw error;
      expect(error.data.reason).toBe("closed by the client");
    }
  });

  it("protocol: a command whose answer is malformed rejects with { problem }", async () => {
    const peer = makePeer();
    const pending = rejectionOf(peer.client.command("host/info", {}, { timeoutMs: 2_000 }));
    const sent = await peer.nth(1);
    peer.send({ jsonrpc: "2.0", id: sent["id"], result: 5 });
    const error = await pending;
    if (!(MspError.is(error) && error.kind === "protocol")) throw error;
    expect(typeof error.data.problem).toBe("string");
    await peer.client.close();
  });
});

describe("errors.md: argument mistakes are TypeError or RangeError, never MspError", () => {
  it("rejects, never throws synchronously, and command() sends nothing", async () => {
    const peer = makePeer();
    const msp = peer.client;
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    const mistakes: Array<[string, () => Promise<unknown>, typeof TypeError | typeof RangeError]> = [
      ["a negative timeoutMs on command()", () => msp.command("host/info", {}, { timeoutMs: -1 }), RangeError],
      ["a NaN timeoutMs on command()", () => msp.command("host/info", {}, { timeoutMs: Number.NaN }), RangeError],
      ["a negative timeoutMs on terminalOf()", () => msp.turns.terminalOf(TURN, { timeoutMs: -1 }), RangeError],
      ["params that are not an object", () => msp.command("host/info", "verbose" as never), TypeError],
      ["params that are null", () => msp.command("host/info", null as never), TypeError],
      ["an empty method", () => msp.command("", {}), TypeError],
      ["a method that is not a string", () => msp.command(42 as never, {}), TypeError],
    ];
    for (const [what, call, type] of mistakes) {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call()), what).not.toThrow();
      const error = await rejectionOf(promise as Promise<unknown>);
      expect(error, what).toBeInstanceOf(type);
      expect(MspError.is(error), what).toBe(false);
    }
    // Unencodable params are the caller's mistake too: that command only, the connection is unharmed.
    const unencodable = await rejectionOf(msp.command("host/info", { cyclic }, { timeoutMs: 2_000 }));
    expect(unencodable).toBeInstanceOf(TypeError);
    expect(MspError.is(unencodable)).toBe(false);
    expect(msp.isClosed).toBe(false);
    // Nothing reached the host.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(peer.received).toEqual([]);
    await msp.close();
  });

  it("turn waits and cancels reject a bad timeoutMs with RangeError", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input: [{ type: "text", text: "hi" }] });
    for (const attempt of [
      turn.waitForTerminal({ timeoutMs: Number.NaN }),
      turn.cancel({ timeoutMs: -5 }),
      peer.client.cancelTurn({ sessionId: SESSION, turnId: TURN }, { timeoutMs: -1 }),
    ]) {
      const error = await rejectionOf(attempt);
      expect(error).toBeInstanceOf(RangeError);
      expect(MspError.is(error)).toBe(false);
    }
    // The bad cancels sent nothing: only the turn/start is on the wire.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(peer.received.map((m) => m["method"])).toEqual(["turn/start"]);
    await peer.client.close();
  });

  it("connect() throws TypeError at once on an unknown framing", () => {
    const [channel] = createLinkedPair();
    expect(() => connect(channel, { framing: "xml" as never })).toThrow(TypeError);
  });
});
