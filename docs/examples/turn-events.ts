/**
 * A turn's life as your app sees it: items stream in (started, their text appended delta by
 * delta, completed), then the turn's one terminal. Any number of waiters get that same terminal,
 * and the client keeps every item, whole, at its latest revision.
 */
import { exampleModelPath, spawnReferenceHost } from "@muse-code/sdk/node";

await using msp = spawnReferenceHost({ script: exampleModelPath("hello") });
const { sessionId } = await msp.command("session/create", {});

// #region events
let text = ""; // what a UI shows of the message as it streams
let deltas = 0;
msp.events.on("turn/started", () => console.log("turn/started"));
msp.events.on("item/started", ({ item }) => console.log(`item/started    ${item.kind}`));
msp.events.on("item/delta", ({ item, append }) => {
  // Append the new piece to what you show; `item` is the whole item, should you need it.
  if (item.kind === "message") text += append;
  deltas += 1;
});
msp.events.on("item/completed", ({ item }) => console.log(`item/completed  ${item.kind}, ${item.status}`));
msp.events.on("turn/completed", ({ terminal, reason }) => console.log(`turn/completed  ${terminal} (${reason})`));
// #endregion events

const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "Say hello" }] });
const { turnId } = await turn.accepted;

// #region waiters
// A status indicator and a Stop handler wait on the same turn from different parts of the page.
const [shown, handled] = await Promise.all([msp.turns.terminalOf(turnId, { timeoutMs: 30_000 }), turn.waitForTerminal({ timeoutMs: 30_000 })]);
console.log(`two waiters, one terminal: ${shown === handled}`);
// #endregion waiters

// #region read
console.log(`recorded: ${msp.turns.get(turnId)?.terminal}; ${deltas} item/delta appends`);
for (const item of msp.items.itemsOf(turnId)) {
  console.log(`  ${item.kind} at revision ${item.revision}: ${item.status}, the appends make its text: ${item.kind === "message" && item.text === text}`);
}
// #endregion read
