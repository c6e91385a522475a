import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { StopController } from "../../src/ui/index.js";
import { CannedHost } from "../../src/testing/index.js";
import { makePeer, notification, rejection, result, SESSION, terminal } from "../helpers/peer.js";

const input = [{ type: "text" as const, text: "hi" }];

describe("robustness: one caller's mistake stays its own", () => {
  it("params that cannot be serialized reject that command with a TypeError; the connection lives on", async () => {
    const peer = makePeer();
    const other = peer.client.command("host/info", {});
    const waiter = peer.client.turns.terminalOf("t", { timeoutMs: 5_000 });
    const bad = await peer.client.command("host/info", { big: 1n } as unknown as Record<string, unknown>).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TypeError);
    expect(String((bad as Error).message)).toMatch(/not JSON-serializable/);
    expect(peer.client.isClosed).toBe(false);
    const sent = await peer.nth(1);
    peer.send(result(sent["id"], { commandId: "c" }));
    peer.send(terminal("t", 1));
    await other;
    expect((await waiter).turnId).toBe("t");
    await peer.client.close();
  });

  it("a throwing subscriber does not hide the event from the others; once and off still work", async () => {
    const peer = makePeer();
    const calls: string[] = [];
    const errors: unknown[] = [];
    peer.client.events.on("handlerError", (e) => errors.push(e));
    peer.client.events.on("turn/completed", () => {
      calls.push("first");
      throw new Error("buggy widget");
    });
    const second = () => calls.push("second");
    peer.client.events.on("turn/completed", second);
    peer.client.events.once("turn/completed", () => calls.push("once"));
    peer.send(terminal("a", 1));
    await peer.client.turns.terminalOf("a");
    peer.client.events.off("turn/completed", second);
    peer.send(terminal("b", 2));
    await peer.client.turns.terminalOf("b");
    expect(calls).toEqual(["first", "second", "once", "first"]);
    expect(errors).toHaveLength(2);
    await peer.client.close();
  });

  it("a malformed answer to a pending command fails it at once as protocol, not later as timeout", async () => {
    const peer = makePeer();
    const p = peer.client.command("host/info", {}, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    const sent = await peer.nth(1);
    peer.send({ jsonrpc: "2.0", id: sent["id"], error: { code: "-32001", message: "bad" } });
    const error = (await p) as MspError<"protocol">;
    expect(error.kind).toBe("protocol");
    expect(String(error.data["problem"])).toMatch(/error must be/);
    expect(peer.client.pendingCount).toBe(0);
    await peer.client.close();
  });
});

describe("robustness: the end of the stream", () => {
  it("a last NDJSON message without its newline is still delivered", async () => {
    const peer = makePeer();
    peer.sendRaw(JSON.stringify(terminal("t", 1)));
    peer.channel.end();
    await peer.client.closed;
    expect(peer.client.turns.get("t")?.terminal).toBe("completed");
  });

  it("a message cut off by the end of the stream is reported, not dropped silently", async () => {
    const peer = makePeer();
    const problems: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(String(e.data["problem"])));
    peer.sendRaw('{"jsonrpc":"2.0","method":"turn/comp');
    peer.channel.end();
    await peer.client.closed;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/the stream ended inside a message/);
  });
});

describe("robustness: viewCursor and resume", () => {
  it("session/resume on the same connection accepts the replay from afterCursor", async () => {
    const peer = makePeer();
    const problems: unknown[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e));
    peer.send(notification("turn/started", { turnId: "t" }, 1));
    peer.send(notification("turn/started", { turnId: "u" }, 2));
    await new Promise((r) => setTimeout(r, 5));
    expect(peer.client.lastViewCursor(SESSION)).toBe(`v:${SESSION}:2`);
    const resume = peer.client.command("session/resume", { sessionId: SESSION, afterCursor: `v:${SESSION}:1` });
    const sent = await peer.nth(1);
    peer.send(result(sent["id"], { commandId: "c", sessionId: SESSION, replayed: 2 }));
    peer.send(notification("turn/started", { turnId: "u" }, 2));
    peer.send(terminal("u", 3));
    await resume;
    expect((await peer.client.turns.terminalOf("u", { timeoutMs: 1_000 })).turnId).toBe("u");
    expect(problems).toEqual([]);
    await peer.client.close();
  });

  it("a terminal not yet recorded is recorded even with an old cursor; a stepped-back repeat is reported and dropped", async () => {
    const peer = makePeer();
    const problems: string[] = [];
    const seen: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(String(e.data["problem"])));
    peer.client.onNotification((n) => seen.push(`${n.method}:${String(n.params?.["turnId"])}`));
    peer.send(notification("turn/started", { turnId: "x" }, 5));
    peer.send(terminal("t", 4)); // e.g. re-sent by a restarted host before its already_terminal
    expect((await peer.client.turns.terminalOf("t", { timeoutMs: 1_000 })).turnId).toBe("t");
    expect(problems).toEqual([]);
    peer.send(notification("turn/started", { turnId: "x" }, 3)); // a stepped-back repeat
    peer.send(terminal("t", 2)); // a stepped-back duplicate terminal
    peer.send(terminal("z", 6));
    await peer.client.turns.terminalOf("z", { timeoutMs: 1_000 });
    expect(problems).toHaveLength(2);
    expect(problems.every((p) => /does not follow/.test(p))).toBe(true);
    expect(seen).toEqual(["turn/started:x", "turn/completed:t", "turn/completed:z"]);
    await peer.client.close();
  });
});

