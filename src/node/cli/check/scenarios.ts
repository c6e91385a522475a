/**
 * The scenarios `muse check` drives a host through: the ones the cookbook recipes cover, each
 * on its own connection, each told what to do through the msp-check model's directives. A
 * scenario states what it expects of the host on top of the invariants, which runCheck checks
 * on every scenario's wire.
 */
import { ApprovalDecisions, ApprovalStates, HostRequests, RejectionReasons, TOOL_DENIED_REASON, uuidv7, type ApprovalHandler } from "@muse-code/sdk";
import { checkTranscript } from "@muse-code/sdk/testing";
import type { WireLine, WireTap } from "./checkWire.js";
import { CHECK_MODEL, paramsOf, type DirectiveStep, type ScenarioContext } from "./scenarioContext.js";

/**
 * One conformance scenario.
 *
 * @example
 * ```ts
 * const ping: Scenario = { name: "ping", run: async (ctx) => void (await ctx.command("host/info", {})) };
 * ```
 */
export interface Scenario {
  /** Its name in the table, e.g. "cancel mid-tool". */
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
  /**
   * Checks the scenario's wire against the invariants and returns the problems, each starting
   * `line <n>:`. Default: `checkTranscript` over the whole wire.
   */
  checkWire?(wire: WireTap): string[];
  /** An optional MSP feature the scenario needs: a host whose host/info opts out of it is reported "not supported". */
  needs?: "approvals";
}

const QUICK: DirectiveStep[] = [{ text: "Done.", chunkSize: 8 }];
/** A model stream of about 4 s: 100 chunks, 40 ms apart. */
const LONG_STREAM: DirectiveStep[] = [{ reasoning: "Thinking it over.", text: "long answer ".repeat(17), chunkSize: 2, chunkDelayMs: 40 }];
/** A tool that streams a line every 100 ms for 60 s, then a final message (never reached when cancelled). */
const LONG_TOOL: DirectiveStep[] = [{ text: "Running the tool.", tool: { runMs: 60_000, outputEveryMs: 100 } }, { text: "The tool finished." }];

function reasonOf(error: { data: unknown } | undefined): unknown {
  const data = error?.data;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>)["reason"] : undefined;
}

function rejectionData(error: { data: unknown } | undefined): Record<string, unknown> {
  const data = error?.data;
  return typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {};
}

/**
 * Expect `refusal` (what {@link ScenarioContext.refused} returned) to carry `reason`: "`what` must
 * be refused `reason`, got …". An accepted command is a problem `refused` already recorded.
 */
function expectRefusedWith(
  ctx: ScenarioContext,
  refusal: { error: { message: string; data: unknown } | undefined; commandId: string },
  reason: string,
  what: string,
): void {
  ctx.expect(
    refusal.error === undefined || reasonOf(refusal.error) === reason,
    `${what} must be refused ${reason}, got ${JSON.stringify(reasonOf(refusal.error) ?? refusal.error?.message)}`,
    [ctx.exchange(refusal.commandId).response?.line],
  );
}

const hostInfo: Scenario = {
  name: "host info",
  async run(ctx) {
    const info = await ctx.command("host/info", {});
    for (const field of ["name", "version", "protocolVersion"]) {
      ctx.expect(typeof info[field] === "string" && info[field] !== "", `host/info: the result needs a non-empty ${field}`, [ctx.wire.lines.at(-1)?.line]);
    }
    const models = Array.isArray(info["models"]) ? (info["models"] as unknown[]) : [];
    const ids = models.map((m) => (typeof m === "object" && m !== null ? (m as Record<string, unknown>)["id"] : m));
    ctx.expect(
      ids.includes(CHECK_MODEL),
      `host/info lists no model "${CHECK_MODEL}" (it lists ${JSON.stringify(ids)}): the host is not checkable; see docs/checkable-hosts.md`,
      [ctx.wire.lines.at(-1)?.line],
    );
  },
};

