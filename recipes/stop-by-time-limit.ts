/**
 * stop-by-time-limit: a policy stops a turn, not the user. The host runs the model under a turn
 * time limit (`turnTimeLimitMs` in its script, or `muse-host serve --turn-time-limit-ms N`); the
 * turn's shell tool runs past it, so the host cancels the turn itself, through the same drain as
 * a Stop. The terminal is `cancelled` with `cause: {kind: "hook", reason: "turn time limit (N ms)"}`
 * and still carries the tokens the turn used. The app shows it with `describeTerminal` and
 * `describeUsage`, so it never reads as the user's Stop.
 */
import assert from "node:assert/strict";
import { describeTerminal, describeUsage } from "@muse-code/sdk/ui";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "stop-by-time-limit",
  summary: "A turn the host's time limit stops: cancelled with cause hook and its usage, read as 'stopped by policy'",
  // Recorded from the reference host: `npm run recipes -- --live --only stop-by-time-limit --record DIR`.
  transcript: "stop-by-time-limit.jsonl",
  liveModel: "stop-by-time-limit.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region wait
    // Nobody presses Stop: the host's policy ends the turn. Its terminal arrives as any other.
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Migrate the database" }] });
    const done = await turn.waitForTerminal({ timeoutMs: 15_000 });
    const usage = done.usage === undefined ? "no usage" : describeUsage(done.usage);
    const line = `${describeTerminal(done)}; ${usage}`;
    // "stopped by policy: turn time limit (1000 ms); tokens 412 in, 36 out, 120 reasoning"
    // #endregion wait

    env.log(line);
    assert.equal(done.terminal, "cancelled");
    assert.deepEqual(done.cause, { kind: "hook", reason: "turn time limit (1000 ms)" });
    assert.equal(describeTerminal(done), "stopped by policy: turn time limit (1000 ms)");
    // A stop still costs tokens: the step that ran counts, the step after it never ran.
    assert.deepEqual(done.usage, { inputTokens: 412, outputTokens: 36, reasoningTokens: 120 });

    // The same drain as a Stop: the running tool was signalled and closed cancelled, its output kept.
    const tool = msp.items.itemsOf(done.turnId).find((item) => item.kind === "toolCall");
    assert.equal(tool?.status, "cancelled");
    assert.match(tool.visibleOutput, /migrating table 1 of 3\n/);
    await msp.close();
  },
};
