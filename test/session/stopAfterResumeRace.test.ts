/**
 * A Stop is final even when the host asks again in the same read as its resume answer: the
 * re-asked question is dispatched before the session's code after `await session/resume` runs.
 * A scripted host over linked pairs writes the two messages as one chunk; whatever the order, the
 * host must get only `cancelled` answers and exactly one `turn/cancel`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { connect } from "../../src/index.js";
import { LineSplitter } from "../../packages/protocol/src/lineSplitter.js";
import { memoryStorage, openSession, type MspSession } from "../../src/session/index.js";
import { createLinkedPair, type LinkedChannel } from "../../src/testing/index.js";
import { untilSnapshot } from "../helpers/untilSnapshot.js";

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const ITEM = "0198f0aa-2222-7000-8000-0000000000bb";
const encoder = new TextEncoder();

type Message = Record<string, unknown> & { id?: number | string; method?: string; params?: Record<string, unknown> };

/** One connection of the scripted host: what it read, and how it writes (several messages in one chunk when asked). */
interface Connection {
  readonly number: number;
  readonly channel: LinkedChannel;
  readonly read: Message[];
  write(...messages: unknown[]): void;
}

/**
 * A scripted MSP host: one session, one turn that asks one question. On a resume it answers and
 * asks again in the same chunk; a `turn/cancel` is accepted and the turn ends `cancelled` (user).
 * Every answer to a question and every cancel it read is in `answers` and `cancels`.
 */
function scriptedHost() {
  const connections: Connection[] = [];
  const answers: Array<{ connection: number; decision: unknown }> = [];
  const cancels: number[] = [];
  let cursor = 0;
  let turnId: string | undefined;
  let ended = false;
  const note = (method: string, params: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    method,
    params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, emittedAtMs: 1, ...params },
  });
  const ask = (id: string) => ({
    jsonrpc: "2.0",
    id,
    method: "tool/approve",
    params: { sessionId: SESSION, turnId, itemId: ITEM, callId: "call-1", tool: "shell", args: '{"command":"echo published"}' },
  });
  const ok = (message: Message, fields: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id: message.id,
    result: { commandId: message.params?.["commandId"], status: "accepted", ...fields },
  });

  function handle(connection: Connection, message: Message): void {
    connection.read.push(message);
    if (message.method === undefined) {
      const decision = (message["result"] as { decision?: unknown } | undefined)?.decision;
      answers.push({ connection: connection.number, decision });
      return;
    }
    const params = message.params ?? {};
    switch (message.method) {
      case "session/create":
        return connection.write(ok(message, { sessionId: SESSION, model: "default" }));
      case "session/resume":
        // The answer and the question again, in one chunk: nothing of the session between them.
        return connection.write(ok(message, { sessionId: SESSION, replayed: 0 }), ...(ended ? [] : [ask(`ask-${connection.number}`)]));
      case "turn/start":
        turnId = String(params["commandId"]);
        connection.write(ok(message, { turnId, startedNewTurn: connection.number === 1, disposition: "started" }));
        if (connection.number === 1) connection.write(note("turn/started", { turnId }), ask("ask-1"));
        else if (!ended) connection.write(ask(`ask-${connection.number}-again`));
        return;
      case "turn/cancel":
        cancels.push(connection.number);
        if (ended)
          return connection.write({ jsonrpc: "2.0", id: message.id, error: { code: -32001, message: "rejected", data: { reason: "already_terminal" } } });
        ended = true;
        return connection.write(
          ok(message, { turnId: params["turnId"] }),
          note("turn/completed", { turnId: params["turnId"], terminal: "cancelled", reason: "you stopped it", cause: { kind: "user" }, durationMs: 5 }),
        );
      default:
        return connection.write({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found" } });
    }
  }

  return {
    answers,
    cancels,
    connections,
    turnId: () => turnId,
    connect() {
      const [clientSide, hostSide] = createLinkedPair();
      const connection: Connection = {
        number: connections.length + 1,
        channel: hostSide,
        read: [],
        write: (...messages) => hostSide.write(encoder.encode(messages.map((m) => `${JSON.stringify(m)}\n`).join(""))),
      };
      connections.push(connection);
      const lines = new LineSplitter((line) => handle(connection, JSON.parse(line) as Message));
      hostSide.onData((chunk) => lines.push(chunk));
      return Promise.resolve(connect(clientSide));
    },
  };
}

/** What the user does while the connection is down, in the order drawn. */
type OfflineStep = "stop" | "approve" | "deny" | "reload";

async function run(steps: readonly OfflineStep[]): Promise<{ host: ReturnType<typeof scriptedHost>; session: MspSession }> {
  const host = scriptedHost();
  const storage = memoryStorage();
  const options = {
    connect: () => host.connect(),
    storage,
    reconnect: { initialDelayMs: 1, maxDelayMs: 5, maxAttempts: 20 },
    onWarning: () => {},
  };
  let session = await openSession(options);
  const turn = session.startTurn("publish");
  await untilSnapshot(session, (s) => s.turns[0]?.approvals.some((a) => a.live) === true, "the live question", 5_000);
  // The connection drops: the question stays shown, offline.
  (host.connections.at(-1) as Connection).channel.destroy({ reason: "the network dropped" });
  await untilSnapshot(session, (s) => s.connection.state === "reconnecting" && s.turns[0]?.approvals[0]?.live === false, "offline", 5_000);
  let stopped = false;
  for (const step of steps) {
    if (step === "stop") {
      session.turn(turn.turnId)?.stop();
      stopped = true;
    } else if (step === "reload") {
      await session.close();
      // The next page loads while the host is still out of reach: it waits to retry, showing what storage kept.
      session = await openSession({
        ...options,
        reconnect: { initialDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 5 },
        connect: () => Promise.reject(new Error("offline")),
      });
    } else {
      const decision = session.answerApproval(ITEM, step);
      if (stopped) expect(decision).toBe("cancelled");
    }
  }
  if (!stopped) session.turn(turn.turnId)?.stop();
  await session.close();
  // Back online: a new page over the same storage.
  session = await openSession(options);
  await session.turn(turn.turnId)?.settled({ timeoutMs: 5_000 });
  return { host, session };
}

describe("a Stop is final when the host asks again in the resume answer's chunk", () => {
  it("after Stop and Approve offline: the re-asked question is answered cancelled, one turn/cancel, the turn ends cancelled", async () => {
    const { host, session } = await run(["stop", "approve"]);
    expect(host.answers.filter((a) => a.connection > 1).map((a) => a.decision)).toEqual(["cancelled"]);
    expect(host.cancels).toHaveLength(1);
    expect(session.getSnapshot().turns[0]?.terminal?.terminal).toBe("cancelled");
    await session.close();
  });

  it("whatever the user does offline before or after the Stop (approve, deny, reload), the host gets only cancelled answers after the drop and one cancel", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<OfflineStep>("stop", "approve", "deny", "reload"), { maxLength: 6 }), async (steps) => {
        const { host, session } = await run(steps);
        try {
          expect(host.answers.filter((a) => a.connection > 1 && a.decision !== "cancelled")).toEqual([]);
          expect(host.cancels).toHaveLength(1);
          expect(session.getSnapshot().turns[0]?.terminal?.terminal).toBe("cancelled");
        } finally {
          await session.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
