/**
 * Ten thousand randomized schedules of ask, answer, withdraw, Stop, cancel ack, complete and
 * close, against a real MspClient and StopController over a synchronous in-memory channel. Every
 * question delivered is answered exactly once; a Stop with questions open answers them
 * `cancelled` before its `turn/cancel`; an `approve` goes out only when the app approved an open
 * question; after the terminal the only answer is `cancelled`; the StopController ends only at
 * the turn's own terminal and never goes back once stopping.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { connect, type ByteChannel, type EndDetails, type ToolApproveResult } from "../../src/index.js";
import { StopController, type StopState } from "../../src/ui/index.js";

const RUNS = Number(process.env["APPROVAL_RUNS"] ?? 10_000);
const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const ITEMS = ["i0", "i1", "i2"] as const;
const enc = new TextEncoder();
const dec = new TextDecoder();

type Decision = "approve" | "deny" | "cancelled";
type Op =
  | { t: "ask"; item: number }
  | { t: "handler"; pick: number; decision: Decision | "throw" }
  | { t: "ui"; decision: Decision }
  | { t: "withdraw"; item: number }
  | { t: "stop" }
  | { t: "ackCancel" }
  | { t: "complete"; terminal: "completed" | "cancelled" | "failed" }
  | { t: "close" | "hostEnd" };

const decision = fc.constantFrom<Decision>("approve", "deny", "cancelled");
const item = fc.nat(ITEMS.length - 1);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("ask" as const), item }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("handler" as const), pick: fc.nat(), decision: fc.oneof(decision, fc.constant("throw" as const)) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("ui" as const), decision }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("withdraw" as const), item }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("stop" as const) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("ackCancel" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant("complete" as const), terminal: fc.constantFrom("completed" as const, "cancelled" as const, "failed" as const) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom("close" as const, "hostEnd" as const) }) },
);
const handlerMode = fc.constantFrom("async" as const, "syncApprove" as const, "throws" as const, "none" as const);

/** One line of the wire, both directions in the order they happened. */
type Wire = { dir: "host" | "client"; message: Record<string, unknown>; delivered?: boolean };

/** The running shell call `itemId` of `turnId` as an item/updated carries it, at `revision`, its approval `approval`. */
function toolCallItem(turnId: string, itemId: string, revision: number, approval: "pending" | "cancelled"): Record<string, unknown> {
  return {
    itemId,
    kind: "toolCall",
    turnId,
    revision,
    status: "inProgress",
    recordedAt: "t",
    tool: "shell",
    callId: itemId,
    args: "{}",
    visibleOutput: "",
    truncated: false,
    approval,
  };
}

/** Let every promise reaction the last step queued run (the SDK's chains are a few microtasks deep). */
async function flush(): Promise<void> {
  for (let i = 0; i < 12; i++) await null;
}

