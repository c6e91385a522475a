/**
 * A Stop is final: once Stop is pressed for a turn, no answer given after it may run a tool.
 * Each case runs the reference host over a real WebSocket through a TCP proxy that records every
 * message both ways, so the assertions read what reached the host, not what the SDK meant to send.
 */
import { join } from "node:path";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { connectWebSocket, type WebSocketConstructor } from "../../src/websocket/index.js";
import { memoryStorage, openSession, type MspSession, type SessionSnapshot, type SessionTurn } from "../../src/session/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";
import { startProxy, startWsHost, type TcpProxy, type WsHost } from "../helpers/wsHost.js";

const APPROVE = join(repoRoot, "recipes/models/approve-tool.json");

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hostAndProxy(): Promise<{ host: WsHost; proxy: TcpProxy }> {
  const host = await startWsHost(APPROVE);
  cleanups.push(() => host.stop());
  const proxy = await startProxy(() => host.port);
  cleanups.push(() => proxy.close());
  return { host, proxy };
}

/** A session through `proxy`; every snapshot it shows is kept in `seen`. */
async function open(proxy: TcpProxy, host: WsHost, storage = memoryStorage()) {
  const seen: SessionSnapshot[] = [];
  const session = await openSession({
    connect: () => connectWebSocket(`ws://127.0.0.1:${proxy.port}/msp`, { token: host.token, WebSocket: WebSocket as unknown as WebSocketConstructor }),
    reconnect: { initialDelayMs: 50, maxDelayMs: 200, maxAttempts: 50 },
    storage,
    onWarning: () => {},
  });
  seen.push(session.getSnapshot());
  session.subscribe(() => seen.push(session.getSnapshot()));
  cleanups.push(() => session.close());
  return { session, seen };
}

const turnOf = (s: SessionSnapshot, turnId: string) => s.turns.find((t) => t.turnId === turnId) as SessionTurn;
const questionOpen = (session: MspSession, turnId: string, live: boolean) =>
  untilSnapshot(session, (s) => turnOf(s, turnId)?.approvals.some((a) => a.live === live) === true, `a ${live ? "live" : "kept"} question`, 20_000);

/** What the page sent the host: each answer to a `tool/approve`, and each `turn/cancel`, in wire order. */
type Sent = { cancel: true } | { decision: string };
function sentToHost(proxy: TcpProxy, turnId: string): Sent[] {
  return proxy
    .messages()
    .filter((m) => m.direction === "toHost")
    .map((m) => m.message)
    .flatMap((message): Sent[] => {
      if (message["method"] === "turn/cancel" && (message["params"] as { turnId?: string }).turnId === turnId) return [{ cancel: true }];
      if ("result" in message && !("method" in message) && typeof (message["result"] as { decision?: unknown }).decision === "string")
        return [{ decision: (message["result"] as { decision: string }).decision }];
      return [];
    });
}

/** The states the host logged for its questions. */
const approvalStates = (host: WsHost) =>
  host
    .logRecords()
    .filter((r) => r["type"] === "approval")
    .map((r) => String(r["state"]));

async function expectStoppedAndNothingRan(host: WsHost, proxy: TcpProxy, session: MspSession, turnId: string) {
  const ended = await session.turn(turnId)?.settled({ timeoutMs: 20_000 });
  expect(ended?.terminal?.terminal).toBe("cancelled");
  expect(ended?.terminal?.cause?.kind).toBe("user");
  const tool = ended?.items.find((item) => item.kind === "toolCall");
  expect(tool?.kind === "toolCall" ? tool.approval : "no tool call").not.toBe("approved");
  expect(tool?.kind === "toolCall" ? tool.visibleOutput : "").toBe("");
  const wire = sentToHost(proxy, turnId);
  expect(wire.filter((w) => "cancel" in w)).toHaveLength(1);
  expect(wire.filter((w) => "decision" in w && w.decision !== "cancelled")).toEqual([]);
  const states = approvalStates(host);
  expect(states.length).toBeGreaterThan(0);
  expect(states).not.toContain("approved");
  expect(host.cancelsLogged()).toHaveLength(1);
}

