/**
 * steer-a-running-turn: add input to a turn while it runs (MSP 2.1 `turn/steer`). The model hears
 * it at its next step boundary: the steering shows as a `message` item with `author: "user"` that
 * completes `completed`, and the reply repeats it. Once the turn has ended, a steer is refused
 * `already_terminal` with the turn's terminal. A default cancel discards steering the model has
 * not heard yet, and says so in one `inbox/cancelled` before the turn's terminal.
 */
import assert from "node:assert/strict";
import { MspError, type InboxCancelledParams, type MessageItem } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";
import { until } from "./until.js";

const say = (text: string) => [{ type: "text" as const, text }];

export const recipe: Recipe = {
  name: "steer-a-running-turn",
  summary: "turn.steer(): the model hears it at its next step; refused after the terminal; a default cancel discards it in one inbox/cancelled",
  // Recorded from the reference host: `npm run recipes -- --live --only steer-a-running-turn --record DIR`.
  transcript: "steer-a-running-turn.jsonl",
  liveModel: "steer-a-running-turn.json",
  timeoutMs: 30_000,
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);
    const splices: InboxCancelledParams[] = [];
    msp.events.on("notification", ({ method, params }) => {
      if (method === "inbox/cancelled") splices.push(params as unknown as InboxCancelledParams);
    });
    const turn = msp.startTurn({ sessionId, input: say("Move the build from npm to pnpm") });
    const { turnId } = await turn.accepted;
    const steering = () => msp.items.itemsOf(turnId).filter((i): i is MessageItem & typeof i => i.kind === "message" && i.author === "user");
    // The model's first step is over (its message completed): it is reading the repo.
    await until(msp, () => msp.items.itemsOf(turnId).some((i) => i.kind === "message" && i.status === "completed"), "the first message");

    // #region steer
    // Steer the running turn: the input joins its inbox, and the model hears it at its next step.
    const { steerId } = await turn.steer(say("keep the lockfile in the repo"), { timeoutMs: 10_000 });
    const done = await turn.waitForTerminal({ timeoutMs: 30_000 });
    // The steering is an item of the turn: a message by the user, completed once the model heard it.
    const heard = msp.items.itemsOf(turnId).find((i) => i.kind === "message" && i.steerId === steerId);
    // #endregion steer

    env.log(`steered: ${JSON.stringify(heard?.kind === "message" ? heard.text : undefined)} (${heard?.status}), turn "${done.terminal}"`);
    assert.equal(done.terminal, "completed");
    assert.equal(steering().length, 1);
    assert.equal(heard?.status, "completed");
    const reply = msp.items
      .itemsOf(turnId)
      .filter((i) => i.kind === "message" && i.author === undefined)
      .at(-1);
    assert.equal(reply?.kind === "message" ? reply.text : undefined, "Noted: keep the lockfile in the repo. Switching the install step to pnpm.");

    // #region late
    // A steer of a turn that has ended is refused, with the turn's terminal: nothing is queued.
    const late = await turn.steer(say("and update the README"), { timeoutMs: 10_000 }).catch((error: unknown) => error);
    const tooLate = MspError.is(late) && late.kind === "commandRejected" && late.data.reason === "already_terminal";
    // late.data.terminal says how the turn ended: "completed"
    // #endregion late
    if (tooLate) env.log(`too late: the turn already ended ${String(late.data.terminal)}`);
    assert.ok(MspError.is(late) && late.kind === "commandRejected");
    assert.equal(late.data.reason, "already_terminal");
    assert.equal(late.data.terminal, "completed");

    // Part 2: steering the model has not heard yet is discarded by a default cancel.
    const tests = msp.startTurn({ sessionId, input: say("Run the test suite") });
    const testsId = (await tests.accepted).turnId;
    await env.midWork(msp, testsId); // its tool is running: the steering waits for the next step
    // #region discard
    const unheard = await tests.steer(say("only the unit tests"), { timeoutMs: 10_000 });
    const { turnCompleted } = await tests.cancel({ timeoutMs: 10_000 });
    // One inbox/cancelled came before the terminal, naming what the cancel threw away.
    const [splice] = splices;
    // #endregion discard
    env.log(`cancelled: "${turnCompleted.terminal}", ${splices.length} inbox/cancelled discarding ${JSON.stringify(splice?.discarded)}`);
    assert.equal(turnCompleted.terminal, "cancelled");
    assert.equal(splices.length, 1);
    assert.deepEqual(splice?.discarded, { steerIds: [unheard.steerId], turnIds: [] });
    const dropped = msp.items.itemsOf(testsId).find((i) => i.kind === "message" && i.steerId === unheard.steerId);
    assert.equal(dropped?.status, "cancelled");
    assert.equal(dropped?.kind === "message" ? dropped.failureReason : undefined, "discarded from inbox");
    await msp.close();
  },
};
