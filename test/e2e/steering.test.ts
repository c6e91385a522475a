/**
 * Issue 22, steering and the inbox, on the real reference host over stdio and over a WebSocket:
 * a steer consumed at the model's next step boundary; refused once the turn ended (with its
 * terminal) and while it is queued; a default cancel's one `inbox/cancelled` splice (exactly the
 * discarded steer and queued turn, before the terminal); a `keepInbox` cancel carrying the steer
 * into the next turn; and a resume on a restarted host replaying all of it.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { MspError, type LedgerItem, type MessageItem, type MspClient } from "../../src/index.js";
import { checkTranscriptParts } from "../../src/testing/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { model, startHost, tempDataDir, until } from "../helpers/referenceHost.js";
import { startWsHost } from "../helpers/wsHost.js";

const input = (text: string) => [{ type: "text" as const, text }];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One host, one client, on one transport; `restart` brings up a new host on the same data and a new client. */
interface Rig {
  client: MspClient;
  /** Every notification the client heard, method and params, in order. */
  heard: Array<{ method: string; params: Record<string, unknown> }>;
  restart(): Promise<void>;
  /** The stdio wire (for checkTranscript), per host run. */
  wires?: string[][];
}

function listen(client: MspClient, heard: Rig["heard"]): void {
  client.events.on("notification", (n) => heard.push({ method: n.method, params: (n.params ?? {}) as Record<string, unknown> }));
}

async function stdioRig(modelName: string): Promise<Rig> {
  const temp = tempDataDir();
  cleanups.push(temp.remove);
  const heard: Rig["heard"] = [];
  const wires: string[][] = [];
  const rig: Rig = {
    client: undefined as unknown as MspClient,
    heard,
    wires,
    async restart() {
      await rig.client?.close();
      const r = startHost(model(modelName), temp.dir);
      wires.push(r.wire);
      cleanups.push(() => r.host.close().then(() => undefined));
      rig.client = r.host;
      listen(r.host, heard);
    },
  };
  await rig.restart();
  return rig;
}

async function wsRig(modelName: string): Promise<Rig> {
  const h = await startWsHost(model(modelName));
  cleanups.push(() => h.stop());
  const heard: Rig["heard"] = [];
  const connect = async () => {
    const client = await connectWebSocket(`ws://127.0.0.1:${h.port}/`, {
      token: h.token,
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      defaultTimeoutMs: 15_000,
    });
    cleanups.push(() => client.close().then(() => undefined));
    listen(client, heard);
    return client;
  };
  const rig: Rig = {
    client: await connect(),
    heard,
    async restart() {
      await rig.client.close();
      await h.crash();
      await h.restart();
      rig.client = await connect();
    },
  };
  return rig;
}

const steeringOf = (client: MspClient, turnId: string) =>
  client.items.itemsOf(turnId).filter((i): i is MessageItem & LedgerItem => i.kind === "message" && i.author === "user");
const repliesOf = (client: MspClient, turnId: string) =>
  client.items
    .itemsOf(turnId)
    .filter((i): i is MessageItem & LedgerItem => i.kind === "message" && i.author === undefined)
    .map((i) => i.text);
const splices = (rig: Rig) => rig.heard.filter((n) => n.method === "inbox/cancelled").map((n) => n.params);

async function toolRunning(client: MspClient, turnId: string): Promise<void> {
  await until(client, () => client.items.itemsOf(turnId).some((i) => i.kind === "toolCall" && /started/.test(i.visibleOutput)), "the tool's output");
}

/** Every stdio run's wire, checked on its own (invariant S among the rest). */
function expectWellFormed(rig: Rig): void {
  for (const wire of rig.wires ?? []) expect(checkTranscriptParts([wire]).flatMap((part) => part.problems)).toEqual([]);
}

