/**
 * Policy stops and usage: three turns end `cancelled`, and each reads differently. The host's time
 * limit stops the first (cause `hook`), a named hook the second (cause `hook`), the user's Stop
 * the third (cause `user`). Each terminal carries the tokens the turn used, cancelled or not, and
 * `describeTerminal` and `describeUsage` (`@muse-code/sdk/ui`) put it in words a person reads.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MspClient, TurnCompletedParams } from "@muse-code/sdk";
import { spawnReferenceHost } from "@muse-code/sdk/node";
import { describeTerminal, describeUsage } from "@muse-code/sdk/ui";

// #region scripts
// The reference host's scripted models. `usage` is what a step costs; `turnTimeLimitMs` is the
// model's turn time limit (`muse-host serve --turn-time-limit-ms N` sets one for every model);
// `stopByHook` asks a named hook to stop the turn as that step begins.
const migration = { text: "Running the migration.", usage: { inputTokens: 412, outputTokens: 36, reasoningTokens: 120 } };
const longTool = { tool: "shell", args: { command: "echo 'migrating table 1 of 3'; sleep 30" } };
const limited = { turnTimeLimitMs: 1000, turns: [{ steps: [{ ...migration, toolCalls: [longTool] }, { text: "Done." }] }] };
const hooked = {
  turns: [
    {
      steps: [
        { text: "Checking the budget.", usage: { inputTokens: 7, outputTokens: 3 } },
        { text: "Never said.", stopByHook: "budget hook: over the daily spend" },
      ],
    },
    { steps: [{ ...migration, toolCalls: [longTool] }, { text: "Done." }] },
  ],
};
// #endregion scripts
const dir = mkdtempSync(join(tmpdir(), "my-app-policy-"));
writeFileSync(join(dir, "limited.json"), JSON.stringify(limited));
writeFileSync(join(dir, "hooked.json"), JSON.stringify(hooked));

// #region show
/** A terminal as the app shows it: who or what ended the turn, then what it cost. */
function show(done: TurnCompletedParams): string {
  const usage = done.usage === undefined ? "" : `; ${describeUsage(done.usage)}`;
  return `${describeTerminal(done)}${usage} (cause ${done.cause?.kind ?? "none"})`;
}
// #endregion show

/** Resolves once a tool call of the turn has printed something (it is really running); rejects after `timeoutMs`. */
function toolRunning(msp: MspClient, turnId: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      msp.events.off("item/delta", onDelta);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDelta = ({ item }: { item: { kind: string; turnId: string } }) => {
      if (item.kind === "toolCall" && item.turnId === turnId) done();
    };
    const timer = setTimeout(() => done(new Error(`no tool output from turn ${turnId} within ${timeoutMs} ms`)), timeoutMs);
    msp.events.on("item/delta", onDelta);
  });
}

try {
  await using msp = spawnReferenceHost({ script: join(dir, "hooked.json"), models: { limited: join(dir, "limited.json") } });
  const say = (text: string) => [{ type: "text" as const, text }];

  // #region wait
  // Nobody presses Stop: the time limit ends the turn, and its terminal arrives as any other.
  const limitedSession = await msp.command("session/create", { model: "limited" });
  const timedOut = await msp.startTurn({ sessionId: limitedSession.sessionId, input: say("Migrate the database") }).completed;
  console.log(show(timedOut));
  // #endregion wait

  const { sessionId } = await msp.command("session/create", {});
  const hookStopped = await msp.startTurn({ sessionId, input: say("Check the budget, then plan") }).completed;
  console.log(show(hookStopped));

  // The user's Stop, for comparison: the same cancelled terminal, another cause.
  const turn = msp.startTurn({ sessionId, input: say("Migrate the database") });
  await toolRunning(msp, (await turn.accepted).turnId);
  const { turnCompleted: stopped } = await turn.cancel({ timeoutMs: 10_000 });
  console.log(show(stopped));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
