/**
 * Issue 23, the host order: the host-wide sequence `h` (stamped, and continued above the highest
 * one read back), the rule that picks which session's record comes first, and a tree replay's feed
 * that merges real session logs by it, a batch at a time, across any number of stops for a full
 * transport, sending every record once, in `h` order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { firstInHostOrder, HostOrder } from "../../packages/host/src/log/hostOrder.js";
import { feedTreeBatch, type FeedStep, type LogFeed, type TreeFeedMember } from "../../packages/host/src/server/logFeed.js";
import { SessionLog } from "../../packages/host/src/log/sessionLog.js";
import { logStart, readSessionLog } from "../../packages/host/src/log/sessionLogReader.js";
import { sessionLogPath } from "../../packages/host/src/log/sessionLogRecord.js";
import { recoverSessions } from "../../packages/host/src/log/sessionRecovery.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("HostOrder", () => {
  it("stamps one above everything stamped or seen", () => {
    const order = new HostOrder();
    expect(order.next()).toBe(1);
    order.seen(41);
    order.seen(7); // lower: ignored
    order.seen(Number.NaN); // not a stamp: ignored
    expect(order.next()).toBe(42);
    expect(order.last).toBe(42);
  });
});

describe("firstInHostOrder", () => {
  it("picks the smallest h; an unstamped record first; ties to the earlier session; -1 when nothing is left", () => {
    expect(firstInHostOrder([{ h: 9, n: 3 }, undefined, { h: 4, n: 1 }])).toBe(2);
    expect(firstInHostOrder([{ h: 2, n: 5 }, { n: 1 }])).toBe(1);
    expect(firstInHostOrder([{ n: 5 }, { n: 1 }])).toBe(0);
    expect(firstInHostOrder([undefined, undefined])).toBe(-1);
    expect(firstInHostOrder([])).toBe(-1);
  });
});

/** Writes sessions' logs whose notifications are stamped in the interleaving `owners` (session index per h, h from 1). */
async function treeLogs(owners: readonly number[], sessions: number): Promise<{ dir: string; ids: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-order-"));
  dirs.push(dir);
  const ids = Array.from({ length: sessions }, (_, i) => `s${i}`);
  const logs = ids.map((id) => {
    const log = SessionLog.open(sessionLogPath(dir, id));
    log.append({ type: "session", at: 1, sessionId: id, model: "default" });
    return log;
  });
  const cursors = ids.map(() => 0);
  owners.forEach((owner, i) => {
    const id = ids[owner] as string;
    const n = ++(cursors[owner] as number);
    const h = i + 1;
    (logs[owner] as SessionLog).write({
      type: "notification",
      at: h,
      n,
      h,
      method: "turn/started",
      params: { sessionId: id, viewCursor: `v:${id}:${n}`, emittedAtMs: h, turnId: `t${h}` },
    });
  });
  for (const log of logs) {
    await log.durable();
    log.close();
  }
  return { dir, ids };
}

