/**
 * StopController with approvals: the snapshot carries the turn's open question, `answer()`
 * answers it, and a Stop with the dialog open answers `cancelled` before `turn/cancel`, then
 * stays `stopping` until the turn's own terminal.
 */
import { describe, expect, it } from "vitest";
import { StopController, type StopSnapshot } from "../../src/ui/index.js";
import { makePeer, result, SESSION, terminal, type Peer } from "../helpers/peer.js";
import { openDialog } from "./openDialog.js";

const input = [{ type: "text" as const, text: "run ls" }];

async function runningTurn(peer: Peer) {
  const turn = peer.client.startTurn({ sessionId: SESSION, input });
  const stop = new StopController(turn);
  const snapshots: StopSnapshot[] = [];
  stop.subscribe((s) => snapshots.push(s));
  const start = await peer.nth(1);
  peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
  await turn.accepted;
  return { turn, stop, snapshots, turnId: turn.commandId };
}

function ask(id: number, turnId: string, itemId = "item-1") {
  return {
    jsonrpc: "2.0",
    id,
    method: "tool/approve",
    params: { sessionId: SESSION, turnId, itemId, callId: `call-${itemId}`, tool: "shell", args: '{"command":"ls"}' },
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("StopController and approvals", () => {
  it("the snapshot shows the open question; answer() answers it once and the dialog goes", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {})); // the dialog answers
    const { stop, turnId } = await runningTurn(peer);
    expect(stop.answer("approve")).toBe(false); // nothing open yet
    peer.send(ask(1, turnId));
    await settle();
    const shown = stop.getSnapshot();
    expect(shown.state).toBe("running");
    expect(shown.approval?.request).toMatchObject({ turnId, tool: "shell", args: '{"command":"ls"}' });
    expect(stop.answer("approve")).toBe(true);
    expect(stop.answer("deny")).toBe(false);
    expect(stop.getSnapshot().approval).toBeUndefined();
    expect(await peer.nth(2)).toEqual({ jsonrpc: "2.0", id: 1, result: { decision: "approve" } });
    peer.send(terminal(turnId, 1));
    await settle();
    expect(stop.getSnapshot()).toMatchObject({ state: "ended", turnCompleted: { terminal: "completed" } });
    await peer.client.close();
  });

  it("a controller made while its turn's question is already open shows it, and its Stop answers it cancelled", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {})); // the dialog answers
    const turn = peer.client.startTurn({ sessionId: SESSION, input });
    const start = await peer.nth(1);
    peer.send(result(start["id"], { commandId: turn.commandId, turnId: turn.commandId, startedNewTurn: true, disposition: "started" }));
    await turn.accepted;
    peer.send(ask(7, turn.commandId));
    await settle();
    expect(peer.client.approvals.openOf(turn.commandId)).toHaveLength(1);
    const stop = new StopController(turn); // made after the question opened
    expect(stop.getSnapshot().approval?.request).toMatchObject({ turnId: turn.commandId, tool: "shell" });
    const pressed = stop.stop();
    expect(await peer.nth(2)).toMatchObject({ id: 7, result: { decision: "cancelled" } });
    const cancel = await peer.nth(3);
    expect(cancel).toMatchObject({ method: "turn/cancel" });
    peer.send(result(cancel["id"], { commandId: "c", turnId: turn.commandId }));
    peer.send(terminal(turn.commandId, 1, "cancelled"));
    expect(await pressed).toMatchObject({ state: "ended", ack: "accepted", turnCompleted: { terminal: "cancelled" } });
    await peer.client.close();
  });

  it("Stop with the dialog open: cancelled goes before turn/cancel; stopping until the terminal; ended without a dialog", async () => {
    const peer = makePeer();
    const dialog = openDialog(peer.client);
    const { stop, snapshots, turnId } = await runningTurn(peer);
    peer.send(ask(3, turnId));
    await settle();
    expect(stop.getSnapshot().approval).toBeDefined();
    const pressed = stop.stop();
    expect(stop.getSnapshot()).toMatchObject({ state: "stopping", canStop: false });
    expect(stop.getSnapshot().approval).toBeUndefined();
    expect(dialog.signal?.aborted).toBe(true);
    expect(await peer.nth(2)).toEqual({ jsonrpc: "2.0", id: 3, result: { decision: "cancelled", reason: "turn cancelled" } });
    const cancel = await peer.nth(3);
    expect(cancel).toMatchObject({ method: "turn/cancel", params: { turnId } });
    // A late approve from the dialog does nothing: the question is closed.
    expect(stop.answer("approve")).toBe(false);
    peer.send(result(cancel["id"], { commandId: "c", turnId }));
    await settle();
    expect(stop.getSnapshot().state).toBe("stopping"); // the ack is not the outcome
    peer.send(terminal(turnId, 1, "cancelled", "cancelled while asking"));
    const final = await pressed;
    expect(final).toMatchObject({ state: "ended", ack: "accepted", turnCompleted: { terminal: "cancelled" } });
    expect(final.approval).toBeUndefined();
    expect(peer.received.filter((m) => !("method" in m))).toHaveLength(1);
    // Every snapshot from the click on is stopping, then ended: never running again.
    const fromClick = snapshots.slice(snapshots.findIndex((s) => s.state === "stopping"));
    expect(fromClick.map((s) => s.state)).toEqual([...fromClick.slice(0, -1).map(() => "stopping"), "ended"]);
    await peer.client.close();
  });

  it("only its own turn's questions; the listeners go when the turn ends", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {}));
    const { stop, turnId } = await runningTurn(peer);
    const before = peer.client.events.listenerCount("approvalAsked");
    peer.send(ask(1, "another-turn"));
    await settle();
    expect(stop.getSnapshot().approval).toBeUndefined();
    peer.send(terminal(turnId, 1));
    await settle();
    expect(stop.getSnapshot().state).toBe("ended");
    expect(peer.client.events.listenerCount("approvalAsked")).toBe(before - 1);
    expect(peer.client.events.listenerCount("approvalAnswered")).toBe(0);
    await peer.client.close();
  });

  it("the host asks twice: the snapshot shows the oldest, then the next", async () => {
    const peer = makePeer();
    peer.client.onApproval(() => new Promise(() => {}));
    const { stop, turnId } = await runningTurn(peer);
    peer.send(ask(1, turnId, "a"));
    peer.send(ask(2, turnId, "b"));
    await settle();
    expect(stop.getSnapshot().approval?.request.itemId).toBe("a");
    stop.answer("deny", "no");
    expect(stop.getSnapshot().approval?.request.itemId).toBe("b");
    stop.answer("approve");
    expect(stop.getSnapshot().approval).toBeUndefined();
    await peer.client.close();
  });
});
