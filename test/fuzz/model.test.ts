/**
 * Model-based fuzz: random schedules of terminal waits, cancels, host acks, rejections
 * (already_terminal, unknown_turn), turn completions and close, against a scripted in-memory
 * peer. Every terminalOf waiter and every cancelTurn settles exactly once, with the outcome a
 * simple model predicts, and nothing is left pending.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { connect, MspError, type ByteChannel, type EndDetails } from "../../src/index.js";

const RUNS = 1_000;
const SESSION = "s";
const TURNS = ["t0", "t1", "t2"] as const;
const enc = new TextEncoder();
const dec = new TextDecoder();

type Op =
  | { t: "wait"; turn: number }
  | { t: "cancel"; turn: number }
  | { t: "ack" | "rejectAlreadyTerminal" | "rejectUnknown"; pick: number }
  | { t: "complete"; turn: number; terminal: "completed" | "cancelled" | "failed" }
  | { t: "close" }
  | { t: "end" };

const turn = fc.nat(TURNS.length - 1);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("wait" as const), turn }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("cancel" as const), turn }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constantFrom("ack" as const, "rejectAlreadyTerminal" as const, "rejectUnknown" as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("complete" as const),
      turn,
      terminal: fc.constantFrom("completed" as const, "cancelled" as const, "failed" as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom("close" as const, "end" as const) }) },
);

/** What a tracked promise became. */
interface Tracked {
  label: string;
  settledTimes: number;
  outcome?: string;
  expected?: string;
  /** Set when the model knows the answer. */
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

async function runSchedule(ops: Op[]): Promise<void> {
  const data = new Set<(c: Uint8Array) => void>();
  const ends = new Set<(d?: EndDetails) => void>();
  const requests: Array<{ id: number; method: string; turnId: string }> = [];
  const channel: ByteChannel = {
    onData: (l) => (data.add(l), () => data.delete(l)),
    onEnd: (l) => (ends.add(l), () => ends.delete(l)),
    onError: () => () => {},
    write: (bytes) => {
      for (const line of dec.decode(bytes).split("\n")) {
        if (line === "") continue;
        const m = JSON.parse(line) as { id: number; method: string; params: { turnId: string } };
        requests.push({ id: m.id, method: m.method, turnId: m.params.turnId });
      }
    },
    end: () => {},
  };
  const send = (m: unknown) => [...data].forEach((l) => l(enc.encode(`${JSON.stringify(m)}\n`)));
  const client = connect(channel, { defaultTimeoutMs: 60_000 });
  const protocolErrors: string[] = [];
  client.events.on("protocolError", (e) => protocolErrors.push(String(e.data["problem"])));

  // ---- the model
  const terminals = new Map<string, string>(); // turnId -> terminal kind, in wire order
  let closed = false;
  let cursor = 0;
  /** Unanswered turn/cancel requests: the callers sharing each. */
  const inFlight = new Map<number, { turnId: string; callers: Tracked[] }>();
  const inFlightByTurn = new Map<string, number>();
  /** Waiting for a terminal: per turn, trackers that resolve with it. */
  const waitingTerminal = new Map<string, Array<{ tracked: Tracked; prefix: string }>>();
  const tracked: Tracked[] = [];
  /** The client follows the session once it sent a command in it; it knows the turns it cancelled. */
  let following = false;
  const knownTurns = new Set<string>();
  /** Terminals the host sends for turns the client never started, cancelled or saw: each is reported. */
  const strays: string[] = [];

  const track = (label: string, promise: Promise<unknown>): Tracked => {
    const t: Tracked = { label, settledTimes: 0 };
    tracked.push(t);
    promise.then(
      (v) => {
        t.settledTimes++;
        const value = v as { ack?: string; turnCompleted?: unknown; turnId?: string };
        t.outcome =
          value.ack !== undefined
            ? `${value.ack}:${(value.turnCompleted as { terminal: string }).terminal}`
            : `terminal:${String((value as { terminal: string }).terminal)}`;
      },
      (e: unknown) => {
        t.settledTimes++;
        t.outcome = MspError.is(e) ? (e.kind === "commandRejected" ? `rejected:${String(e.data["reason"])}` : e.kind) : `foreign:${String(e)}`;
      },
    );
    return t;
  };
  const awaitTerminal = (turnId: string, t: Tracked, prefix: string) => {
    const kind = terminals.get(turnId);
    if (kind !== undefined) t.expected = `${prefix}${kind}`;
    else if (closed) t.expected = "connectionClosed";
    else waitingTerminal.set(turnId, [...(waitingTerminal.get(turnId) ?? []), { tracked: t, prefix }]);
  };
  const closeModel = () => {
    if (closed) return;
    closed = true;
    for (const { callers } of inFlight.values()) for (const c of callers) c.expected = "connectionClosed";
    inFlight.clear();
    inFlightByTurn.clear();
    for (const list of waitingTerminal.values()) for (const w of list) w.tracked.expected = "connectionClosed";
    waitingTerminal.clear();
  };
  const answer = (pick: number, how: "ack" | "rejectAlreadyTerminal" | "rejectUnknown") => {
    const open = [...inFlight.keys()];
    if (open.length === 0 || closed) return;
    const id = open[pick % open.length] as number;
    const { turnId, callers } = inFlight.get(id) as { turnId: string; callers: Tracked[] };
    // A host sends already_terminal only after the turn's turn/completed (invariant 4).
    if (how === "rejectAlreadyTerminal" && !terminals.has(turnId)) how = "ack";
    inFlight.delete(id);
    inFlightByTurn.delete(turnId);
    if (how === "ack") {
      send({ jsonrpc: "2.0", id, result: { status: "accepted", commandId: "c", turnId } });
      for (const c of callers) awaitTerminal(turnId, c, "accepted:");
    } else if (how === "rejectAlreadyTerminal") {
      send({
        jsonrpc: "2.0",
        id,
        error: { code: -32001, message: "already terminal", data: { commandId: "c", reason: "already_terminal", turnId, terminal: terminals.get(turnId) } },
      });
      for (const c of callers) awaitTerminal(turnId, c, "already_terminal:");
    } else {
      send({ jsonrpc: "2.0", id, error: { code: -32001, message: "unknown turn", data: { commandId: "c", reason: "unknown_turn", turnId } } });
      for (const c of callers) c.expected = "rejected:unknown_turn";
    }
  };

  for (const o of ops) {
    if (o.t === "wait") {
      const turnId = TURNS[o.turn] as string;
      awaitTerminal(turnId, track(`wait ${turnId}`, client.turns.terminalOf(turnId, { timeoutMs: Infinity })), "terminal:");
    } else if (o.t === "cancel") {
      const turnId = TURNS[o.turn] as string;
      const before = requests.length;
      const t = track(`cancel ${turnId}`, client.cancelTurn({ sessionId: SESSION, turnId }));
      if (!closed) {
        following = true;
        knownTurns.add(turnId);
      }
      if (closed) t.expected = "connectionClosed";
      else {
        const shared = inFlightByTurn.get(turnId);
        if (shared !== undefined) {
          expect(requests.length, "a concurrent cancel of one turn shares the request").toBe(before);
          inFlight.get(shared)?.callers.push(t);
        } else {
          const sent = requests.at(-1);
          expect(requests.length).toBe(before + 1);
          expect(sent).toMatchObject({ method: "turn/cancel", turnId });
          inFlight.set(sent?.id as number, { turnId, callers: [t] });
          inFlightByTurn.set(turnId, sent?.id as number);
        }
      }
    } else if (o.t === "complete") {
      const turnId = TURNS[o.turn] as string;
      if (closed || terminals.has(turnId)) continue; // hosts send one terminal per turn
      terminals.set(turnId, o.terminal);
      if (following && !knownTurns.has(turnId)) strays.push(turnId);
      send({
        jsonrpc: "2.0",
        method: "turn/completed",
        params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, turnId, terminal: o.terminal, reason: o.terminal, durationMs: 1 },
      });
      for (const w of waitingTerminal.get(turnId) ?? []) w.tracked.expected = `${w.prefix}${o.terminal}`;
      waitingTerminal.delete(turnId);
    } else if (o.t === "close") {
      closeModel();
      void client.close();
    } else if (o.t === "end") {
      closeModel();
      [...ends].forEach((l) => l({ reason: "host went away" }));
    } else answer(o.pick, o.t);
    await flush();
  }
  closeModel();
  await client.close();
  await flush();