const startAndComplete: Scenario = {
  name: "start and complete",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, [{ reasoning: "The user wants a greeting.", text: "Hello from muse check.", chunkSize: 5, chunkDelayMs: 5 }]);
    ctx.expect(turn.disposition === "started", `turn/start on an idle session: disposition must be "started", got ${JSON.stringify(turn.disposition)}`, [
      turn.ackLine,
    ]);
    const started = await ctx.wire.waitFor((m) => m["method"] === "turn/started" && paramsOf(m)["turnId"] === turn.turnId);
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(terminal.params["terminal"] === "completed", `the turn must complete, it ended ${JSON.stringify(terminal.params["terminal"])}`, [terminal.line]);
    const items = ctx.completedItems(turn.turnId);
    const message = items.find((i) => i.item["kind"] === "message");
    ctx.expect(
      message?.item["text"] === "Hello from muse check." && message.item["status"] === "completed",
      `the turn's message must complete with the directed text "Hello from muse check.", got ${message === undefined ? "no message item/completed" : JSON.stringify(message.item["text"])}`,
      [message?.line, terminal.line],
    );
    const reasoning = items.find((i) => i.item["kind"] === "reasoning");
    ctx.expect(reasoning?.item["text"] === "The user wants a greeting.", "the turn's reasoning item must complete with the directed reasoning", [
      reasoning?.line,
    ]);
    const firstItem = ctx.wire.lines.find(
      (l) => l.dir === "server" && (paramsOf(l.message ?? {})["item"] as Record<string, unknown> | undefined)?.["turnId"] === turn.turnId,
    );
    ctx.expect(firstItem === undefined || started.line < firstItem.line, "turn/started must come before the turn's first item", [
      started.line,
      firstItem?.line,
    ]);
    await ctx.settle();
  },
};

const cancelMidModel: Scenario = {
  name: "cancel mid-model",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, LONG_STREAM);
    const streaming = await ctx.item(turn.turnId, (method, item) => method === "item/updated" && item["kind"] === "message", "the first message item/updated");
    ctx.step("waiting for the answer to turn/cancel");
    const ack = await ctx.client.command("turn/cancel", { sessionId, turnId: turn.turnId }, { timeoutMs: Infinity }).then(
      () => undefined,
      (error: unknown) => error as { message: string; data: unknown },
    );
    const cancelLine = lastClientRequest(ctx.wire.lines, "turn/cancel")?.line;
    ctx.expect(ack === undefined, `turn/cancel of a streaming turn must be accepted, it was refused: ${ack?.message ?? ""}`, [cancelLine, streaming.line]);
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the cancelled turn must end "cancelled", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    for (const { line, item } of ctx.completedItems(turn.turnId)) {
      if (item["kind"] !== "message" || item["status"] === "cancelled") continue;
      ctx.expect(
        item["text"] !== LONG_STREAM[0]?.text,
        `the interrupted message completed with its whole text (status ${JSON.stringify(item["status"])}): the stream was not stopped`,
        [line],
      );
    }
    await ctx.settle();
  },
};

const cancelMidTool: Scenario = {
  name: "cancel mid-tool",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, LONG_TOOL);
    const running = await ctx.item(
      turn.turnId,
      (method, item) => item["kind"] === "toolCall" && method === "item/updated" && typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "",
      "the tool call's first output (item/updated with visibleOutput)",
    );
    const toolItemId = (paramsOf(running.message ?? {})["item"] as Record<string, unknown>)["itemId"];
    ctx.step("waiting for the turn/completed of the turn cancelled while its tool ran");
    const { terminal: outcome } = await ctx.client.cancelTurn({ sessionId, turnId: turn.turnId }, { timeoutMs: Infinity });
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(outcome.terminal === "cancelled", `the turn cancelled while its tool ran must end "cancelled", it ended ${JSON.stringify(outcome.terminal)}`, [
      terminal.line,
    ]);
    const tool = ctx.completedItems(turn.turnId).find((i) => i.item["itemId"] === toolItemId);
    ctx.expect(
      tool?.item["status"] === "cancelled",
      `the running tool call must complete "cancelled", got ${tool === undefined ? "no item/completed" : JSON.stringify(tool.item["status"])}`,
      [running.line, tool?.line, terminal.line],
    );
    const finalMessage = ctx.completedItems(turn.turnId).find((i) => i.item["text"] === "The tool finished.");
    ctx.expect(finalMessage === undefined, "the step after the cancelled tool call must not run", [finalMessage?.line]);
    await ctx.settle();
  },
};