describe("robustness: handles and the Stop button", () => {
  it("turn.cancel({timeoutMs}) before the ack is bounded by that timeoutMs, not turn/start's", async () => {
    const peer = makePeer({ defaultTimeoutMs: 10_000 });
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const error = (await turn.cancel({ timeoutMs: 30 }).catch((e: unknown) => e)) as MspError<"timeout">;
    expect([error.kind, error.data["method"], error.data["timeoutMs"]]).toEqual(["timeout", "turn/start", 30]);
    await peer.client.close();
  });

  it("Stop ends as ended when the terminal arrived but the host died before acking the cancel", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const stop = new StopController(turn);
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    const pressed = stop.stop();
    await peer.nth(2);
    peer.send(terminal(turn.commandId, 1, "completed", "completed"));
    await peer.client.turns.terminalOf(turn.commandId);
    peer.channel.destroy();
    expect(await pressed).toMatchObject({ state: "ended", turnCompleted: { terminal: "completed" } });
  });

  it("a Stop that timed out can be pressed again, and the terminal still ends it", async () => {
    const peer = makePeer();
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const stop = new StopController(turn, { stopTimeoutMs: 20 });
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    const first = await stop.stop();
    expect(first).toMatchObject({ state: "failed", canStop: true, error: { kind: "timeout" } });
    const again = stop.stop();
    const cancel = await peer.nth(3);
    peer.send(rejection(cancel["id"], { commandId: "c", reason: "already_terminal", turnId: turn.commandId, terminal: "cancelled" }));
    peer.send(terminal(turn.commandId, 1, "cancelled", "cancelled"));
    await peer.client.turns.terminalOf(turn.commandId);
    await new Promise((r) => setTimeout(r, 5));
    expect(stop.getSnapshot()).toMatchObject({ state: "ended", turnCompleted: { terminal: "cancelled" } });
    void again;
    await peer.client.close();
  });
});

describe("CannedHost", () => {
  it("rejects a client that reuses one commandId for two commands (a host would de-duplicate it)", async () => {
    const lines = [1, 2].flatMap((n) => [
      JSON.stringify({ dir: "client", raw: JSON.stringify({ jsonrpc: "2.0", id: n, method: "host/info", params: { commandId: `c${n}` } }) }),
      JSON.stringify({ dir: "server", raw: JSON.stringify({ jsonrpc: "2.0", id: n, result: { commandId: `c${n}`, status: "accepted" } }) }),
    ]);
    const host = CannedHost.fromLines(lines);
    const msp = host.connect();
    await msp.command("host/info", { commandId: "SAME" });
    const second = (await msp.command("host/info", { commandId: "SAME" }).catch((e: unknown) => e)) as MspError;
    expect(second.kind).toBe("rpcError");
    await expect(host.done()).rejects.toThrow(/already used for the command the transcript calls "c1"/);
    await msp.close();
  });
});

describe("the notification envelope", () => {
  it("hands the envelope's emittedAtMs to the user's handler and to `notification` listeners", async () => {
    const peer = makePeer();
    const got: Array<number | undefined> = [];
    peer.client.onNotification((n) => got.push(n.emittedAtMs));
    peer.client.events.on("notification", (n) => got.push(n.emittedAtMs));
    peer.send({ ...terminal("t", 1), emittedAtMs: 1754590945100 });
    peer.send({
      jsonrpc: "2.0",
      method: "turn/completed",
      params: { sessionId: SESSION, viewCursor: `v:${SESSION}:2`, turnId: "u", terminal: "completed", reason: "r", durationMs: 1 },
    });
    await peer.client.turns.terminalOf("u");
    expect(got).toEqual([1754590945100, 1754590945100, undefined, undefined]);
    await peer.client.close();
  });
});