describe.each([
  ["stdio", stdioRig],
  ["WebSocket", wsRig],
] as const)("steering over %s", (_transport, makeRig) => {
  it("a steer is consumed at the next step boundary, and the model's reply shows it; after the terminal a steer is refused with the terminal", async () => {
    const rig = await makeRig("steer.json");
    const { client } = rig;
    const { sessionId } = await client.command("session/create", {});
    const turn = client.startTurn({ sessionId, input: input("go") });
    // Sent at once: before the turn's turn/started, the host holds it until the turn starts.
    const steered = await turn.steer(input("use pnpm"), { timeoutMs: 10_000 });
    const { turnId } = await turn.accepted;
    expect(steered).toMatchObject({ status: "accepted", turnId, steerId: steered.commandId });
    const done = await turn.completed;
    expect(done.terminal).toBe("completed");
    const [item] = steeringOf(client, turnId);
    expect(item).toMatchObject({ kind: "message", author: "user", steerId: steered.steerId, text: "use pnpm", status: "completed" });
    expect(repliesOf(client, turnId)).toEqual(["Looking at the repo.", "Heard you: use pnpm. Done."]);

    const late = await turn.steer(input("too late"), { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(MspError.is(late) && late.kind === "commandRejected").toBe(true);
    expect((late as MspError).data).toMatchObject({ reason: "already_terminal", turnId, terminal: "completed" });
    expect(steeringOf(client, turnId)).toHaveLength(1);
    await client.close();
    expectWellFormed(rig);
  });

  it("a queued turn takes no steering (turn_not_running); a default cancel records one splice listing exactly the discarded steer and queued turn, before the terminal", async () => {
    const rig = await makeRig("steer-tool.json");
    const { client } = rig;
    const { sessionId } = await client.command("session/create", {});
    const running = client.startTurn({ sessionId, input: input("go") });
    const queued = client.startTurn({ sessionId, input: input("next") });
    const { turnId } = await running.accepted;
    const { turnId: queuedId, disposition } = await queued.accepted;
    expect(disposition).toBe("queued");
    const refused = await queued.steer(input("not yet"), { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect((refused as MspError).data).toMatchObject({ reason: "turn_not_running", turnId: queuedId });

    await toolRunning(client, turnId);
    const { steerId } = await running.steer(input("use pnpm"), { timeoutMs: 10_000 });
    await until(client, () => steeringOf(client, turnId).length === 1, "the steering item");
    const { turnCompleted } = await running.cancel({ timeoutMs: 10_000 });
    expect(turnCompleted.terminal).toBe("cancelled");
    expect((await queued.completed).terminal).toBe("cancelled");

    expect(splices(rig)).toHaveLength(1);
    expect(splices(rig)[0]).toMatchObject({ sessionId, turnId, discarded: { steerIds: [steerId], turnIds: [queuedId] } });
    const order = rig.heard.map((n) => (n.method === "turn/completed" ? `end ${String(n.params["turnId"])}` : n.method));
    expect(order.indexOf("inbox/cancelled")).toBeLessThan(order.indexOf(`end ${turnId}`));
    expect(steeringOf(client, turnId)[0]).toMatchObject({ status: "cancelled", failureReason: "discarded from inbox", steerId });
    await client.close();
    expectWellFormed(rig);
  });

  it("keepInbox: no splice; the steer is carried over and the next turn begins with it; a resume on a restarted host replays it all", async () => {
    const rig = await makeRig("steer-tool.json");
    const { sessionId } = await rig.client.command("session/create", {});
    const running = rig.client.startTurn({ sessionId, input: input("go") });
    const queued = rig.client.startTurn({ sessionId, input: input("next") });
    const { turnId } = await running.accepted;
    const { turnId: nextId } = await queued.accepted;
    await toolRunning(rig.client, turnId);
    const { steerId } = await running.steer(input("use pnpm"), { timeoutMs: 10_000 });
    await running.cancel({ keepInbox: true, timeoutMs: 10_000 });
    expect((await queued.completed).terminal).toBe("completed");

    expect(splices(rig)).toEqual([]);
    expect(steeringOf(rig.client, turnId)).toEqual([expect.objectContaining({ status: "cancelled", carriedOver: true, steerId, text: "use pnpm" })]);
    expect(steeringOf(rig.client, nextId)).toEqual([expect.objectContaining({ status: "completed", steerId, text: "use pnpm" })]);
    expect(steeringOf(rig.client, nextId)[0]?.carriedOver).toBeUndefined();
    expect(repliesOf(rig.client, nextId)).toEqual(["Next turn, starting with: use pnpm."]);

    // Durable: a restarted host replays the steering items and the carried-over one.
    await rig.restart();
    rig.heard.length = 0;
    const resumed = await rig.client.command("session/resume", { sessionId });
    await until(rig.client, () => rig.heard.length >= resumed.replayed, "the replay");
    expect(steeringOf(rig.client, turnId)[0]).toMatchObject({ status: "cancelled", carriedOver: true, steerId });
    expect(steeringOf(rig.client, nextId)[0]).toMatchObject({ status: "completed", steerId });
    await rig.client.close();
    expectWellFormed(rig);
  });
});