const cancelRace: Scenario = {
  name: "cancel racing completion",
  async run(ctx) {
    const sessionId = await ctx.session();
    // A cancel that surely lost: the turn has already ended.
    const done = await ctx.start(sessionId, QUICK);
    const doneTerminal = await ctx.terminal(done.turnId);
    const late = await ctx.refused("turn/cancel", { sessionId, turnId: done.turnId });
    const lateLine = ctx.exchange(late.commandId).response?.line;
    expectRefusedWith(ctx, late, RejectionReasons.alreadyTerminal, "turn/cancel of an ended turn");
    if (late.error !== undefined) {
      const data = rejectionData(late.error);
      ctx.expect(
        data["terminal"] === undefined || data["terminal"] === doneTerminal.params["terminal"],
        `already_terminal says terminal ${JSON.stringify(data["terminal"])}, the turn ended ${JSON.stringify(doneTerminal.params["terminal"])}`,
        [lateLine, doneTerminal.line],
      );
    }
    // Real races: a cancel sent at five moments of a short turn's life.
    const moments: Array<{ what: string; wait: (turnId: string) => Promise<unknown> }> = [
      { what: "with the turn/start, before its ack", wait: async () => undefined },
      { what: "right after the ack", wait: async () => undefined },
      { what: "at turn/started", wait: (turnId) => ctx.wire.waitFor((m) => m["method"] === "turn/started" && paramsOf(m)["turnId"] === turnId) },
      { what: "at the first item/updated", wait: (turnId) => ctx.item(turnId, (method) => method === "item/updated", "the first item/updated") },
      { what: "at the message's item/completed", wait: (turnId) => ctx.item(turnId, (method) => method === "item/completed", "the first item/completed") },
    ];
    for (const [i, moment] of moments.entries()) {
      const commandId = uuidv7();
      const steps: DirectiveStep[] = [{ text: "A short answer that races the cancel.", chunkSize: 12, chunkDelayMs: 2 }];
      let started: Promise<unknown>;
      if (i === 0) {
        // Pipelined: the cancel follows the turn/start on the wire before the ack comes back (turnId = commandId).
        started = ctx.start(sessionId, steps, commandId);
        started.catch(() => {}); // awaited below, after the cancel: a refusal must not go unhandled meanwhile
      } else {
        await ctx.start(sessionId, steps, commandId);
        started = Promise.resolve();
      }
      await moment.wait(commandId);
      ctx.step(`waiting for the answer to a turn/cancel sent ${moment.what}`);
      const answer = await ctx.client.command("turn/cancel", { sessionId, turnId: commandId }, { timeoutMs: Infinity }).then(
        () => undefined,
        (error: unknown) => error as { message: string; data: unknown },
      );
      await started;
      const terminal = await ctx.terminal(commandId);
      const cancelCommand = lastClientRequest(ctx.wire.lines, "turn/cancel");
      const response =
        cancelCommand === undefined
          ? undefined
          : ctx.wire.lines.find(
              (l) =>
                l.line > cancelCommand.line && l.dir === "server" && l.message?.["id"] === cancelCommand.message?.["id"] && l.message?.["method"] === undefined,
            );
      if (answer === undefined) continue; // accepted: the terminal above is the turn's own (checkTranscript checks there is exactly one)
      const reason = reasonOf(answer);
      if (
        !ctx.expect(
          reason === RejectionReasons.alreadyTerminal,
          `a cancel sent ${moment.what} was refused ${JSON.stringify(reason ?? answer.message)}; only already_terminal may refuse it`,
          [response?.line],
        )
      )
        continue;
      ctx.expect(
        response !== undefined && terminal.line < response.line,
        `a cancel sent ${moment.what} was refused already_terminal before the turn's turn/completed (invariant 4)`,
        [response?.line, terminal.line],
      );
    }
    await ctx.settle();
  },
};

const staleTurn: Scenario = {
  name: "stale turnId",
  async run(ctx) {
    const sessionId = await ctx.session();
    const unknown = await ctx.refused("turn/cancel", { sessionId, turnId: uuidv7() });
    expectRefusedWith(ctx, unknown, RejectionReasons.unknownTurn, "turn/cancel of a turnId the host never issued");
    // A turn of another session is stale here too.
    const other = await ctx.session();
    const turn = await ctx.start(other, QUICK);
    await ctx.terminal(turn.turnId);
    const elsewhere = await ctx.refused("turn/cancel", { sessionId, turnId: turn.turnId });
    expectRefusedWith(ctx, elsewhere, RejectionReasons.unknownTurn, "turn/cancel of another session's turn");
    const noSession = await ctx.refused("turn/cancel", { sessionId: uuidv7(), turnId: turn.turnId });
    expectRefusedWith(ctx, noSession, RejectionReasons.unknownSession, "turn/cancel in a session the host never created");
    await ctx.settle();
  },
};

