/**
 * Issue 23, a resume's tree replay on the host's delivery, with a transport double whose held
 * bytes the test controls: the replay of a parent and its child is fed from their logs in host
 * order (`h`) a batch at a time as the transport drains; notifications published live meanwhile
 * (of either session, and of a grandchild linked mid-replay) wait and come in host order too; each
 * reaches the peer exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Delivery } from "../../packages/host/src/server/delivery.js";
import { HeldTransport } from "./heldTransport.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("a tree replay on a peer that is slow to read", () => {
  it("sends the replay and what was published meanwhile in host order, each once, a grandchild linked mid-replay included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "muse-tree-"));
    dirs.push(dir);
    const logs = new Map<string, SessionLog>();
    const cursors = new Map<string, number>();
    let h = 0;
    const delivery = new Delivery({
      read: (sessionId, from, upTo) => readSessionLog(sessionLogPath(dir, sessionId), { from, upTo }),
      lastCursor: (sessionId) => cursors.get(sessionId),
      terminal: () => undefined,
      log: () => {},
    });
    /** Logs one notification of `sessionId` (durably) and returns its params; `live` publishes it too. */
    const note = async (sessionId: string, live: boolean) => {
      let log = logs.get(sessionId);
      if (log === undefined) {
        log = SessionLog.open(sessionLogPath(dir, sessionId));
        log.append({ type: "session", at: 1, sessionId, model: "default" });
        logs.set(sessionId, log);
      }
      const n = (cursors.get(sessionId) ?? 0) + 1;
      cursors.set(sessionId, n);
      h += 1;
      const params = { sessionId, viewCursor: `v:${sessionId}:${n}`, emittedAtMs: h, turnId: `turn-${sessionId}`, order: h, padding: "x".repeat(80) };
      log.write({ type: "notification", at: h, n, h, method: "turn/started", params });
      await log.durable();
      if (live) delivery.publish("turn/started", params);
    };
    // Before the resume: the parent and the child interleaved in the logs.
    delivery.linkChild("P", "C");
    for (const s of ["P", "C", "C", "P", "P", "C", "P", "C", "C", "P"]) await note(s, false);
    const transport = new HeldTransport();
    const subscriber = delivery.attach(transport);
    delivery.deliver(subscriber, 1, {
      kind: "result",
      method: "session/resume",
      result: { commandId: "c", status: "accepted", sessionId: "P", replayed: 10 },
      replay: { sessionId: "P", after: 0, upTo: 5, children: [{ sessionId: "C", after: 0, upTo: 5 }] },
    });
    expect(transport.held).toBeGreaterThanOrEqual(transport.maxHeldBytes / 2); // it fell behind mid-replay
    // Meanwhile the tree goes on: both sessions, and a grandchild linked below the child.
    await note("C", true);
    await note("P", true);
    delivery.linkChild("C", "G");
    await note("G", true);
    await note("C", true);
    await note("G", true);
    for (let i = 0; i < 100 && transport.sent.filter((m) => m["method"] !== undefined).length < 15; i++) {
      transport.drain();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(transport.sent[0]).toMatchObject({ id: 1, result: { replayed: 10 } });
    const order = transport.sent.slice(1).map((m) => (m["params"] as { order: number }).order);
    expect(order).toEqual(Array.from({ length: 15 }, (_, i) => i + 1)); // h 1..15, once each, in order
    await delivery.fed();
    // Caught up: the next notification is sent live at once.
    transport.drain();
    await note("G", true);
    expect((transport.sent.at(-1)?.["params"] as { order: number }).order).toBe(16);
    for (const log of logs.values()) log.close();
  });
});
