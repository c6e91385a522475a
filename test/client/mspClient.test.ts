import { describe, expect, it } from "vitest";
import { connect, MspClient, MspError, type EndDetails } from "../../src/index.js";
import { createFraming, NdjsonMessageReader, NdjsonMessageWriter } from "../../src/framing/index.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { makePeer, notification, rejection, result, SESSION, terminal } from "../helpers/peer.js";

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("MspClient over a reader and writer of your own", () => {
  it("new MspClient(reader, writer) speaks MSP: commands, the recorder and events work as connect() makes them", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    const client = new MspClient(new NdjsonMessageReader(clientSide), new NdjsonMessageWriter(clientSide), { defaultTimeoutMs: 2_000 });
    const sent: Array<Record<string, unknown>> = [];
    const lines = new LineSplitter((line) => sent.push(JSON.parse(line) as Record<string, unknown>));
    hostSide.onData((chunk) => {
      lines.push(chunk);
      for (const message of sent.splice(0)) {
        const params = message["params"] as Record<string, unknown>;
        hostSide.write(new TextEncoder().encode(`${JSON.stringify(terminal("t", 1))}\n`));
        hostSide.write(new TextEncoder().encode(`${JSON.stringify(result(message["id"], { commandId: params["commandId"], name: "h" }))}\n`));
      }
    });
    const seen: string[] = [];
    client.events.on("turn/completed", ({ turnId }) => seen.push(turnId));
    expect((await client.command("host/info", {})).name).toBe("h");
    expect(seen).toEqual(["t"]);
    expect(client.turns.get("t")?.terminal).toBe("completed");
    expect(client.defaultTimeoutMs).toBe(2_000);
    // The deprecated alias of 0.1 is the client itself: there is no second, raw connection to reach.
    expect(client.connection).toBe(client);
    await client.close();
    expect(client.isClosed).toBe(true);
    expect(client.signal.aborted).toBe(true);
  });

  it("Content-Length is createFraming's pair under new MspClient; connect() refuses it with a pointer there", async () => {
    const [clientSide, hostSide] = createLinkedPair();
    expect(() => connect(clientSide, { framing: "content-length" as never })).toThrow(/createFraming from @muse-code\/sdk\/framing/);
    const { reader, writer } = createFraming(clientSide, "content-length");
    const client = new MspClient(reader, writer);
    const wire: string[] = [];
    hostSide.onData((chunk) => {
      wire.push(new TextDecoder().decode(chunk));
      const body = wire.join("").split("\r\n\r\n")[1];
      if (body === undefined || !body.endsWith("}")) return;
      const request = JSON.parse(body) as { id: number; params: { commandId: string } };
      const answer = JSON.stringify(result(request.id, { commandId: request.params.commandId, name: "lsp-style" }));
      hostSide.write(new TextEncoder().encode(`Content-Length: ${answer.length}\r\n\r\n${answer}`));
    });
    expect((await client.command("host/info", {}, { timeoutMs: 2_000 })).name).toBe("lsp-style");
    expect(wire.join("")).toMatch(/^Content-Length: \d+\r\n\r\n\{/);
    await client.close();
  });

  it("a reader that delivers as soon as it is listened to: the host's question is answered, nothing throws", () => {
    const written: unknown[] = [];
    const ask = {
      jsonrpc: "2.0",
      id: 7,
      method: "tool/approve",
      params: { sessionId: SESSION, turnId: "t", itemId: "i", callId: "c", tool: "shell", args: "{}" },
    };
    const reader = {
      listen: (callback: (message: unknown) => void) => {
        callback(ask); // at once, inside listen()
        return { dispose() {} };
      },
      onError: () => ({ dispose() {} }),
      onClose: () => ({ dispose() {} }),
      onPartialMessage: () => ({ dispose() {} }),
      dispose() {},
    };
    const writer = {
      write: (message: unknown) => (written.push(message), Promise.resolve()),
      onError: () => ({ dispose() {} }),
      onClose: () => ({ dispose() {} }),
      end() {},
      dispose() {},
    };
    const client = new MspClient(reader as never, writer as never);
    expect(written).toEqual([{ jsonrpc: "2.0", id: 7, result: { decision: "deny", reason: "no approval handler" } }]);
    void client.close();
  });

  it("on close, pending commands settle before the turns' waiters, as before the split", async () => {
    const peer = makePeer();
    const order: string[] = [];
    const command = peer.client.command("host/info", {}).catch(() => order.push("command"));
    const waiter = peer.client.turns.terminalOf("t", { timeoutMs: Infinity }).catch(() => order.push("waiter"));
    await peer.nth(1);
    await peer.client.close();
    await Promise.all([command, waiter]);
    expect(order).toEqual(["command", "waiter"]);
  });

  it("a capacity below 1 is a RangeError before anything listens", () => {
    const [clientSide] = createLinkedPair();
    expect(() => new MspClient(new NdjsonMessageReader(clientSide), new NdjsonMessageWriter(clientSide), { terminalCapacity: 0 })).toThrow(RangeError);
  });
});

