/**
 * survive-host-crash: the host dies mid-turn. Every wait settles at once as MspError
 * connectionClosed (nothing hangs). Reconnect, send session/resume with the last viewCursor
 * seen, and the host replays exactly what was missed, including the turn's terminal
 * (failed, "host restarted"). Nothing is lost or duplicated: the viewCursors seen across
 * both connections are strictly increasing with no gaps.
 */
import assert from "node:assert/strict";
import { MspError, TurnReasons, type MspClient } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

/**
 * The turn's commandId, chosen before sending: the app can persist it first, so after a crash
 * it knows which turn to look for (it is the turnId), and a retry is safe (hosts de-duplicate
 * by commandId).
 */
const TURN_COMMAND_ID = "0198f0b9-6072-7a01-8c01-000000000001";

const isConnectionClosed = (error: unknown) => MspError.is(error) && error.kind === "connectionClosed";

export const recipe: Recipe = {
  name: "survive-host-crash",
  summary: "Host dies mid-turn: every wait settles as connectionClosed; resume from the last viewCursor",
  // Recorded from the reference host, a real SIGKILL and restart:
  // `npm run recipes -- --live --only survive-host-crash --record DIR` (two files, one per host).
  transcript: "survive-host-crash.jsonl",
  cannedCrash: true,
  liveModel: "survive-host-crash.json",
  async run(env) {
    const msp = await env.connect();
    const sessionId = await env.session(msp);

    // #region track
    // Remember every viewCursor seen; the last one is where a resume picks up.
    const cursors: string[] = [];
    const track = (client: MspClient) =>
      client.events.on("notification", ({ params }) => {
        const cursor = params?.["viewCursor"];
        if (typeof cursor === "string") cursors.push(cursor);
      });
    track(msp);
    // #endregion track

    const turn = msp.startTurn({ sessionId, commandId: TURN_COMMAND_ID, input: [{ type: "text", text: "Run the migration script" }] });
    const terminal = turn.completed; // an unbounded wait: only the turn's end or a close settles it
    terminal.catch(() => {}); // settled below
    const { turnId } = await turn.accepted;
    const status = msp.turns.terminalOf(turnId, { timeoutMs: 30_000 });
    status.catch(() => {}); // settled below
    await env.midWork(msp, turnId);

    // The host dies, and a health check goes out as it does: it is never answered.
    const crashed = env.crashHost(msp);
    const healthCheck = msp.command("host/info", {});
    healthCheck.catch(() => {}); // settled below
    await crashed;

    // #region settle
    // The host is gone: every wait settles now, as connectionClosed. Nothing hangs, and a
    // command sent after the crash is refused at once.
    const waits = await Promise.allSettled([terminal, status, healthCheck, msp.command("host/info", {})]);
    for (const wait of waits) assert.ok(wait.status === "rejected" && isConnectionClosed(wait.reason), `settled as connectionClosed: ${String(wait.status)}`);
    // #endregion settle
    const seenBeforeCrash = cursors.length;
    const lastCursor = cursors.at(-1);
    assert.ok(lastCursor !== undefined, "the turn had streamed something before the crash");
    env.log(`host died after viewCursor ${lastCursor}; ${waits.length} waits settled as connectionClosed`);

    // #region resume
    const again = await env.restartHost();
    track(again);
    const resumed = await again.command("session/resume", { sessionId, afterCursor: lastCursor });
    // resumed.items: the items in progress at lastCursor, whole (the tool call and its output so
    // far); the replay's deltas and patches apply to them. The replay follows the result on the
    // wire; the turn's terminal is part of it.
    const final = await again.turns.terminalOf(turnId, { timeoutMs: 30_000 });
    // #endregion resume

    env.log(
      `resumed after ${lastCursor}: ${resumed.items?.length ?? 0} item(s) in progress there, ${resumed.replayed} replayed, turn ended "${final.terminal}": ${final.reason}`,
    );
    assert.equal(final.terminal, "failed");
    assert.equal(final.reason, TurnReasons.hostRestarted);
    assert.equal(cursors.length - seenBeforeCrash, resumed.replayed, "every replayed notification arrived");
    // This host's cursors are `v:<sessionId>:<n>` (to an app they are opaque): compare their n.
    const sequences = cursors.map((c) => Number(c.slice(c.lastIndexOf(":") + 1)));
    for (let i = 1; i < sequences.length; i += 1) {
      assert.equal(sequences[i], (sequences[i - 1] as number) + 1, `viewCursors are strictly increasing with no gap: ${cursors.join(", ")}`);
    }
    const inProgress = resumed.items ?? [];
    assert.ok(
      inProgress.some((item) => item.kind === "toolCall" && item.status === "inProgress" && item.visibleOutput !== ""),
      "the resume answer carries the running tool call, whole, with its output so far",
    );
    const tool = again.items.itemsOf(turnId).find((item) => item.kind === "toolCall");
    assert.equal(tool?.status, "failed", "the interrupted tool call was closed by the restarted host");
    assert.ok(tool.kind === "toolCall" && tool.visibleOutput.startsWith("migrating"), "its output so far is kept");
    await again.close();
  },
};
