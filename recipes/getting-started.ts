/**
 * getting-started: connect, check the host, create a session, run one turn and read its
 * terminal: the steps of the getting-started guide (whose complete program is
 * docs/examples/getting-started.ts), replayed against the canned host.
 */
import assert from "node:assert/strict";
import type { Recipe } from "./recipe.js";

export const recipe: Recipe = {
  name: "getting-started",
  summary: "Connect, check the host, create a session, run one turn, read its terminal",
  // Recorded from the reference host with the guide's model (packages/host/models/hello.json):
  // `npm run recipes -- --live --only getting-started --record DIR`.
  transcript: "getting-started.jsonl",
  liveModel: "example:hello",
  async run(env) {
    const msp = await env.connect(); // the canned host or the reference host here; spawnReferenceHost() in the guide

    // #region hello
    // host/info rejects (MspError kind "protocol") if the host speaks another major version of MSP.
    const info = await msp.command("host/info", {});

    const { sessionId } = await msp.command("session/create", {});

    // Subscribe before the turn starts; the SDK's recorder is listening already. The reply
    // streams as item/delta appends (a UI appends each `append`); item/completed has it whole.
    const streamed: string[] = [];
    msp.events.on("item/delta", ({ item, append }) => {
      if (item.kind === "message") streamed.push(append);
    });
    const replies: string[] = [];
    msp.events.on("item/completed", ({ item }) => {
      if (item.kind === "message") replies.push(item.text);
    });

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
    const ended = await turn.waitForTerminal({ timeoutMs: 30_000 });
    // ended.terminal is "completed"; replies holds the assistant's text
    await msp.close();
    // #endregion hello

    env.log(`MSP ${info.protocolVersion}; turn ended "${ended.terminal}"; the assistant said ${JSON.stringify(replies[0])}`);
    assert.equal(ended.terminal, "completed");
    assert.equal(ended.turnId, turn.turnId);
    assert.equal(replies.length, 1);
    assert.ok(replies[0]?.startsWith("Hello"));
    assert.ok(streamed.length > 1, "the reply streamed in more than one append");
    assert.equal(streamed.join(""), replies[0], "the appends make the whole text");
  },
};