describe("MspClient.command", () => {
  it("fills in a UUIDv7 commandId when missing and keeps one that is given", async () => {
    const peer = makePeer();
    const a = peer.client.command("host/info", {});
    const sent = await peer.nth(1);
    const params = sent["params"] as Record<string, unknown>;
    expect(params["commandId"]).toMatch(UUIDV7);
    peer.send(result(sent["id"], { commandId: params["commandId"], name: "h" }));
    expect((await a).name).toBe("h");
    const b = peer.client.command("host/info", { commandId: "mine" });
    const sent2 = await peer.nth(2);
    expect((sent2["params"] as Record<string, unknown>)["commandId"]).toBe("mine");
    peer.send(result(sent2["id"], { commandId: "mine" }));
    await b;
    await peer.client.close();
  });

  it("maps -32001 to commandRejected with the wire data passed through", async () => {
    const peer = makePeer();
    const p = peer.client.command("turn/cancel", { sessionId: SESSION, turnId: "t" });
    const sent = await peer.nth(1);
    peer.send(rejection(sent["id"], { commandId: "c", reason: "unknown_turn", turnId: "t" }));
    const error = await p.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MspError);
    expect((error as MspError).kind).toBe("commandRejected");
    expect((error as MspError<"commandRejected">).data["reason"]).toBe("unknown_turn");
    await peer.client.close();
  });

  it("maps other JSON-RPC errors to rpcError with {code, message, data}", async () => {
    const peer = makePeer();
    const p = peer.client.command("nope/nope", {});
    const sent = await peer.nth(1);
    peer.send({ jsonrpc: "2.0", id: sent["id"], error: { code: -32601, message: "Method not found" } });
    const error = (await p.catch((e: unknown) => e)) as MspError;
    expect(error.kind).toBe("rpcError");
    expect(error.data).toEqual({ code: -32601, message: "Method not found", data: null });
    await peer.client.close();
  });

  it("reports a timeout and an abort as distinct kinds, with the signal's reason as cause", async () => {
    const peer = makePeer();
    const timedOut = (await peer.client.command("host/info", {}, { timeoutMs: 10 }).catch((e: unknown) => e)) as MspError<"timeout">;
    expect(timedOut.kind).toBe("timeout");
    expect(timedOut.data["timeoutMs"]).toBe(10);
    const controller = new AbortController();
    const p = peer.client.command("host/info", {}, { signal: controller.signal, timeoutMs: 10_000 });
    const reason = new Error("user navigated away");
    controller.abort(reason);
    const aborted = (await p.catch((e: unknown) => e)) as MspError;
    expect(aborted.kind).toBe("aborted");
    expect(aborted.cause).toBe(reason);
    expect(peer.client.pendingCount).toBe(0);
    await peer.client.close();
  });

  it("does not send a command whose signal is already aborted", async () => {
    const peer = makePeer();
    const error = (await peer.client.command("host/info", {}, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as MspError;
    expect(error.kind).toBe("aborted");
    await new Promise((r) => setTimeout(r, 5));
    expect(peer.received).toHaveLength(0);
    await peer.client.close();
  });

  it("reports a late response to a timed-out command as lateResponse, not a protocol error", async () => {
    const peer = makePeer();
    const late: unknown[] = [];
    const protocol: unknown[] = [];
    peer.client.events.on("lateResponse", (r) => late.push(r.method));
    peer.client.events.on("protocolError", (e) => protocol.push(e));
    await peer.client.command("host/info", {}, { timeoutMs: 5 }).catch(() => {});
    const sent = await peer.nth(1);
    peer.send(result(sent["id"], { commandId: "x" }));
    peer.send(result(999, { commandId: "y" }));
    await new Promise((r) => setTimeout(r, 10));
    expect(late).toEqual(["host/info"]);
    expect(protocol).toHaveLength(1);
    await peer.client.close();
  });

  it("leaves no abort listener on the caller's signal once its calls settle", async () => {
    const peer = makePeer();
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      if (args[0] === "abort") added += 1;
      return add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      if (args[0] === "abort") removed += 1;
      return remove(...args);
    }) as typeof signal.removeEventListener;
    const calls = [1, 2, 3].map(() => peer.client.command("host/info", {}, { signal }));
    const waits = [peer.client.turns.terminalOf("t1", { signal }), peer.client.turns.terminalOf("t2", { signal, timeoutMs: 5 })];
    for (let n = 1; n <= 3; n++) {
      const sent = await peer.nth(n);
      peer.send(result(sent["id"], { commandId: "c" }));
    }
    peer.send(terminal("t1", 1));
    await Promise.all(calls);
    await Promise.allSettled(waits);
    // One shared listener for all five waits on this signal, removed when the last settled.
    expect(added).toBe(1);
    expect(removed).toBe(1);
    await peer.client.close();
  });
});