  for (const t of tracked) {
    expect(t.settledTimes, `${t.label} settles exactly once`).toBe(1);
    expect(t.outcome, t.label).toBe(t.expected);
  }
  expect(protocolErrors).toEqual(
    strays.map((turnId) => `turn/completed for turn ${turnId}, which this connection never started, cancelled or saw in session ${SESSION}`),
  );
  expect(client.pendingCount).toBe(0);
  expect(client.turns.waiterCount).toBe(0);
}

describe("model: waits, cancels, acks, rejections, completions and close", () => {
  it(`every waiter and every cancelTurn settles exactly once with the right outcome (${RUNS} runs)`, async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 24 }), runSchedule), { numRuns: RUNS });
  });

  it("a known schedule: cancel, terminal before the ack, then already_terminal and accepted both resolve", async () => {
    await runSchedule([
      { t: "wait", turn: 0 },
      { t: "cancel", turn: 0 },
      { t: "cancel", turn: 0 },
      { t: "complete", turn: 0, terminal: "cancelled" },
      { t: "rejectAlreadyTerminal", pick: 0 },
      { t: "cancel", turn: 1 },
      { t: "rejectUnknown", pick: 0 },
      { t: "cancel", turn: 2 },
      { t: "wait", turn: 2 },
      { t: "close" },
    ]);
  });
});
