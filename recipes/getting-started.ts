/**
 * getting-started: connect, check the host, create a session, run one turn and read its
 * terminal. The first program the getting-started guide walks through.
 */
import assert from "node:assert/strict";
import { isCompatibleProtocol, type MspClient } from "@muse-code/sdk";
import { spawnHost } from "@muse-code/sdk/node";
import type { Recipe } from "./recipe.js";

// #region spawn
/** In a Node app: start the host as a child process and talk to it over stdio (NDJSON). */
export function connectToLocalHost(): MspClient {
  return spawnHost({ command: "muse-host", args: ["serve", "--stdio", "--script", "model.json"] });
}
// #endregion spawn

export const recipe: Recipe = {
  name: "getting-started",
  summary: "Connect, check the host, create a session, run one turn, read its terminal",
  transcript: "getting-started.jsonl",
  async run(env) {
    const msp = await env.connect(); // the canned host here; connectToLocalHost() in your app

    // #region hello
    const info = await msp.connection.command("host/info", {});
    if (!isCompatibleProtocol(info.protocolVersion)) throw new Error(`host speaks MSP ${info.protocolVersion}`);

    const { sessionId } = await msp.connection.command("session/create", {});

    // Subscribe before the turn starts; the SDK's recorder is listening already.
    const replies: string[] = [];
    msp.events.on("item/completed", ({ item }) => {
      if (item.kind === "message") replies.push(item.text);
    });

    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
    const terminal = await turn.waitForTerminal({ timeoutMs: 30_000 });
    // terminal.terminal is "completed"; replies holds the assistant's text
    await msp.close();
    // #endregion hello

    env.log(`turn ended "${terminal.terminal}"; the assistant said ${JSON.stringify(replies[0])}`);
    assert.equal(terminal.terminal, "completed");
    assert.equal(terminal.turnId, turn.turnId);
    assert.equal(replies.length, 1);
    assert.ok(replies[0]?.startsWith("Hello"));
  },
};