async function runSchedule(mode: "async" | "syncApprove" | "throws" | "none", ops: Op[]): Promise<void> {
  const wire: Wire[] = [];
  const data = new Set<(c: Uint8Array) => void>();
  const ends = new Set<(d?: EndDetails) => void>();
  const channel: ByteChannel = {
    onData: (l) => (data.add(l), () => data.delete(l)),
    onEnd: (l) => (ends.add(l), () => ends.delete(l)),
    onError: () => () => {},
    write: (bytes) => {
      for (const line of dec.decode(bytes).split("\n")) if (line !== "") wire.push({ dir: "client", message: JSON.parse(line) as Record<string, unknown> });
    },
    end: () => {},
  };
  let hostOpen = true;
  const send = (message: Record<string, unknown>) => {
    if (!hostOpen) return;
    wire.push({ dir: "host", message, delivered: !client.isClosed });
    for (const l of [...data]) l(enc.encode(`${JSON.stringify(message)}\n`));
  };
  const client = connect(channel, { defaultTimeoutMs: 60_000 });
  let cursor = 0;
  const note = (method: string, params: Record<string, unknown>) =>
    send({ jsonrpc: "2.0", method, params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, ...params } });

  // What the app decided, per request id: the only decisions that may reach the wire besides the SDK's own.
  const appDecisions = new Map<number, Decision[]>();
  const pendingHandlers: Array<{ id: number; resolve: (r: ToolApproveResult) => void; reject: (e: unknown) => void; signal: AbortSignal }> = [];
  const idOf = (request: { itemId: string }, signal: AbortSignal) => ({ id: Number(request.itemId.split("#")[1]), signal });
  const decided = (id: number, d: Decision) => appDecisions.set(id, [...(appDecisions.get(id) ?? []), d]);
  if (mode === "async")
    client.onApproval((request, { signal }) => new Promise((resolve, reject) => pendingHandlers.push({ ...idOf(request, signal), resolve, reject })));
  if (mode === "syncApprove")
    client.onApproval((request) => {
      decided(Number(request.itemId.split("#")[1]), "approve");
      return { decision: "approve" };
    });
  if (mode === "throws")
    client.onApproval(() => {
      throw new Error("handler bug");
    });

  const turn = client.startTurn({ sessionId: SESSION, input: [{ type: "text", text: "go" }] });
  const turnId = turn.commandId;
  const stop = new StopController(turn, { stopTimeoutMs: Infinity });
  const states: StopState[] = [stop.getSnapshot().state];
  const endedAt: number[] = [];
  stop.subscribe((s) => {
    states.push(s.state);
    if (s.state === "ended") endedAt.push(wire.length);
  });
  const start = wire[0]?.message as { id: number };
  send({ jsonrpc: "2.0", id: start.id, result: { commandId: turnId, status: "accepted", turnId, startedNewTurn: true, disposition: "started" } });
  note("turn/started", { turnId });
  await flush();

  let nextRequestId = 1;
  let completedAt = -1;
  let closed = false;
  const answeredCancels = new Set<number>();
  for (const o of ops) {
    const terminalSent = completedAt >= 0;
    if (o.t === "ask" && !terminalSent) {
      const id = nextRequestId++;
      const itemId = `${ITEMS[o.item]}#${id}`;
      note("item/updated", { item: toolCallItem(turnId, itemId, 1, "pending") });
      send({ jsonrpc: "2.0", id, method: "tool/approve", params: { sessionId: SESSION, turnId, itemId, callId: itemId, tool: "shell", args: "{}" } });
    } else if (o.t === "handler" && pendingHandlers.length > 0) {
      const [h] = pendingHandlers.splice(o.pick % pendingHandlers.length, 1);
      if (h === undefined) continue;
      if (o.decision === "throw") h.reject(new Error("handler failed"));
      else {
        if (!h.signal.aborted) decided(h.id, o.decision);
        h.resolve({ decision: o.decision });
      }
    } else if (o.t === "ui") {
      const question = stop.getSnapshot().approval;
      if (question !== undefined) {
        const id = Number(question.request.itemId.split("#")[1]);
        if (stop.answer(o.decision)) decided(id, o.decision);
      }
    } else if (o.t === "withdraw" && !terminalSent) {
      for (const w of wire) {
        const m = w.message;
        if (w.dir === "host" && m["method"] === "tool/approve" && (m["params"] as { itemId: string }).itemId.startsWith(ITEMS[o.item] as string)) {
          const itemId = (m["params"] as { itemId: string }).itemId;
          note("item/updated", { item: toolCallItem(turnId, itemId, 2, "cancelled") });
        }
      }
    } else if (o.t === "stop") void stop.stop();
    else if (o.t === "ackCancel") {
      const cancel = wire.find((w) => w.dir === "client" && w.message["method"] === "turn/cancel" && !answeredCancels.has(w.message["id"] as number));
      if (cancel !== undefined) {
        const id = cancel.message["id"] as number;
        answeredCancels.add(id);
        if (terminalSent)
          send({
            jsonrpc: "2.0",
            id,
            error: { code: -32001, message: "already terminal", data: { commandId: "c", reason: "already_terminal", turnId, terminal: "completed" } },
          });
        else send({ jsonrpc: "2.0", id, result: { commandId: "c", status: "accepted", turnId } });
      }
    } else if (o.t === "complete" && !terminalSent) {
      note("turn/completed", { turnId, terminal: o.terminal, reason: o.terminal, durationMs: 1 });
      completedAt = wire.length - 1;
    } else if (o.t === "close" && !closed) {
      closed = true;
      void client.close();
    } else if (o.t === "hostEnd" && hostOpen) {
      for (const l of [...ends]) l({ reason: "the host went away" });
      hostOpen = false;
      closed = true;
    }
    await flush();
  }
  await client.close();
  await flush();

  // ---- every question delivered is answered exactly once
  const asks = new Map<number, number>(); // request id -> wire index
  const answers = new Map<number, Array<{ at: number; decision: string }>>();
  wire.forEach((w, at) => {
    const m = w.message;
    if (w.dir === "host" && m["method"] === "tool/approve" && w.delivered === true) asks.set(m["id"] as number, at);
    if (w.dir === "client" && !("method" in m)) {
      const list = answers.get(m["id"] as number) ?? [];
      list.push({ at, decision: (m["result"] as { decision: string }).decision });
      answers.set(m["id"] as number, list);
    }
  });
  for (const [id] of asks) check(answers.get(id)?.length === 1, `question ${id} is answered exactly once, not ${answers.get(id)?.length ?? 0} times`);
  check(
    [...answers.keys()].every((id) => asks.has(id)),
    "answers only to questions asked",
  );
  check(client.approvals.size === 0, "no question left open after close");

  for (const [id, list] of answers) {
    const answer = list[0] as { at: number; decision: string };
    const app = appDecisions.get(id) ?? [];
    // An approve or deny on the wire is the app's own decision, or the SDK's deny (no handler, a handler that threw).
    if (answer.decision === "approve") check(app.length === 1 && app[0] === "approve", `approve to ${id} was the app's`);
    if (answer.decision === "deny")
      check(app[0] === "deny" || mode === "none" || mode === "throws" || (mode === "async" && app.length === 0), `deny to ${id} was the app's or the SDK's`);
    if (answer.decision === "cancelled" && app.length > 0) check(app[0] === "cancelled", `the app's ${String(app[0])} to ${id} went out as it was`);
    // After the terminal, the only answer is cancelled.
    if (completedAt >= 0 && answer.at > completedAt) check(answer.decision === "cancelled", `answer to ${id} after the terminal is cancelled`);
  }

  // ---- a Stop answers every question asked before it cancelled, before its turn/cancel
  const firstCancel = wire.findIndex((w) => w.dir === "client" && w.message["method"] === "turn/cancel");
  if (firstCancel >= 0) {
    for (const [id, askedAt] of asks) {
      if (askedAt > firstCancel) continue;
      const answer = answers.get(id)?.[0];
      check(answer !== undefined && answer.at < firstCancel, `question ${id} answered before the turn/cancel`);
    }
  }

  // ---- the StopController ends only at the terminal, and never goes back once stopping
  if (states.includes("ended")) check(completedAt >= 0 && (endedAt[0] as number) > completedAt, "ended only after the terminal");
  const stopping = states.indexOf("stopping");
  if (stopping >= 0)
    check(
      states.slice(stopping).every((s) => s === "stopping" || s === "ended" || s === "failed"),
      `never back from stopping: ${states.join(" ")}`,
    );
  check(states.filter((s) => s === "ended").length <= 1, "ended once");
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

describe("approval schedules (fast-check)", () => {
  it(`${RUNS} random schedules: answered once, cancelled before turn/cancel, no approve after cancelled, ends only at the terminal`, async () => {
    await fc.assert(
      fc.asyncProperty(handlerMode, fc.array(op, { minLength: 1, maxLength: 12 }), async (mode, ops) => runSchedule(mode, ops)),
      { numRuns: RUNS },
    );
  }, 120_000);
});
