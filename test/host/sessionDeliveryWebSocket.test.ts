/**
 * Who hears what, across transports, against a real host child: `spawnReferenceHost({webSocket})`
 * (`serve --stdio --ws`), two SDK WebSocket clients and the stdio client. No connection receives
 * another's session until it resumes it; then both see the same turn and the same terminal.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MspClient, MspNotification } from "../../src/index.js";
import { exampleModelPath, spawnReferenceHost, type SpawnedReferenceHost } from "../../src/node/index.js";
import { wsClient } from "./webSocketHostProcess.js";

const input = [{ type: "text" as const, text: "go" }];
const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** Every notification a client hears, as [method, sessionId, viewCursor, turnId]. */
function listen(client: MspClient): Array<[string, string, string, string]> {
  const heard: Array<[string, string, string, string]> = [];
  client.onNotification((n: MspNotification) => {
    const p = n.params as unknown as Record<string, unknown>;
    const item = p["item"] as { turnId?: string } | undefined;
    heard.push([n.method, String(p["sessionId"]), String(p["viewCursor"]), String(p["turnId"] ?? item?.turnId)]);
  });
  return heard;
}

async function start(): Promise<{ host: SpawnedReferenceHost; a: MspClient; b: MspClient }> {
  const host = spawnReferenceHost({
    script: exampleModelPath("hello"),
    models: { tests: exampleModelPath("run-tests") },
    stderr: "ignore",
    defaultTimeoutMs: 15_000,
    webSocket: {},
  });
  open.push(host);
  const { url, token } = await host.webSocket;
  const a = await wsClient(url, { token });
  open.push(a);
  const b = await wsClient(url, { token });
  open.push(b);
  return { host, a, b };
}

describe("per-connection delivery: two WebSocket clients and stdio on one host", () => {
  it("each connection hears only its own session", async () => {
    const { host, a, b } = await start();
    const [ha, hb, hs] = [listen(a), listen(b), listen(host)];
    const sa = (await a.command("session/create", {})).sessionId;
    const sb = (await b.command("session/create", {})).sessionId;
    const ss = (await host.command("session/create", {})).sessionId;
    const terminals = await Promise.all([
      a.startTurn({ sessionId: sa, input }).waitForTerminal({ timeoutMs: 10_000 }),
      b.startTurn({ sessionId: sb, input }).waitForTerminal({ timeoutMs: 10_000 }),
      host.startTurn({ sessionId: ss, input }).waitForTerminal({ timeoutMs: 10_000 }),
    ]);
    expect(terminals.map((t) => t.terminal)).toEqual(["completed", "completed", "completed"]);
    for (const [heard, mine] of [
      [ha, sa],
      [hb, sb],
      [hs, ss],
    ] as const) {
      expect(heard.length).toBeGreaterThan(3);
      expect(new Set(heard.map(([, session]) => session))).toEqual(new Set([mine]));
    }
  });

  it("after a resume, two tabs see the same running turn, and a Stop from either ends it for both", async () => {
    const { host, a, b } = await start();
    const [ha, hb, hs] = [listen(a), listen(b), listen(host)];
    const { sessionId } = await a.command("session/create", { model: "tests" });
    const turn = a.startTurn({ sessionId, input });
    await turn.accepted;
    // b has heard nothing of it, until it resumes the session: the replay, then the live stream.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hb).toEqual([]);
    await b.command("session/resume", { sessionId });
    // Stop from b, the tab that did not start the turn.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const turnId = turn.commandId;
    const [ta, tb] = await Promise.all([a.turns.terminalOf(turnId, { timeoutMs: 15_000 }), b.cancelTurn({ sessionId, turnId })]);
    expect(ta).toMatchObject({ terminal: "cancelled" });
    expect(tb).toEqual({ ack: "accepted", turnCompleted: ta });
    // The same stream, cursor for cursor, and the stdio client heard none of it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hb).toEqual(ha);
    expect(hs).toEqual([]);
    expect(host.items.itemsOf(turnId)).toEqual([]);
  }, 30_000);
});
