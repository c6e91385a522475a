import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { CannedHost } from "../../src/testing/index.js";

/** Resolves once `done()` holds (polled every 5 ms, for at most 2 s). */
async function until(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 2_000; !done();) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const input = [{ type: "text" as const, text: "Run the flaky integration suite" }];

describe("CannedHost", () => {
  it("replays the recorded cancel-mid-turn exchange through the SDK: every notification, in order, folded into items", async () => {
    const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
    const recorded = readFileSync("transcripts/cancel-mid-turn.jsonl", "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(JSON.parse(line).raw as string) as { method?: string; id?: unknown })
      .filter((m) => m.method !== undefined && m.id === undefined)
      .map((m) => m.method);
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    const seen: string[] = [];
    msp.onNotification((n) => seen.push(n.method));
    const { sessionId } = await msp.command("session/create", {});
    const ack = await msp.command("turn/start", { sessionId, input });
    expect(ack.turnId).toBe(ack.commandId);
    expect(ack.disposition).toBe("started");
    await until(() => seen.includes("item/delta") && seen.lastIndexOf("item/started") > seen.indexOf("item/completed"));
    const cancel = await msp.command("turn/cancel", { sessionId, turnId: ack.turnId });
    expect(cancel.status).toBe("accepted");
    const terminal = await msp.turns.terminalOf(ack.turnId, { timeoutMs: 1_000 });
    expect(terminal.terminal).toBe("cancelled");
    expect(terminal.reason).toBe("cancelled during tool execution");
    expect(seen).toEqual(recorded);
    expect(seen).toContain("item/delta");
    const [message, tool] = msp.items.itemsOf(ack.turnId);
    expect([message?.kind, message?.status, tool?.kind, tool?.status]).toEqual(["message", "completed", "toolCall", "cancelled"]);
    await host.done();
    await msp.close();
  });

  it("fails loudly with a diff when the client strays, and the pending command settles", async () => {
    const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
    const msp = host.connect({ defaultTimeoutMs: 2_000 });
    const { sessionId } = await msp.command("session/create", {});
    const error = await msp.command("turn/start", { sessionId, input: [{ type: "text", text: "something else" }] }).catch((e: unknown) => e);
    expect(MspError.is(error) && error.kind).toBe("rpcError");
    await expect(host.done()).rejects.toThrow(/params\.input\.0\.text: expected "Run the flaky integration suite", got "something else"/);
    await msp.closed;
  });

  it("a channel whose write rejects fails done() with the reason, and nothing is left unhandled", async () => {
    const host = CannedHost.fromLines([
      '{"dir":"client","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"host/info\\",\\"params\\":{\\"commandId\\":\\"c1\\"}}"}',
      '{"dir":"server","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":{\\"commandId\\":\\"c1\\",\\"status\\":\\"accepted\\"}}"}',
      '{"dir":"client","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":2,\\"method\\":\\"host/info\\",\\"params\\":{\\"commandId\\":\\"c2\\"}}"}',
    ]);
    const listeners: Array<(bytes: Uint8Array) => void> = [];
    host.attach({
      onData: (listener) => {
        listeners.push(listener);
        return () => {};
      },
      onEnd: () => () => {},
      onError: () => () => {},
      write: () => Promise.reject(new Error("socket reset")),
      end: () => {},
    });
    const request = '{"jsonrpc":"2.0","id":1,"method":"host/info","params":{"commandId":"c1"}}\n';
    for (const listener of listeners) listener(new TextEncoder().encode(request));
    await expect(host.done({ timeoutMs: 2_000 })).rejects.toThrow(/the client went away while the host was replying: Error: socket reset/);
  });
});

describe("CannedHost checks the client's envelope", () => {
  it("refuses a request that is not JSON-RPC 2.0 or reuses an id", async () => {
    const { createLinkedPair } = await import("../../src/testing/index.js");
    const lines = [1, 2].flatMap((n) => [
      JSON.stringify({ dir: "client", raw: JSON.stringify({ jsonrpc: "2.0", id: n, method: "host/info", params: { commandId: `c${n}` } }) }),
      JSON.stringify({ dir: "server", raw: JSON.stringify({ jsonrpc: "2.0", id: n, result: { commandId: `c${n}`, status: "accepted" } }) }),
    ]);
    for (const [first, second, problem] of [
      [
        { jsonrpc: "2.0", id: 7, method: "host/info", params: { commandId: "a" } },
        { jsonrpc: "2.0", id: 7, method: "host/info", params: { commandId: "b" } },
        /id: 7 was already used/,
      ],
      [{ jsonrpc: "1.0", id: 1, method: "host/info", params: { commandId: "a" } }, undefined, /jsonrpc: expected "2.0", got "1.0"/],
    ] as const) {
      const host = CannedHost.fromLines(lines);
      const [client, hostSide] = createLinkedPair();
      host.attach(hostSide);
      const enc = new TextEncoder();
      client.write(enc.encode(`${JSON.stringify(first)}\n`));
      if (second !== undefined) client.write(enc.encode(`${JSON.stringify(second)}\n`));
      await expect(host.done({ timeoutMs: 1_000 })).rejects.toThrow(problem);
      client.end();
    }
  });
});