const keepInbox: Scenario = {
  name: "keepInbox",
  async run(ctx) {
    const sessionId = await ctx.session();
    // keepInbox: true stops the running turn only.
    const running = await ctx.start(sessionId, LONG_STREAM);
    const queued = await ctx.start(sessionId, QUICK);
    ctx.expect(queued.disposition === "queued", `a turn/start while a turn runs must be queued, got ${JSON.stringify(queued.disposition)}`, [queued.ackLine]);
    await ctx.item(running.turnId, (method) => method === "item/updated", "the first item/updated");
    await ctx.command("turn/cancel", { sessionId, turnId: running.turnId, keepInbox: true });
    const stopped = await ctx.terminal(running.turnId);
    ctx.expect(stopped.params["terminal"] === "cancelled", `the running turn must end "cancelled", it ended ${JSON.stringify(stopped.params["terminal"])}`, [
      stopped.line,
    ]);
    const kept = await ctx.terminal(queued.turnId);
    ctx.expect(
      kept.params["terminal"] === "completed",
      `with keepInbox: true the queued turn must survive and complete, it ended ${JSON.stringify(kept.params["terminal"])}`,
      [kept.line],
    );
    // Without keepInbox, each discarded turn gets its own cancelled terminal (invariant 1).
    const second = await ctx.start(sessionId, LONG_STREAM);
    const discarded = [await ctx.start(sessionId, QUICK), await ctx.start(sessionId, QUICK)];
    await ctx.item(second.turnId, (method) => method === "item/updated", "the first item/updated");
    await ctx.command("turn/cancel", { sessionId, turnId: second.turnId });
    const secondEnd = await ctx.terminal(second.turnId);
    ctx.expect(
      secondEnd.params["terminal"] === "cancelled",
      `the running turn must end "cancelled", it ended ${JSON.stringify(secondEnd.params["terminal"])}`,
      [secondEnd.line],
    );
    for (const turn of discarded) {
      const end = await ctx.terminal(turn.turnId);
      ctx.expect(
        end.params["terminal"] === "cancelled",
        `a queued turn discarded by a cancel without keepInbox must end "cancelled", it ended ${JSON.stringify(end.params["terminal"])}`,
        [turn.ackLine, end.line],
      );
    }
    await ctx.settle();
  },
};

const resumeAfterCursor: Scenario = {
  name: "resume after cursor",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, [{ reasoning: "Counting.", text: "one two three four five", chunkSize: 4 }]);
    await ctx.terminal(turn.turnId);
    await ctx.settle(0);
    const original = sessionNotifications(ctx.wire.lines, sessionId, 0);
    if (!ctx.expect(original.length >= 3, `a turn with reasoning and text sent only ${original.length} notifications`)) return;
    const from = original[Math.floor(original.length / 2) - 1] as WireLine;
    const afterCursor = paramsOf(from.message ?? {})["viewCursor"];
    const expected = original.filter((l) => l.line > from.line);
    const commandId = uuidv7();
    const result = await ctx.command("session/resume", { sessionId, afterCursor, commandId });
    const resumeLine = ctx.exchange(commandId).response?.line ?? 0;
    const last = expected.at(-1) as WireLine;
    const lastCursor = paramsOf(last.message ?? {})["viewCursor"];
    ctx.step(`waiting for the replay of session ${sessionId} up to ${String(lastCursor)}`);
    await ctx.wire.waitFor((m) => paramsOf(m)["sessionId"] === sessionId && paramsOf(m)["viewCursor"] === lastCursor, resumeLine);
    await ctx.settle();
    const replayed = sessionNotifications(ctx.wire.lines, sessionId, resumeLine);
    ctx.expect(
      result["replayed"] === expected.length,
      `session/resume after ${String(afterCursor)} must say replayed: ${expected.length}, it said ${JSON.stringify(result["replayed"])}`,
      [resumeLine],
    );
    ctx.expect(
      replayed.length === expected.length,
      `the replay after ${String(afterCursor)} must re-send the ${expected.length} notifications after it, it sent ${replayed.length}`,
      [resumeLine, replayed.at(-1)?.line],
    );
    for (const [i, want] of expected.entries()) {
      const got = replayed[i];
      if (got === undefined) break;
      const same = JSON.stringify(stripVolatile(got.message)) === JSON.stringify(stripVolatile(want.message));
      if (!ctx.expect(same, `replayed notification ${i + 1} differs from the original it re-sends`, [want.line, got.line])) break;
    }
  },
  checkWire(wire) {
    // The replay re-sends what the wire already carried: check the live stream and the replay as two parts.
    const at = wire.lines.find((l) => l.dir === "client" && l.message?.["method"] === "session/resume")?.line ?? Infinity;
    return [
      ...checkTranscript(wire.transcript((l) => l.line < at)).problems,
      ...checkTranscript(
        wire.transcript((l) => l.line >= at),
        { excerpt: true },
      ).problems,
    ];
  },
};

