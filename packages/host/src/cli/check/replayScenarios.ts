/** The scenarios of re-sending: a resume replays what followed its cursor, and a retried command (same commandId) gets the same answer. */
import { uuidv7 } from "@muse-code/sdk";
import { checkTranscript } from "@muse-code/sdk/testing";
import type { WireLine, WireTap } from "./checkWire.js";
import type { Scenario } from "./scenario.js";
import { paramsOf } from "./scenarioContext.js";

/** The wire line of each resume scenario's cursor: the live stream up to it is what the answer's items must equal (invariant C). */
const cursorLines = new WeakMap<WireTap, number>();

/** "resume after cursor": `session/resume {afterCursor}` re-sends exactly the notifications after the cursor, and its `items` fold to the stream up to it (invariant C). */
export const resumeAfterCursor: Scenario = {
  name: "resume after cursor",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, [{ reasoning: "Counting.", text: "one two three four five", chunkSize: 4 }]);
    await ctx.terminal(turn.turnId);
    await ctx.settle(0);
    const original = sessionNotifications(ctx.wire.lines, sessionId, 0);
    if (!ctx.expect(original.length >= 3, `a turn with reasoning and text sent only ${original.length} notifications`)) return;
    // A cursor inside the message's stream: the answer's items then list it part-streamed, the base the replay folds onto (invariant C).
    const deltas = original.filter((l) => l.message?.["method"] === "item/delta");
    const from = (deltas.at(-3) ?? original[Math.floor(original.length / 2) - 1]) as WireLine;
    const afterCursor = paramsOf(from.message ?? {})["viewCursor"];
    cursorLines.set(ctx.wire, from.line);
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
    // And the live stream up to the cursor, then the resume: the answer's items are what a client holding that stream holds (invariant C).
    const cursorLine = cursorLines.get(wire) ?? 0;
    const answered = wire.lines.find((l) => l.line > at && l.dir === "server" && l.message !== undefined && !("method" in l.message))?.line ?? at;
    const held = checkTranscript(
      wire.transcript((l) => l.line <= cursorLine || l.line === at || l.line === answered),
      { excerpt: true },
    ).problems.filter((p) => p.includes("(invariant C)"));
    return [
      ...checkTranscript(wire.transcript((l) => l.line < at)).problems,
      ...checkTranscript(
        wire.transcript((l) => l.line >= at),
        { excerpt: true },
      ).problems,
      ...held,
    ];
  },
};

/** "duplicate commandId": a retried `session/create` or `turn/start` gets the same answer, and the prompt runs once. */
export const duplicateCommandId: Scenario = {
  name: "duplicate commandId",
  async run(ctx) {
    const createId = uuidv7();
    const first = await ctx.command("session/create", { model: ctx.model, commandId: createId });
    const again = await ctx.command("session/create", { model: ctx.model, commandId: createId });
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
    const other = await ctx.command("turn/start", { ...params, commandId: uuidv7() });
    ctx.expect(other["turnId"] !== commandId, "a turn/start with a new commandId must start a new turn", [ctx.wire.lines.at(-1)?.line]);
    await ctx.terminal(String(other["turnId"]));
    await ctx.settle();
    // Every turn the session started, whatever its turnId: a host that answers a retry with the
    // original acceptance but runs the prompt again under another turnId started two.
    const starts = ctx.wire.lines.filter(
      (l) =>
        l.dir === "server" &&
        l.message?.["method"] === "turn/started" &&
        paramsOf(l.message)["sessionId"] === sessionId &&
        paramsOf(l.message)["turnId"] !== other["turnId"],
    );
    ctx.expect(
      starts.length === 1,
      `three turn/start with one commandId must start exactly one turn (a duplicate commandId starts no other), session ${sessionId} shows ${starts.length} turn/started besides the new commandId's: turnIds ${starts.map((l) => String(paramsOf(l.message ?? {})["turnId"])).join(", ")}`,
      starts.map((l) => l.line),
    );
  },
};

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
