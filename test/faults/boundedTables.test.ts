/**
 * Finding 11 (issue 10), unbounded maps, from a real child host: per-session tables are bounded
 * by `sessionCapacity`, the ledger's items per turn by `itemsPerTurnCapacity` (the earliest-finished
 * forgotten first), and close() empties every table that serves a live connection (pending and
 * abandoned commands, waiters, the ledger, followed sessions, known turns). The recorded terminals
 * and last cursors stay readable after close, bounded, for recovery. The heap figures (1M session
 * ids, 1M items) are in the leak suite and test/leaks/sessions.script.ts.
 */
import { describe, expect, it } from "vitest";
import { connect } from "../../src/index.js";
import { createLinkedPair } from "../../src/testing/index.js";
import { outcome, spawnFaulty, useFaultHarness } from "./harness.js";

useFaultHarness();

const TURN = "0198f0aa-0000-7000-8000-000000000001";

describe("finding 11: every table has a capacity, and close() empties them", () => {
  it("finding 11: 5 000 session ids from a real host: only the last sessionCapacity (100) are remembered", async () => {
    const host = spawnFaulty([["await", 1], ["sessions", 5_000], ["respond", 1, {}], ["hang"]], { sessionCapacity: 100 });
    await host.command("host/info", {});
    const remembered = Array.from({ length: 5_000 }, (_, i) => host.lastViewCursor(`session-${i}`) !== undefined);
    expect(remembered.filter(Boolean)).toHaveLength(100);
    expect(remembered.slice(-100).every(Boolean)).toBe(true);
  });

  it("finding 11: 3 000 items in one turn from a real host: the ledger keeps the latest itemsPerTurnCapacity (50)", async () => {
    const host = spawnFaulty([["await", 1], ["items", 3_000, TURN], ["respond", 1, {}], ["hang"]], { itemsPerTurnCapacity: 50 });
    const problems: string[] = [];
    host.events.on("protocolError", (e) => problems.push(e.data.problem));
    let delivered = 0;
    host.events.on("item/completed", () => delivered++);
    await host.command("host/info", {});
    expect(delivered).toBe(3_000); // every notification is delivered: only the ledger's view is bounded
    expect(host.items.itemsOf(TURN).map((i) => i.itemId)).toEqual(Array.from({ length: 50 }, (_, i) => `item-${2_950 + i}`));
    expect(problems).toEqual([]);
  });

  it("finding 11: close() empties the pending commands, waiters, ledger and session tables; terminals and last cursors stay readable", async () => {
    const host = spawnFaulty([["await", 1], ["items", 10, TURN], ["respond", 1, {}], ["hang"]]);
    await host.command("host/info", { sessionId: "0198f0aa-1111-7000-8000-0000000000aa" });
    const hanging = outcome(host.command("host/info", {}));
    const timedOut = await outcome(host.command("host/info", {}, { timeoutMs: 10 })); // abandoned
    expect((timedOut.error as { kind: string }).kind).toBe("timeout");
    const waiting = outcome(host.turns.terminalOf("never"));
    expect([host.items.turnCount, host.pendingCount, host.turns.waiterCount]).toEqual([1, 1, 1]);
    const last = host.lastViewCursor("0198f0aa-1111-7000-8000-0000000000aa");
    expect(last).toBe("v:0198f0aa-1111-7000-8000-0000000000aa:10");
    await host.close();
    await Promise.all([hanging, waiting]);
    expect([host.items.turnCount, host.items.itemsOf(TURN), host.pendingCount, host.turns.waiterCount]).toEqual([0, [], 0, 0]);
    expect(host.lastViewCursor("0198f0aa-1111-7000-8000-0000000000aa")).toBe(last);
  });

  it("finding 11: a capacity below 1 (or not a number) is a RangeError, before anything starts", () => {
    const [clientSide] = createLinkedPair();
    for (const bad of [{ sessionCapacity: 0 }, { itemsPerTurnCapacity: Number.NaN }, { terminalCapacity: -1 }, { itemTurnCapacity: "9" as never }]) {
      expect(() => connect(clientSide, bad)).toThrow(RangeError);
    }
    expect(() => spawnFaulty([["hang"]], { sessionCapacity: 0 })).toThrow(RangeError);
  });
});