const duplicateCommandId: Scenario = {
  name: "duplicate commandId",
  async run(ctx) {
    const createId = uuidv7();
    const first = await ctx.command("session/create", { model: CHECK_MODEL, commandId: createId });
    const again = await ctx.command("session/create", { model: CHECK_MODEL, commandId: createId });
    ctx.expect(
      JSON.stringify(again) === JSON.stringify(first),
      `a retried session/create (same commandId) must get the same answer: ${JSON.stringify(first)} then ${JSON.stringify(again)}`,
      [ctx.wire.lines.at(-1)?.line],
    );
    const sessionId = String(first["sessionId"]);
    const commandId = uuidv7();
    const params = {
      sessionId,
      input: [{ type: "text", text: JSON.stringify({ steps: [{ text: "Only once.", chunkSize: 4, chunkDelayMs: 20 }] }) }],
      commandId,
    };
    const answers = [await ctx.command("turn/start", params), await ctx.command("turn/start", params)];
    await ctx.terminal(commandId);
    answers.push(await ctx.command("turn/start", params));
    await ctx.settle(200);
    const responses = ctx.wire.lines.filter(
      (l) => l.dir === "server" && typeof l.message?.["result"] === "object" && (l.message["result"] as Record<string, unknown>)["commandId"] === commandId,
    );
    for (const [i, answer] of answers.entries()) {
      if (i === 0) continue;
      ctx.expect(
        JSON.stringify(answer) === JSON.stringify(answers[0]),
        `turn/start retry ${i} (same commandId${i === 2 ? ", after the turn ended" : ""}) must get the same answer: ${JSON.stringify(answers[0])} then ${JSON.stringify(answer)}`,
        responses.map((r) => r.line),
      );
    }
    const starts = ctx.wire.lines.filter((l) => l.dir === "server" && l.message?.["method"] === "turn/started" && paramsOf(l.message)["turnId"] === commandId);
    ctx.expect(
      starts.length === 1,
      `three turn/start with one commandId must start one turn, the wire shows ${starts.length} turn/started`,
      starts.map((l) => l.line),
    );
    const other = await ctx.command("turn/start", { ...params, commandId: uuidv7() });
    ctx.expect(other["turnId"] !== commandId, "a turn/start with a new commandId must start a new turn", [ctx.wire.lines.at(-1)?.line]);
    await ctx.terminal(String(other["turnId"]));
    await ctx.settle();
  },
};

/** One malformed message and the JSON-RPC 2.0 error it must get. */
interface Malformed {
  what: string;
  text: string;
  code: number;
  /** The id the error must carry: null, or the request's (null also allowed when the id could not be read). */
  id: string | null;
}

const MALFORMED: Malformed[] = [
  { what: "a truncated JSON text", text: '{"jsonrpc":"2.0","id":"msp-check-1","method":"host/info"', code: -32700, id: null },
  { what: "a line that is not JSON", text: "this is not JSON", code: -32700, id: null },
  { what: "a request without a method", text: '{"jsonrpc":"2.0","id":"msp-check-2","params":{}}', code: -32600, id: "msp-check-2" },
  { what: 'a request with jsonrpc "1.0"', text: '{"jsonrpc":"1.0","id":"msp-check-3","method":"host/info","params":{}}', code: -32600, id: "msp-check-3" },
  { what: "an empty batch", text: "[]", code: -32600, id: null },
  {
    what: "a method the host does not have",
    text: '{"jsonrpc":"2.0","id":"msp-check-4","method":"msp-check/no-such-method","params":{}}',
    code: -32601,
    id: "msp-check-4",
  },
];

