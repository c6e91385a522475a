/**
 * The session layer's bounds and its refusals, without a host: turns and items kept, bytes
 * stored, a storage that fails (a full quota) degrading to memory with one warning, the backoff's
 * delays, and bad options refused with a clear error.
 */
import { describe, expect, it } from "vitest";
import type { Item, TurnCompletedParams } from "../../src/index.js";
import { memoryStorage, openSession, SessionStorageError, type KeyValueStorage } from "../../src/session/index.js";
import { backoffDelay, reconnectPolicy } from "../../src/session/reconnectPolicy.js";
import { SessionKeeper } from "../../src/session/sessionKeeper.js";
import { SessionTurns } from "../../src/session/sessionTurns.js";
import { listedStorage } from "./listedStorage.js";

const message = (turnId: string, itemId: string, status: "inProgress" | "completed", text = "hi"): Item =>
  ({ itemId, turnId, kind: "message", revision: status === "completed" ? 2 : 1, status, recordedAt: "2026-12-01T00:00:00.000Z", text }) as Item;
const terminal = (turnId: string): TurnCompletedParams =>
  ({ sessionId: "s", viewCursor: "v:s:9", turnId, terminal: "completed", reason: "completed", durationMs: 1 }) as TurnCompletedParams;

/** A storage whose quota is full: every write throws, as a browser's does. */
function fullStorage(): KeyValueStorage & { writes: number } {
  const storage = {
    writes: 0,
    getItem: () => null,
    setItem: () => {
      storage.writes++;
      throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
    },
    removeItem: () => {},
  };
  return storage;
}

describe("bounds", () => {
  it("keeps at most `turns` turns, dropping the oldest ended ones, never an unended one", () => {
    const turns = new SessionTurns(2, 10);
    turns.ensure("a");
    turns.ensure("b");
    turns.end(terminal("b"));
    turns.ensure("c");
    expect(turns.all().map((t) => t.turnId)).toEqual(["a", "c"]); // b ended: dropped; a unended: kept
    turns.ensure("d");
    expect(turns.all().map((t) => t.turnId)).toEqual(["a", "c", "d"]); // nothing ended to drop: over the bound rather than lose a Stop
  });

  it("keeps at most `itemsPerTurn` items, dropping the oldest finished ones and counting them", () => {
    const turns = new SessionTurns(10, 2);
    turns.putItem(message("t", "i1", "completed"));
    turns.putItem(message("t", "i2", "inProgress"));
    turns.putItem(message("t", "i3", "completed"));
    const turn = turns.get("t");
    expect([...(turn?.items.keys() ?? [])]).toEqual(["i2", "i3"]);
    expect(turn?.droppedItems).toBe(1);
    expect(turns.view(turn as never, "open").droppedItems).toBe(1);
  });

  it("merges by revision: an older or equal revision changes nothing; only the terminal ends a turn", () => {
    const turns = new SessionTurns(10, 10);
    expect(turns.putItem(message("t", "i1", "completed", "whole"))).toBe(true);
    expect(turns.putItem(message("t", "i1", "inProgress", "wh"))).toBe(false);
    expect(turns.get("t")?.items.get("i1")).toMatchObject({ text: "whole" });
    expect(turns.markUnknown("gave up")).toBe(true);
    expect(turns.get("t")?.phase).toBe("unknown");
    expect(turns.end(terminal("t"))).toBe(true); // the host has the last word
    expect(turns.get("t")).toMatchObject({ phase: "ended", unknownReason: undefined });
  });

  it("stores at most `storedBytes`: ended turns go first; unended ones that still do not fit are kept without their items and without the cursor", () => {
    const storage = listedStorage();
    const keeper = new SessionKeeper(storage, "k", 700, () => {});
    const big = (turnId: string, phase: "ended" | "running") => ({
      turnId,
      phase,
      items: [message(turnId, `${turnId}-i`, "completed", "x".repeat(150))],
      droppedItems: 0,
      stopRequested: false,
    });
    const reread = () => new SessionKeeper(storage, "k", 700, () => {}).read();
    keeper.write({ sessionId: "s", cursor: "v:s:9", turns: [big("old", "ended"), big("new", "running")] });
    const kept = reread();
    expect(kept.turns.map((t) => t.turnId)).toEqual(["new"]);
    expect(kept.cursor).toBe("v:s:9");
    expect(storage.total()).toBeLessThanOrEqual(700);
    keeper.write({ sessionId: "s", cursor: "v:s:9", turns: [big("a", "running"), big("b", "running"), big("c", "running")] });
    const bare = reread();
    expect(bare.cursor).toBeUndefined(); // a reload replays the session whole rather than resume on a cut copy
    expect(bare.turns.map((t) => [t.turnId, t.items.length])).toEqual([
      ["a", 0],
      ["b", 0],
      ["c", 0],
    ]);
    expect(storage.total()).toBeLessThanOrEqual(700);
    expect([...storage.values.keys()].sort()).toEqual(["k", "k:turn:a", "k:turn:b", "k:turn:c"]); // the dropped turns' keys are gone
  });

  it("a full storage quota degrades to memory with one warning, and never throws into the app", async () => {
    const storage = fullStorage();
    const warnings: string[] = [];
    const errors: SessionStorageError[] = [];
    const session = await openSession({
      connect: () => Promise.reject(new Error("no host here")),
      reconnect: false,
      storage,
      onWarning: (w) => warnings.push(w),
      onStorageError: (error) => errors.push(error),
    });
    expect(session.getSnapshot().connection).toMatchObject({ state: "closed", reason: { kind: "lost", message: "no host here" } });
    expect(() => session.startTurn("one")).not.toThrow();
    expect(() => session.startTurn("two")).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 250)); // the gathered writes
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/storage failed \(The quota has been exceeded\.\): it goes on in memory/);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(SessionStorageError);
    expect(errors[0]).toMatchObject({ kind: "quotaExceeded", operation: "write", message: warnings[0] });
    expect((errors[0]?.cause as DOMException).name).toBe("QuotaExceededError");
    expect(session.getSnapshot().storage).toBe("memory");
    // Not sent (the session gave up before they were started): they go with the next attempt (retryNow()).
    expect(session.getSnapshot().turns.map((t) => t.phase)).toEqual(["starting", "starting"]);
    expect(storage.writes).toBe(1);
    await session.close();
  });

  it("an onWarning that throws does not throw into the app; close() tells the listeners", async () => {
    const session = await openSession({
      connect: () => Promise.reject(new Error("offline")),
      reconnect: false,
      storage: fullStorage(),
      onWarning: () => {
        throw new Error("the app's warning handler broke");
      },
    });
    expect(() => session.startTurn("one")).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(session.getSnapshot().storage).toBe("memory");
    const states: string[] = [];
    session.subscribe(() => states.push(session.getSnapshot().connection.state));
    await session.close();
    expect(states).toEqual(["closed"]);
    expect(session.getSnapshot().connection.reason?.kind).toBe("closed");
  });

  it("junk in the storage is dropped, not trusted", async () => {
    const storage = memoryStorage();
    storage.setItem(
      "muse-code:session",
      JSON.stringify({
        sessionId: 7,
        turns: [
          { turnId: "t", phase: "exploded", items: [] },
          { turnId: "u", phase: "running", items: [{ nope: 1 }] },
        ],
      }),
    );
    const session = await openSession({ connect: () => Promise.reject(new Error("offline")), reconnect: false, storage, onWarning: () => {} });
    const { sessionId, turns } = session.getSnapshot();
    expect(sessionId).toBeUndefined();
    expect(turns.map((t) => [t.turnId, t.items.length])).toEqual([["u", 0]]);
    await session.close();
  });
});

