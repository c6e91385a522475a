/**
 * The client on an MSP 2.0 stream: deltas and patches folded into whole items for `client.items`
 * and the typed events, the appended piece on `item/delta`, broken chains reported and never
 * applied, a resume's items as the base of its replay, and a host of another major refused.
 */
import { describe, expect, it } from "vitest";
import { MspError, type ItemDeltaEvent, type LedgerItem } from "../../src/index.js";
import { makePeer, notification, result, SESSION } from "../helpers/peer.js";

const turnId = "0198f0aa-2222-7000-8000-000000000001";
const started = (itemId: string, extra: Record<string, unknown> = {}) =>
  notification("item/started", { item: { itemId, kind: "message", turnId, revision: 1, status: "inProgress", recordedAt: "r1", text: "", ...extra } }, 0);
const delta = (itemId: string, revision: number, append: string) => ({ turnId, itemId, revision, field: "text", append, recordedAt: `r${revision}` });
const at = (message: ReturnType<typeof notification>, cursor: number) => ({
  ...message,
  params: { ...message.params, viewCursor: `v:${SESSION}:${cursor}` },
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("a 2.0 stream through the client", () => {
  it("folds deltas and patches into whole items; item/delta gives the piece appended and the whole item", async () => {
    const peer = makePeer();
    const deltas: ItemDeltaEvent[] = [];
    const updated: LedgerItem[] = [];
    const raw: unknown[] = [];
    peer.client.events.on("item/delta", (event) => deltas.push(event));
    peer.client.events.on("item/updated", ({ item }) => updated.push(item));
    peer.client.onNotification((n) => raw.push(n.params));
    peer.send(at(started("i1"), 1));
    peer.send(notification("item/delta", delta("i1", 2, "Hel"), 2));
    peer.send(notification("item/delta", delta("i1", 3, "lo"), 3));
    peer.send(notification("item/updated", { item: { itemId: "i1", turnId, kind: "message", revision: 4, recordedAt: "r4", interrupted: true } }, 4));
    await settle();
    expect(deltas.map((d) => [d.append, d.field, (d.item as { text?: string }).text, d.item.revision])).toEqual([
      ["Hel", "text", "Hel", 2],
      ["lo", "text", "Hello", 3],
    ]);
    expect(deltas[1]?.viewCursor).toBe(`v:${SESSION}:3`);
    // The typed item/updated event and client.items give the whole item; the raw handler, the patch.
    expect(updated).toEqual([{ itemId: "i1", kind: "message", turnId, revision: 4, status: "inProgress", recordedAt: "r4", text: "Hello", interrupted: true }]);
    expect(peer.client.items.get(turnId, "i1")).toEqual(updated[0]);
    expect((raw[3] as { item: Record<string, unknown> }).item).not.toHaveProperty("text");
    await peer.client.close();
  });

  it("a delta with a gap, or for an item never started, is a protocolError and is never applied", async () => {
    const peer = makePeer();
    const problems: string[] = [];
    const deltas: string[] = [];
    peer.client.events.on("protocolError", (e) => problems.push(e.data.problem));
    peer.client.events.on("item/delta", ({ append }) => deltas.push(append));
    peer.send(at(started("i1"), 1));
    peer.send(notification("item/delta", delta("i1", 2, "a"), 2));
    peer.send(notification("item/delta", delta("i1", 4, "c"), 3)); // revision 3 never came
    peer.send(notification("item/delta", delta("nope", 2, "x"), 4));
    peer.send(notification("item/delta", { ...delta("i1", 3, "b"), field: "words" }, 5));
    await settle();
    expect(problems).toEqual([
      "item/delta of item i1 has revision 4 after 2: a gap",
      "item/delta of item nope: the item is not held (never started, or not kept)",
      'item/delta: field "words" is not one of text, visibleOutput',
    ]);
    expect(deltas).toEqual(["a"]);
    expect((peer.client.items.get(turnId, "i1") as { text?: string } | undefined)?.text).toBe("a");
    await peer.client.close();
  });

  it("a resume's items are the base of its replay: a client that held nothing ends with the whole item", async () => {
    const peer = makePeer();
    const resume = peer.client.command("session/resume", { sessionId: SESSION, afterCursor: `v:${SESSION}:7` });
    const sent = (await peer.nth(1)) as { id: number };
    const held = { itemId: "i9", kind: "message", turnId, revision: 5, status: "inProgress", recordedAt: "r5", text: "Once upon" };
    peer.send(result(sent.id, { commandId: "c", sessionId: SESSION, replayed: 1, items: [held] }));
    peer.send(notification("item/delta", delta("i9", 6, " a time"), 8));
    await resume;
    await settle();
    expect(peer.client.items.get(turnId, "i9")).toEqual({ ...held, text: "Once upon a time", revision: 6, recordedAt: "r6" });
    await peer.client.close();
  });

  it("host/info from a host of another major rejects with a protocol error naming both versions", async () => {
    const peer = makePeer();
    const info = peer.client.command("host/info", {}).catch((e: unknown) => e);
    const sent = (await peer.nth(1)) as { id: number };
    peer.send(result(sent.id, { commandId: "c", name: "old", version: "0.9", protocolVersion: "1.0", fingerprint: "x", capabilities: {}, models: [] }));
    const error = (await info) as MspError<"protocol">;
    expect(MspError.is(error) && error.kind).toBe("protocol");
    expect(error.data).toMatchObject({ problem: "the host speaks MSP 1.0; this SDK speaks MSP 2.1", hostVersion: "1.0", sdkVersion: "2.1" });
    // A host of this major is answered as usual.
    const again = peer.client.command("host/info", {});
    const second = (await peer.nth(2)) as { id: number };
    peer.send(result(second.id, { commandId: "d", protocolVersion: "2.4" }));
    expect((await again).protocolVersion).toBe("2.4");
    await peer.client.close();
  });
});