const malformedInput: Scenario = {
  name: "malformed input",
  async run(ctx) {
    for (const bad of MALFORMED) {
      const before = ctx.wire.sendRaw(bad.text);
      ctx.step(`waiting for the JSON-RPC error answering ${bad.what}`);
      const answer = await ctx.wire.waitFor((m) => !("method" in m) && (m["id"] === null || m["id"] === bad.id), before);
      const message = answer.message as Record<string, unknown>;
      const error = message["error"] as Record<string, unknown> | undefined;
      ctx.expect(
        error?.["code"] === bad.code,
        `${bad.what} must be answered with JSON-RPC error ${bad.code}, got ${error === undefined ? "no error" : JSON.stringify(error["code"])}`,
        [before + 1, answer.line],
      );
      ctx.expect(
        message["id"] === null || message["id"] === bad.id,
        `the answer to ${bad.what} must carry id ${JSON.stringify(bad.id)}, got ${JSON.stringify(message["id"])}`,
        [answer.line],
      );
    }
    // The host survives all of it.
    await ctx.settle();
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, QUICK);
    await ctx.terminal(turn.turnId);
  },
  checkWire(wire) {
    // The raw lines (and their answers) are this scenario's own, not JSON-RPC the transcript checker should read.
    const raw = new Set(MALFORMED.map((m) => m.text));
    return checkTranscript(
      wire.transcript((l) => {
        if (l.dir === "client") return !raw.has(l.raw);
        const id = l.message?.["id"];
        return "method" in (l.message ?? {}) || !(id === null || (typeof id === "string" && id.startsWith("msp-check-")));
      }),
    ).problems;
  },
};

/** How long the check's "user" thinks before it answers a question (so a tool run before the answer shows on the wire). @unit milliseconds */
const THINK_MS = 300;

/** A step whose tool call asks first, then a step that runs after it (whatever the answer). */
const ASKING: DirectiveStep[] = [{ text: "Asking first.", tool: { runMs: 300, outputEveryMs: 50, approval: true } }, { text: "The turn went on." }];

/** Sleep `ms` milliseconds. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A handler that leaves the question to the scenario: it settles only when the SDK answers for it. */
function unanswered(_request: unknown, { signal }: { signal: AbortSignal }): Promise<{ decision: "cancelled" }> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ decision: ApprovalDecisions.cancelled }), { once: true }));
}

/**
 * Wait for the host's tool/approve of the turn. A turn that ends first never asked: a problem,
 * and `undefined`.
 */
async function askOf(ctx: ScenarioContext, turnId: string): Promise<(WireLine & { params: Record<string, unknown> }) | undefined> {
  ctx.step(`waiting for the tool/approve of turn ${turnId} (the directive's tool call says approval: true)`);
  const line = await ctx.wire.waitFor(
    (m) => (m["method"] === HostRequests.toolApprove || m["method"] === "turn/completed") && paramsOf(m)["turnId"] === turnId,
  );
  const message = line.message as Record<string, unknown>;
  if (message["method"] === HostRequests.toolApprove) return { ...line, params: paramsOf(message) };
  ctx.fail(
    `turn ${turnId} ended without a tool/approve: its tool call's directive says approval: true, so the host must ask before it runs (a host without approvals says capabilities.approvals: false in host/info; see docs/checkable-hosts.md)`,
    [line.line],
  );
  return undefined;
}

/** A turn of {@link ASKING} that asked: its session, its turnId, the host's tool/approve and the item it asks about. */
interface AskingTurn {
  sessionId: string;
  turnId: string;
  ask: WireLine & { params: Record<string, unknown> };
  itemId: unknown;
}

/**
 * Let `handler` answer this connection's questions, start a turn of {@link ASKING} in a new
 * session and wait for its tool/approve. A turn that ends first never asked: a problem (see
 * {@link askOf}), and `undefined`.
 */
async function askingTurn(ctx: ScenarioContext, handler: ApprovalHandler): Promise<AskingTurn | undefined> {
  ctx.client.onApproval(handler);
  const sessionId = await ctx.session();
  const turn = await ctx.start(sessionId, ASKING);
  const ask = await askOf(ctx, turn.turnId);
  if (ask === undefined) return undefined;
  return { sessionId, turnId: turn.turnId, ask, itemId: ask.params["itemId"] };
}

/** The client's answer to the host request on `ask`'s line. */
function answerTo(lines: readonly WireLine[], ask: WireLine): WireLine | undefined {
  const id = ask.message?.["id"];
  return lines.find((l) => l.line > ask.line && l.dir === "client" && l.message !== undefined && !("method" in l.message) && l.message["id"] === id);
}

/** The server lines about item `itemId` that show it ran: output, or `approval: "approved"`. */
function ranLines(lines: readonly WireLine[], itemId: unknown): WireLine[] {
  return lines.filter((l) => {
    if (l.dir !== "server") return false;
    const item = paramsOf(l.message ?? {})["item"] as Record<string, unknown> | undefined;
    if (item === undefined || item["itemId"] !== itemId) return false;
    return (typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "") || item["approval"] === ApprovalStates.approved;
  });
}

