/**
 * getting-started: connect, check the host, create a session, run one turn and read its
 * terminal: the steps of the getting-started guide (whose complete program is
 * docs/examples/getting-started.ts), replayed against the canned host.
 */
import assert from "node:assert/strict";
import { isCompatibleProtocol } from "@muse-code/sdk";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "getting-started",
  summary: "Connect, check the host, create a session, run one turn, read its terminal",
  transcript: "getting-started.jsonl",
  async run(env) {
    const msp = await env.connect(); // the canned host here; spawnReferenceHost() in the guide

    // #region hello
    const info = await msp.command("host/info", {});
    if (!isCompatibleProtocol(info.protocolVersion)) throw new Error(`host speaks MSP ${info.protocolVersion}`);

    const { sessionId } = await msp.command("session/create", {});

    // Subscribe before the turn starts; the SDK's recorder is listening already.
    const replies: string[] = [];
    msp.events.on("item/completed", ({ item }) => {
      if (item.kind === "message") replies.push(item.text);
    });

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
    const ended = await turn.waitForTerminal({ timeoutMs: 30_000 });
    // ended.terminal is "completed"; replies holds the assistant's text
    await msp.close();
    // #endregion hello

    env.log(`turn ended "${ended.terminal}"; the assistant said ${JSON.stringify(replies[0])}`);
    assert.equal(ended.terminal, "completed");
    assert.equal(ended.turnId, turn.turnId);
    assert.equal(replies.length, 1);
    assert.ok(replies[0]?.startsWith("Hello"));
  },
};