/** Starts a turn, waits for its question, then takes the connection down (refused until `proxy.refuse(false)`) with the dialog still shown. */
async function askedThenOffline(session: MspSession, proxy: TcpProxy) {
  const turn = session.startTurn("publish");
  await questionOpen(session, turn.turnId, true);
  proxy.refuse(true);
  proxy.cut();
  const down = await questionOpen(session, turn.turnId, false);
  return { turn, itemId: turnOf(down, turn.turnId).approvals[0]?.itemId as string };
}

describe("a Stop is final", () => {
  it("online, with the dialog open: the question is answered cancelled, an Approve pressed after it returns cancelled and sends nothing, and the Stop never reads kept", async () => {
    const { host, proxy } = await hostAndProxy();
    const { session, seen } = await open(proxy, host);
    const turn = session.startTurn("publish");
    const asked = await questionOpen(session, turn.turnId, true);
    const itemId = turnOf(asked, turn.turnId).approvals[0]?.itemId as string;
    const from = seen.length;
    turn.stop();
    expect(session.answerApproval(itemId, "approve")).toBe("cancelled");
    await expectStoppedAndNothingRan(host, proxy, session, turn.turnId);
    expect(sentToHost(proxy, turn.turnId)[0]).toEqual({ decision: "cancelled" });
    // Online the whole time: from the click on, the Stop reads sent or accepted, never kept.
    const states = seen.slice(from).map((s) => turnOf(s, turn.turnId)?.stopState);
    expect(states.filter((state) => state !== undefined)).not.toContain("kept");
    expect(states).toContain("sent");
    // Asked after its turn ended, the answer is still the Stop's.
    expect(session.answerApproval(itemId, "approve")).toBe("cancelled");
  }, 40_000);

  it("offline, with the dialog open: Stop, then Approve; after the reconnect the host gets one turn/cancel, only cancelled answers, and runs nothing", async () => {
    const { host, proxy } = await hostAndProxy();
    const { session } = await open(proxy, host);
    const { turn, itemId } = await askedThenOffline(session, proxy);
    turn.stop();
    expect(turnOf(session.getSnapshot(), turn.turnId).stopState).toBe("kept");
    expect(session.answerApproval(itemId, "approve")).toBe("cancelled");
    expect(session.answerApproval(itemId, "deny")).toBe("cancelled");
    proxy.refuse(false);
    await expectStoppedAndNothingRan(host, proxy, session, turn.turnId);
  }, 40_000);

  it("Approve pressed offline, then Stop: the Stop overrules the kept Approve", async () => {
    const { host, proxy } = await hostAndProxy();
    const { session } = await open(proxy, host);
    const { turn, itemId } = await askedThenOffline(session, proxy);
    expect(session.answerApproval(itemId, "approve")).toBe("approve");
    turn.stop();
    proxy.refuse(false);
    await expectStoppedAndNothingRan(host, proxy, session, turn.turnId);
  }, 40_000);

  it("across a reload: Stop and Approve pressed offline on one page; the next page over the same storage sends the one cancel and runs nothing", async () => {
    const { host, proxy } = await hostAndProxy();
    const storage = memoryStorage();
    const first = await open(proxy, host, storage);
    const { turn, itemId } = await askedThenOffline(first.session, proxy);
    turn.stop();
    expect(first.session.answerApproval(itemId, "approve")).toBe("cancelled");
    await first.session.close(); // the page goes away, its last write kept
    proxy.refuse(false);
    const second = await open(proxy, host, storage);
    expect(turnOf(second.session.getSnapshot(), turn.turnId).stopRequested).toBe(true);
    expect(second.session.answerApproval(itemId, "approve")).toBe("cancelled");
    await expectStoppedAndNothingRan(host, proxy, second.session, turn.turnId);
  }, 40_000);
});
