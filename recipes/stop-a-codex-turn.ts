/**
 * stop-a-codex-turn: the Stop button on a turn the Codex agent runs, bridged by
 * `muse serve --agent codex`. Codex alone reports a turn `interrupted` while its shell command
 * still runs; through the bridge the turn's own terminal comes only once the command's
 * processes are gone, so the same client code as for any MSP host tells the truth.
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

/** The shell call the scripted model asks Codex to run: it prints a line a second for a minute. */
export const CODEX_RECIPE_COMMAND = 'for i in $(seq 1 60); do echo "indexing shard $i of 60"; sleep 1; done';

export const recipe: Recipe = {
  name: "stop-a-codex-turn",
  summary: "Stop a Codex turn mid-command: cancelled only once the command's processes are gone",
  // Recorded through the bridge: `npm run recipes -- --live --only stop-a-codex-turn --record DIR`.
  transcript: "stop-a-codex-turn.jsonl",
  liveAgent: { agent: "codex", command: CODEX_RECIPE_COMMAND },
  timeoutMs: 60_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Index the repository" }] });
    const { turnId } = await turn.accepted;
    await env.midWork(msp, turnId);

    // #region stop
    // Stop: the ack only says the bridge will try. The terminal is the outcome, and the bridge
    // sends it after Codex stopped AND the command's process group is gone.
    const { ack, turnCompleted } = await turn.cancel({ timeoutMs: 30_000 });
    // #endregion stop

    assert.equal(ack, "accepted");
    env.log(`turn ${turnId.slice(0, 8)}… ended "${turnCompleted.terminal}": ${turnCompleted.reason}`);
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.deepEqual(turnCompleted.cause, { kind: "user" });

    // The shell call Codex ran is closed too, with what Codex streamed of its output before the
    // stop (codex 0.169.0 never streams a command's first chunk: see docs/bridges.md).
    const shell = msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    assert.equal(shell?.kind, "toolCall");
    assert.equal(shell.tool, "shell");
    assert.equal(shell.status, "cancelled");
    assert.match(shell.visibleOutput, /indexing shard \d+ of 60/);
    await msp.close();
  },
};