const approveScenario: Scenario = {
  name: "approve",
  needs: "approvals",
  async run(ctx) {
    const asking = await askingTurn(ctx, () => pause(THINK_MS).then(() => ({ decision: ApprovalDecisions.approve })));
    if (asking === undefined) return;
    const { turnId, ask, itemId } = asking;
    const terminal = await ctx.terminal(turnId);
    const answer = answerTo(ctx.wire.lines, ask);
    ctx.expect(terminal.params["terminal"] === "completed", `the approved turn must complete, it ended ${JSON.stringify(terminal.params["terminal"])}`, [
      terminal.line,
    ]);
    const early = ranLines(ctx.wire.lines, itemId).filter((l) => answer === undefined || l.line < answer.line);
    ctx.expect(early.length === 0, 'the tool call ran (output or approval: "approved") before the client\'s approve', [ask.line, early[0]?.line, answer?.line]);
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "completed" &&
        tool.item["approval"] === ApprovalStates.approved &&
        String(tool.item["visibleOutput"]).includes("msp-check tool output"),
      `the approved tool call must run and complete with approval: "approved", got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after !== undefined, "the step after the approved tool call must run", [terminal.line]);
    await ctx.settle();
  },
};

const denyScenario: Scenario = {
  name: "deny",
  needs: "approvals",
  async run(ctx) {
    const asking = await askingTurn(ctx, () => pause(THINK_MS).then(() => ({ decision: ApprovalDecisions.deny, reason: "muse check says no" })));
    if (asking === undefined) return;
    const { turnId, ask, itemId } = asking;
    const terminal = await ctx.terminal(turnId);
    ctx.expect(
      terminal.params["terminal"] === "completed",
      `a denied tool call fails the call, not the turn: the turn must go on and complete, it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "failed" && tool.item["failureReason"] === TOOL_DENIED_REASON && tool.item["approval"] === ApprovalStates.denied,
      `the denied tool call must complete failed, "denied by the user", approval: "denied"; got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, failureReason ${JSON.stringify(tool.item["failureReason"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, 'the denied tool call ran (output or approval: "approved")', [ask.line, ran[0]?.line]);
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after !== undefined, "the step after the denied tool call must run (the turn goes on)", [tool?.line, terminal.line]);
    await ctx.settle();
  },
};

const stopWhileAsking: Scenario = {
  name: "stop while asking",
  needs: "approvals",
  async run(ctx) {
    const asking = await askingTurn(ctx, unanswered);
    if (asking === undefined) return;
    const { sessionId, turnId, ask, itemId } = asking;
    // Stop: the SDK answers the open question cancelled, then sends turn/cancel.
    ctx.step(`waiting for the turn/completed of turn ${turnId}, stopped while asking`);
    const { ack } = await ctx.client.cancelTurn({ sessionId, turnId }, { timeoutMs: Infinity });
    const terminal = await ctx.terminal(turnId);
    const answer = answerTo(ctx.wire.lines, ask);
    const cancel = lastClientRequest(ctx.wire.lines, "turn/cancel");
    const decision = (answer?.message?.["result"] as Record<string, unknown> | undefined)?.["decision"];
    ctx.expect(
      answer !== undefined && decision === ApprovalDecisions.cancelled && cancel !== undefined && answer.line < cancel.line,
      "the Stop must answer the question cancelled before its turn/cancel (the SDK does)",
      [answer?.line, cancel?.line],
    );
    ctx.expect(ack === "accepted", `turn/cancel of a turn waiting for an answer must be accepted, got ${JSON.stringify(ack)}`, [cancel?.line]);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the turn stopped while asking must end "cancelled", it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "cancelled" && tool.item["approval"] === ApprovalStates.cancelled,
      `the tool call asked about must close cancelled, never dispatched (status "cancelled", approval: "cancelled"), got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}, approval ${JSON.stringify(tool.item["approval"])}`}`,
      [ask.line, tool?.line, terminal.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, "the tool call ran although the question was withdrawn", [ran[0]?.line]);
    const after = ctx.completedItems(turnId).find((i) => i.item["text"] === "The turn went on.");
    ctx.expect(after === undefined, "the step after the withdrawn tool call must not run", [after?.line]);
    await ctx.settle();
  },
};

