/**
 * SessionKeeper's bound, checked against its rule written the plain way: drop ended turns, oldest first, until
 * what is left, written whole to an empty storage, fits; if the unended turns alone do not fit, keep them without
 * items or cursor. The keeper sizes each turn from its record and skips turns that did not change; what it keeps
 * must be what the plain rule keeps, and fit, for sessions of every shape (seeded, so every run checks the same ones).
 */
import { describe, expect, it } from "vitest";
import type { Item } from "../../src/index.js";
import { SessionKeeper } from "../../src/session/sessionKeeper.js";
import type { KeptSession, KeptTurn } from "../../src/session/sessionStorage.js";
import { seededRandom } from "../helpers/seededRandom.js";
import { listedStorage } from "./listedStorage.js";

/** The characters `value` takes written whole, with no bound, to an empty storage. */
function writtenSize(value: KeptSession): number {
  const storage = listedStorage();
  new SessionKeeper(storage, "k", Number.MAX_SAFE_INTEGER, () => {}).write(value);
  return storage.total();
}

function plainRule(value: KeptSession, maxBytes: number): KeptSession {
  const turns = [...value.turns];
  for (;;) {
    const candidate: KeptSession = { ...value, turns };
    if (writtenSize(candidate) <= maxBytes) return candidate;
    const oldestEnded = turns.findIndex((turn) => turn.phase === "ended" || turn.phase === "unknown");
    if (oldestEnded === -1) break;
    turns.splice(oldestEnded, 1);
  }
  const bare: KeptSession = { turns: turns.map((turn) => ({ ...turn, items: [], droppedItems: 0 })) };
  if (value.sessionId !== undefined) bare.sessionId = value.sessionId;
  if (value.model !== undefined) bare.model = value.model;
  if (writtenSize(bare) <= maxBytes) return bare;
  return value.sessionId === undefined ? { turns: [] } : { sessionId: value.sessionId, turns: [] };
}

describe("SessionKeeper's storedBytes bound", () => {
  it("keeps what the plain rule keeps, within the bound, for 300 seeded sessions of long and short, ended and unended turns", () => {
    const random = seededRandom(34);
    const pick = (n: number) => Math.floor(random() * n);
    for (let run = 0; run < 300; run++) {
      const turns: KeptTurn[] = [];
      for (let t = 0, count = pick(12); t < count; t++) {
        const turnId = `t${t}`;
        const items = Array.from({ length: pick(4) }, (_, i): Item => {
          const long = 'é"x\n'.repeat(pick(3) === 0 ? pick(400) : pick(3) === 0 ? 256 + pick(9_000) : pick(20));
          return i % 2 === 0
            ? ({
                itemId: `${turnId}-${i}`,
                turnId,
                kind: "message",
                revision: 2,
                status: "completed",
                recordedAt: "2026-12-01T00:00:00.000Z",
                text: long,
              } as Item)
            : ({
                itemId: `${turnId}-${i}`,
                turnId,
                kind: "toolCall",
                revision: 3,
                status: "inProgress",
                recordedAt: "2026-12-01T00:00:00.000Z",
                tool: "shell",
                callId: "c",
                args: "{}",
                visibleOutput: long,
                truncated: false,
              } as Item);
        });
        turns.push({
          turnId,
          phase: (["running", "ended", "ended", "unknown"] as const)[pick(4)] as KeptTurn["phase"],
          items,
          droppedItems: 0,
          stopRequested: false,
        });
      }
      const value: KeptSession = { sessionId: "s", cursor: `v:s:${run}`, turns };
      const maxBytes = 100 + pick(pick(2) === 0 ? 6_000 : 60_000);
      const storage = listedStorage();
      new SessionKeeper(storage, "k", maxBytes, () => {}).write(value);
      expect(new SessionKeeper(storage, "k", maxBytes, () => {}).read()).toEqual(plainRule(value, maxBytes));
      expect(storage.total()).toBeLessThanOrEqual(Math.max(maxBytes, writtenSize({ sessionId: "s", turns: [] })));
    }
  });
});
