/**
 * stop-an-acp-turn: the Stop button on a turn an ACP agent runs, bridged by
 * `muse serve --agent acp -- CMD ARGS…` (here codex-acp, Codex behind the Agent Client Protocol).
 * Alone, the agent answers `session/cancel` with `cancelled` while its shell command still runs,
 * and leaves the tool call `in_progress`; through the bridge the turn's own terminal comes only
 * once the command's processes are gone and its tool call is closed, so the same client code as
 * for any MSP host tells the truth.
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

/** The shell call the scripted model asks the agent to run: it prints a line a second for a minute. */
export const ACP_RECIPE_COMMAND = 'for i in $(seq 1 60); do echo "compacting segment $i of 60"; sleep 1; done';

export const recipe: Recipe = {
  name: "stop-an-acp-turn",
  summary: "Stop an ACP agent's turn mid-command: cancelled only once the command's processes are gone",
  // Recorded through the bridge: `npm run recipes -- --live --only stop-an-acp-turn --record DIR`.
  transcript: "stop-an-acp-turn.jsonl",
  liveAgent: { agent: "acp", command: ACP_RECIPE_COMMAND },
  timeoutMs: 60_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Compact the store" }] });
    const { turnId } = await turn.accepted;
    await env.midWork(msp, turnId);

    // #region stop
    // Stop: the ack only says the bridge will try. The terminal is the outcome, and the bridge
    // sends it after the agent answered its session/prompt AND the command's processes are gone.
    const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 30_000 });
    // #endregion stop

    assert.equal(ack, "accepted");
    env.log(`turn ${turnId.slice(0, 8)}… ended "${turnCompleted.terminal}": ${turnCompleted.reason}`);
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.deepEqual(turnCompleted.cause, { kind: "user" });

    // The agent's tool call, which ACP leaves open on a cancel, is closed by the bridge, with the
    // output it streamed before the stop (codex-acp, being Codex, never streams a command's first
    // chunk: see docs/bridges.md).
    const shell = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    assert.equal(shell?.kind, "toolCall");
    assert.equal(shell.tool, "shell");
    assert.equal(shell.status, "cancelled");
    assert.match(shell.visibleOutput, /compacting segment \d+ of 60/);
    await msp.close();
  },
};