/** The raw approves the late-approve scenario sends past the SDK: not the client's answers the invariants read. */
const lateApproves = new WeakMap<WireTap, Set<string>>();

const lateApprove: Scenario = {
  name: "late approve after a cancel",
  needs: "approvals",
  async run(ctx) {
    const asking = await askingTurn(ctx, unanswered);
    if (asking === undefined) return;
    const { sessionId, turnId, ask, itemId } = asking;
    const approve = JSON.stringify({ jsonrpc: "2.0", id: ask.message?.["id"], result: { decision: ApprovalDecisions.approve } });
    lateApproves.set(ctx.wire, new Set([approve]));
    // The SDK answers cancelled and sends turn/cancel; an approve crosses it, past the SDK.
    ctx.step("waiting for the answer to turn/cancel");
    const cancelling = ctx.client.command("turn/cancel", { sessionId, turnId }, { timeoutMs: Infinity });
    cancelling.catch(() => {}); // awaited below
    for (let i = 0; i < 1_000 && lastClientRequest(ctx.wire.lines, "turn/cancel") === undefined; i++) await new Promise((resolve) => setImmediate(resolve));
    const crossing = ctx.wire.sendRaw(approve) + 1;
    const refused = await cancelling.then(
      () => undefined,
      (error: unknown) => error as { message: string },
    );
    ctx.expect(refused === undefined, `turn/cancel of a turn waiting for an answer must be accepted, it was refused: ${refused?.message ?? ""}`, [
      lastClientRequest(ctx.wire.lines, "turn/cancel")?.line,
    ]);
    const terminal = await ctx.terminal(turnId);
    // And one more after the terminal.
    const afterEnd = ctx.wire.sendRaw(approve) + 1;
    await ctx.settle(THINK_MS);
    ctx.expect(
      terminal.params["terminal"] === "cancelled",
      `the turn cancelled while asking must end "cancelled" whatever answer crosses the cancel, it ended ${JSON.stringify(terminal.params["terminal"])}`,
      [crossing, terminal.line],
    );
    const tool = ctx.completedItems(turnId).find((i) => i.item["itemId"] === itemId);
    ctx.expect(
      tool?.item["status"] === "cancelled",
      `the tool call must close cancelled, never dispatched, got ${tool === undefined ? "no item/completed" : `status ${JSON.stringify(tool.item["status"])}`}`,
      [crossing, tool?.line],
    );
    const ran = ranLines(ctx.wire.lines, itemId);
    ctx.expect(ran.length === 0, "a late approve (after the cancel, or after the terminal) ran the tool call", [crossing, afterEnd, ran[0]?.line]);
  },
  checkWire(wire) {
    // The raw approves are this scenario's own second answers (a client fault the check commits on purpose).
    const raw = lateApproves.get(wire) ?? new Set<string>();
    return checkTranscript(wire.transcript((l) => !(l.dir === "client" && raw.has(l.raw)))).problems;
  },
};

/** The last request with `method` the client sent. */
function lastClientRequest(lines: readonly WireLine[], method: string): WireLine | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as WireLine;
    if (line.dir === "client" && line.message?.["method"] === method) return line;
  }
  return undefined;
}

/** The notifications of `sessionId` on the wire after line `after`. */
function sessionNotifications(lines: readonly WireLine[], sessionId: string, after: number): WireLine[] {
  return lines.filter(
    (l) => l.line > after && l.dir === "server" && typeof l.message?.["method"] === "string" && paramsOf(l.message)["sessionId"] === sessionId,
  );
}

/** A notification without what may differ between sending and re-sending it. */
function stripVolatile(message: Record<string, unknown> | undefined): unknown {
  if (message === undefined) return undefined;
  const { emittedAtMs: _when, ...params } = paramsOf(message);
  return { method: message["method"], params };
}

/**
 * Every scenario, in the order `muse check` runs them. The first, "host info", also tells whether
 * the host is checkable at all.
 *
 * @example
 * ```ts
 * const names = SCENARIOS.map((s) => s.name); // ["host info", "start and complete", …]
 * ```
 */
export const SCENARIOS: readonly Scenario[] = [
  hostInfo,
  startAndComplete,
  cancelMidModel,
  cancelMidTool,
  cancelRace,
  staleTurn,
  keepInbox,
  resumeAfterCursor,
  duplicateCommandId,
  malformedInput,
  approveScenario,
  denyScenario,
  stopWhileAsking,
  lateApprove,
];