describe("feedTreeBatch", () => {
  it("sends every record after each session's cursor once, in h order, however often the transport fills up", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }).chain((sessions) =>
          fc.record({
            sessions: fc.constant(sessions),
            owners: fc.array(fc.integer({ min: 0, max: sessions - 1 }), { minLength: 1, maxLength: 40 }),
            afters: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: sessions, maxLength: sessions }),
            room: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 20 }),
          }),
        ),
        async ({ sessions, owners, afters, room }) => {
          const { dir, ids } = await treeLogs(owners, sessions);
          const cursors = new Map(ids.map((id, i) => [id, afters[i] ?? 0]));
          const sent: Array<{ sessionId: string; n: number; h: number }> = [];
          let fits = 0;
          const members: TreeFeedMember[] = ids.map((sessionId) => {
            const feed: LogFeed = { sessionId, position: logStart(), upTo: Infinity, requests: [] };
            const step: FeedStep = {
              read: (from, upTo) => readSessionLog(sessionLogPath(dir, sessionId), { from, upTo }),
              target: Infinity,
              cursor: () => cursors.get(sessionId) ?? 0,
              fits: () => fits-- > 0,
              send: (_message, record) => {
                sent.push({ sessionId, n: record.n, h: record.h ?? 0 });
                cursors.set(sessionId, record.n);
              },
              budgetBytes: undefined,
            };
            return { feed, step };
          });
          // Batches with the room the transport has each time, until one catches up.
          let outcome = "full";
          for (let i = 0; outcome !== "caughtUp"; i++) {
            fits = i < room.length ? (room[i] as number) : Infinity;
            outcome = feedTreeBatch(members, undefined, () => {});
          }
          const expected = owners
            .map((owner, i) => ({ sessionId: ids[owner] as string, h: i + 1 }))
            .map((r, i, all) => ({ ...r, n: all.slice(0, i + 1).filter((x) => x.sessionId === r.sessionId).length }))
            .filter((r) => r.n > (afters[ids.indexOf(r.sessionId)] ?? 0));
          expect(sent).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("stops on its read budget and goes on where it stood", async () => {
    const { dir, ids } = await treeLogs([0, 1, 0, 1, 1, 0, 0, 1], 2);
    const sent: number[] = [];
    const cursors = new Map<string, number>();
    const members = ids.map((sessionId) => ({
      feed: { sessionId, position: logStart(), upTo: Infinity, requests: [] } as LogFeed,
      step: {
        read: (from, upTo) => readSessionLog(sessionLogPath(dir, sessionId), { from, upTo }),
        target: Infinity,
        cursor: () => cursors.get(sessionId) ?? 0,
        fits: () => true,
        send: (_m, record) => {
          sent.push(record.h ?? 0);
          cursors.set(sessionId, record.n);
        },
        budgetBytes: 1,
      } as FeedStep,
    }));
    const outcomes: string[] = [];
    for (let i = 0; i < 50 && outcomes.at(-1) !== "caughtUp"; i++) outcomes.push(feedTreeBatch(members, 1, () => {}));
    expect(outcomes).toContain("budget");
    expect(outcomes.at(-1)).toBe("caughtUp");
    expect(sent).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe("recovery and the host order", () => {
  it("goes on above the highest h in the data dir, and stamps its closings leaves first", () => {
    const data = mkdtempSync(join(tmpdir(), "muse-order-"));
    dirs.push(data);
    const open = (sessionId: string, parent: Record<string, unknown> | undefined, hs: number[]) => {
      const log = SessionLog.open(sessionLogPath(data, sessionId));
      log.append({ type: "session", at: 1, sessionId, model: "default" });
      log.append({ type: "turnAccepted", at: 2, turnId: `${sessionId}-t`, input: [], disposition: "started" });
      hs.forEach((h, i) => {
        const params = i === 0 ? { turnId: `${sessionId}-t`, ...(parent === undefined ? {} : { parent, depth: 1 }) } : { turnId: `${sessionId}-t`, x: i };
        log.append({
          type: "notification",
          at: 3,
          n: i + 1,
          h,
          method: "turn/started",
          params: { sessionId, viewCursor: `v:${sessionId}:${i + 1}`, ...params },
        });
      });
      log.close();
    };
    // Named so that a directory listing puts the parent first: the order must come from the links.
    open("a-parent", undefined, [1, 2, 7]);
    open("b-child", { sessionId: "a-parent", turnId: "a-parent-t", itemId: "i" }, [3, 40]);
    const order = new HostOrder();
    const recovered = recoverSessions(data, { order });
    expect(recovered.map((r) => r.sessionId)).toEqual(["b-child", "a-parent"]);
    const closing = (sessionId: string) =>
      [...readSessionLog(sessionLogPath(data, sessionId))].flatMap((r) => (r.type === "notification" && r.method === "turn/completed" ? [r.h] : []));
    const [child] = closing("b-child");
    const [parent] = closing("a-parent");
    expect(child).toBe(41); // above every h of the data dir
    expect(parent).toBe(42); // after the child's: leaves first
    expect(order.next()).toBe(43);
  });
});