describe("MspConnection dispatch", () => {
  it("delivers a response after every notification that preceded it on the wire", async () => {
    const peer = makePeer();
    const seen: string[] = [];
    peer.client.onNotification((n) => seen.push(n.method));
    const p = peer.client.command("turn/start", { sessionId: SESSION, input: [] }).then(() => [...seen]);
    const sent = await peer.nth(1);
    const turnId = (sent["params"] as Record<string, unknown>)["commandId"] as string;
    // The terminal arrives BEFORE the ack, in one chunk.
    peer.sendRaw(
      [
        notification("turn/started", { turnId }, 1),
        terminal(turnId, 2),
        result(sent["id"], { commandId: turnId, turnId, startedNewTurn: true, disposition: "started" }),
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    expect(await p).toEqual(["turn/started", "turn/completed"]);
    // A terminal that arrived before the turn/start ack is still found.
    expect((await peer.client.turns.terminalOf(turnId)).terminal).toBe("completed");
    await peer.client.close();
  });

  it("calls the recorder, the ledger, the typed events, then the user's handler, in that order", async () => {
    const peer = makePeer();
    const order: string[] = [];
    peer.client.events.on("turn/completed", (p) => order.push(`event:${peer.client.turns.get(p.turnId) ? "recorded" : "missing"}`));
    peer.client.events.on("notification", () => order.push("notification"));
    peer.client.onNotification(() => order.push("handler"));
    peer.send(terminal("t", 1));
    await peer.client.turns.terminalOf("t");
    expect(order).toEqual(["event:recorded", "notification", "handler"]);
    await peer.client.close();
  });

  it("replacing the user's handler never evicts the recorder", async () => {
    const peer = makePeer();
    peer.client.onNotification(() => {});
    peer.client.onNotification(undefined);
    peer.send(terminal("t", 1));
    expect((await peer.client.turns.terminalOf("t", { timeoutMs: 1_000 })).turnId).toBe("t");
    await peer.client.close();
  });

  it("a throwing handler is reported and later messages still arrive", async () => {
    const peer = makePeer();
    const errors: unknown[] = [];
    peer.client.events.on("handlerError", (e) => errors.push(e));
    peer.client.onNotification(() => {
      throw new Error("boom");
    });
    peer.send(terminal("a", 1));
    peer.send(terminal("b", 2));
    await peer.client.turns.terminalOf("b");
    expect(errors).toHaveLength(2);
    await peer.client.close();
  });

  it("turns bad messages into protocol events and keeps delivering the good ones in order", async () => {
    const peer = makePeer();
    const problems: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(String(e.data["problem"])));
    const seen: string[] = [];
    peer.client.onNotification((n) => seen.push(String(n.params?.["turnId"])));
    peer.sendRaw("{not json\n");
    peer.sendRaw('"a string"\n');
    peer.sendRaw('{"jsonrpc":"1.0","method":"turn/started","params":{}}\n');
    peer.send(terminal("t1", 1));
    peer.send(terminal("t1", 2)); // duplicate terminal
    peer.send(
      notification("item/started", { item: { itemId: "i", kind: "message", turnId: "t1", revision: 1, status: "inProgress", recordedAt: "x", text: "" } }, 3),
    );
    peer.send(notification("turn/completed", { turnId: 5 }, 4)); // ill-typed
    peer.send(terminal("t2", 5));
    await peer.client.turns.terminalOf("t2");
    expect(seen).toEqual(["t1", "t2"]);
    expect(problems).toHaveLength(6);
    expect(problems[0]).toMatch(/malformed JSON/);
    expect(problems[3]).toMatch(/second turn\/completed/);
    expect(problems[4]).toMatch(/after its turn\/completed/);
    expect(peer.client.isClosed).toBe(false);
    await peer.client.close();
  });

  it("shows an item left inProgress at its turn's terminal as cancelled, synthesized", async () => {
    const peer = makePeer();
    const synthesized: string[] = [];
    peer.client.events.on("itemSynthesized", (item) => synthesized.push(`${item.itemId}:${item.status}`));
    peer.send(
      notification(
        "item/started",
        {
          item: {
            itemId: "i1",
            kind: "toolCall",
            turnId: "t",
            revision: 1,
            status: "inProgress",
            recordedAt: "x",
            tool: "shell",
            callId: "c",
            args: "{}",
            visibleOutput: "",
            truncated: false,
          },
        },
        1,
      ),
    );
    peer.send(terminal("t", 2, "cancelled", "cancelled"));
    await peer.client.turns.terminalOf("t");
    expect(synthesized).toEqual(["i1:cancelled"]);
    expect(peer.client.items.get("t", "i1")?.synthesized).toBe(true);
    await peer.client.close();
  });
});

describe("MspConnection close", () => {
  it("settles every pending command and waiter as connectionClosed within 100 ms", async () => {
    const peer = makePeer();
    const pending = [
      peer.client.command("host/info", {}),
      peer.client.turns.terminalOf("t1", { timeoutMs: 60_000 }),
      peer.client.turns.terminalOf("t1", { timeoutMs: 60_000 }),
      peer.client.turns.terminalOf("t2", { timeoutMs: Infinity }),
    ].map((p) =>
      p.then(
        () => "resolved",
        (e: unknown) => (MspError.is(e) ? e.kind : "other"),
      ),
    );
    await peer.nth(1);
    const started = performance.now();
    await peer.client.close();
    const kinds = await Promise.all(pending);
    expect(performance.now() - started).toBeLessThan(100);
    expect(kinds).toEqual(["connectionClosed", "connectionClosed", "connectionClosed", "connectionClosed"]);
    expect(peer.client.turns.waiterCount).toBe(0);
    expect(peer.client.pendingCount).toBe(0);
    expect(peer.client.signal.aborted).toBe(true);
  });

  it("host EOF closes the connection and later commands reject at once", async () => {
    const peer = makePeer();
    const p = peer.client.command("host/info", {}).catch((e: unknown) => e);
    await peer.nth(1);
    peer.channel.end();
    const error = (await p) as MspError<"connectionClosed">;
    expect(error.kind).toBe("connectionClosed");
    expect(error.data["reason"]).toBe("the host closed the connection");
    expect((await peer.client.closed).reason).toBe("the host closed the connection");
    const after = (await peer.client.command("host/info", {}).catch((e: unknown) => e)) as MspError;
    expect(after.kind).toBe("connectionClosed");
  });

  it("a channel's end details (exit code, WebSocket close code and reason) reach CloseInfo and connectionClosed data", async () => {
    let end: ((details: EndDetails) => void) | undefined;
    const client = connect({
      onData: () => () => {},
      onEnd: (listener) => ((end = listener), () => {}),
      onError: () => () => {},
      write: () => {},
      end: () => {},
    });
    const pending = client.command("host/info", {}).catch((e: unknown) => e);
    end?.({ reason: "the host closed the connection (WebSocket close code 4001: bye)", closeCode: 4001, closeReason: "bye" });
    const info = { reason: "the host closed the connection (WebSocket close code 4001: bye)", closeCode: 4001, closeReason: "bye" };
    expect(await client.closed).toEqual(info);
    expect(((await pending) as MspError<"connectionClosed">).data).toEqual(info);
  });

  it("a write error (EPIPE) closes the connection and settles every command", async () => {
    const client = connect({
      onData: () => () => {},
      onEnd: () => () => {},
      onError: () => () => {},
      write: () => Promise.reject(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })),
      end: () => {},
    });
    const waiting = client.turns.terminalOf("t").catch((e: unknown) => e);
    const error = (await client.command("host/info", {}).catch((e: unknown) => e)) as MspError<"connectionClosed">;
    expect(error.kind).toBe("connectionClosed");
    expect(error.data["reason"]).toBe("write failed: write EPIPE");
    expect(((await waiting) as MspError).kind).toBe("connectionClosed");
  });
});