describe("reconnect policy and options", () => {
  it("backs off exponentially with equal jitter, capped", () => {
    const policy = reconnectPolicy({ initialDelayMs: 100, maxDelayMs: 1_000 }) as NonNullable<ReturnType<typeof reconnectPolicy>>;
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n, () => 1))).toEqual([100, 200, 400, 800, 1000]);
    expect([1, 2, 3].map((n) => backoffDelay(policy, n, () => 0))).toEqual([50, 100, 200]);
    expect(policy.maxAttempts).toBe(10);
    expect(reconnectPolicy(false)).toBeUndefined();
  });

  it("refuses bad options with a clear error before anything connects", async () => {
    await expect(openSession({} as never)).rejects.toThrow(new TypeError("openSession: options.connect must be a function that returns a Promise<MspClient>"));
    await expect(openSession({ connect: () => Promise.reject(new Error("x")), sessionId: "" })).rejects.toThrow(TypeError);
    await expect(openSession({ connect: () => Promise.reject(new Error("x")), reconnect: { maxAttempts: 0 } })).rejects.toThrow(
      /maxAttempts must be at least 1/,
    );
    await expect(openSession({ connect: () => Promise.reject(new Error("x")), limits: { turns: 0 } })).rejects.toThrow(
      /limits.turns must be a whole number ≥ 1/,
    );
    const session = await openSession({ connect: () => Promise.reject(new Error("x")), reconnect: false, onWarning: () => {} });
    expect(() => session.startTurn("")).not.toThrow(); // a prompt may be empty text…
    expect(() => session.startTurn([])).toThrow(TypeError); // …but not an empty input
    await session.close();
    expect(() => session.startTurn("late")).toThrow(/the session is closed/);
    await expect(session.turn(session.getSnapshot().turns[0]?.turnId as string)?.settled()).rejects.toThrow(/the session was closed/);
  });
});
