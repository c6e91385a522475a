/**
 * stale-turn: cancelling a turnId the host does not know (stale, from another session, or
 * mistyped) is a real error. cancelTurn throws MspError commandRejected / unknown_turn at once;
 * it never waits for a turn/completed that is not coming.
 */
import assert from "node:assert/strict";
import { MspError } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

/** A turnId kept from an earlier session: this host has never heard of it. */
const STALE_TURN_ID = "0198f0a9-2c4e-7a11-9c3d-5e6f70818293";

export const recipe: Recipe = {
  name: "stale-turn",
  summary: "Cancelling an unknown turn throws unknown_turn at once; it does not wait forever",
  // Recorded from the reference host: `npm run recipes -- --live --only stale-turn --record DIR`.
  transcript: "stale-turn.jsonl",
  liveModel: "scripted-small.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const started = Date.now();

    // #region stale
    try {
      await msp.cancelTurn({ sessionId, turnId: STALE_TURN_ID }, { timeoutMs: 10_000 });
      assert.fail("a cancel of an unknown turn must not resolve");
    } catch (error) {
      // Only already_terminal means "already done". unknown_turn is a real mistake: no
      // turn/completed is coming, so cancelTurn throws instead of waiting for one.
      if (!(error instanceof MspError && error.kind === "commandRejected")) throw error;
      assert.equal(error.data["reason"], "unknown_turn");
      assert.equal(error.isAlreadyTerminal(), false);
    }
    // #endregion stale

    const elapsed = Date.now() - started;
    env.log(`turn/cancel of a stale turnId rejected with unknown_turn after ${elapsed} ms`);
    assert.ok(elapsed < 5_000, `the rejection came at once, not after a timeout (${elapsed} ms)`);
    assert.equal(msp.turns.waiterCount, 0, "nothing is left waiting for a terminal");
    await msp.close();
  },
};