describe("a resume whose caller gave up", () => {
  it("still moves the cursor to afterCursor when the host accepts it late, so the replay is delivered", async () => {
    const peer = makePeer();
    const problems: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e.message));
    const seen: number[] = [];
    // The raw notifications: the replayed revision 6 is older than the ledger's 10, so no typed event reflects it.
    peer.client.events.on("notification", ({ method, params }) => {
      if (method === "item/started") seen.push((params?.["item"] as { revision: number }).revision);
    });
    const item = (revision: number) => ({ itemId: "i", kind: "message", turnId: "t", revision, status: "inProgress", text: "", recordedAt: "x" });
    peer.send(notification("item/started", { item: item(10) }, 10)); // this connection is at cursor 10
    const resume = peer.client.command("session/resume", { sessionId: SESSION, afterCursor: `v:${SESSION}:5` }, { timeoutMs: 5 });
    expect(await resume.catch((e: unknown) => MspError.is(e) && e.kind)).toBe("timeout");
    const sent = peer.received.find((m) => m["method"] === "session/resume") as { id: number };
    peer.send(result(sent.id, { commandId: "c", replayed: 1 })); // accepted after all…
    peer.send(notification("item/started", { item: item(6) }, 6)); // …and the replay from 5 follows
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([10, 6]);
    expect(problems).toEqual([]);
    expect(peer.client.lastViewCursor(SESSION)).toBe(`v:${SESSION}:6`);
    await peer.client.close();
  });
});
