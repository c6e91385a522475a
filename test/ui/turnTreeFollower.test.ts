/**
 * followTurnTree against the real reference host over stdio (a 3-level tree of real shell tools):
 * the tree follows the client's `notification` event, child sessions included, without taking
 * the app's `onNotification`; `treeEnded` is bounded while the tree runs, resolves once the
 * parent's own terminal came (by invariant 7, after every descendant's) and at once when asked
 * later; `dispose()` removes its listeners and rejects pending waits `aborted`; a close rejects
 * them `connectionClosed`.
 */
import { afterEach, expect, it } from "vitest";
import { MspError } from "../../src/errors.js";
import { describeTreeProgress, followTurnTree, TurnTree } from "../../src/ui/index.js";
import { model, startHost, tempDataDir, until } from "../helpers/referenceHost.js";

const input = [{ type: "text" as const, text: "go" }];
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tree() {
  const data = tempDataDir();
  cleanups.push(data.remove);
  const run = startHost(model("subagents-tree.json"), data.dir);
  cleanups.push(() => run.host.close());
  return run.host;
}

it("follows the tree from the client's events; treeEnded is bounded while it runs and resolves with every descendant's terminal once the parent's came", async () => {
  const client = tree();
  let appHeard = 0;
  client.onNotification(() => void appHeard++); // the app's own handler stays in place
  const listenersBefore = client.events.listenerCount("notification");
  const follower = followTurnTree(client);
  expect(client.events.listenerCount("notification")).toBe(listenersBefore + 1);
  const { sessionId } = await client.command("session/create", {});
  const parent = client.startTurn({ sessionId, input });
  const { turnId } = await parent.accepted;
  const running = () => follower.tree.descendantsOf(turnId).filter((t) => t.state === "running").length === 3;
  await until(client, running, "three subagents running", 30_000);
  expect(describeTreeProgress(follower.tree.progressOf(turnId), { stopping: true })).toBe("stopping 3 of 3 subagents…");

  // Bounded: the tree's tools sleep for a minute, so a short wait runs out, typed.
  const short = await follower.treeEnded(turnId, { timeoutMs: 50 }).catch((e: unknown) => e);
  expect(MspError.is(short) && short.kind).toBe("timeout");
  const pending = follower.treeEnded(turnId, { timeoutMs: 60_000 });
  const { turnCompleted: terminal } = await parent.cancel({ timeoutMs: 60_000 });
  expect(terminal.terminal).toBe("cancelled");
  // The cancel waited for the parent's terminal, so the tree below has ended: the wait settles, and a later one at once.
  const ended = await pending;
  expect(ended.turn).toMatchObject({ turnId, state: "ended", terminal: { terminal: "cancelled", cause: { kind: "user" } } });
  expect(ended.descendants.map((d) => d.depth).sort()).toEqual([1, 1, 2]);
  for (const d of ended.descendants) expect(d).toMatchObject({ state: "ended", terminal: { terminal: "cancelled", cause: { kind: "parent" } } });
  expect(await follower.treeEnded(turnId, { timeoutMs: 0 })).toEqual(ended);
  expect(describeTreeProgress(follower.tree.progressOf(turnId))).toBe("all 3 subagents ended");
  // Child sessions' notifications reached the tree (their turns sit in sessions other than the parent's).
  expect(new Set(ended.descendants.map((d) => d.sessionId)).has(sessionId)).toBe(false);
  expect(appHeard).toBeGreaterThan(0);

  // dispose: its listeners go, and a pending wait rejects aborted.
  const orphan = follower.treeEnded("never-heard-of", { timeoutMs: 60_000 });
  follower.dispose();
  expect(client.events.listenerCount("notification")).toBe(listenersBefore);
  const aborted = await orphan.catch((e: unknown) => e);
  expect(MspError.is(aborted) && aborted.kind).toBe("aborted");
}, 90_000);

it("a close rejects pending waits connectionClosed; a given tree is the one fed", async () => {
  const client = tree();
  const given = new TurnTree({ maxTurns: 64 });
  const follower = followTurnTree(client, { tree: given });
  expect(follower.tree).toBe(given);
  const { sessionId } = await client.command("session/create", {});
  const parent = client.startTurn({ sessionId, input });
  const { turnId } = await parent.accepted;
  await until(client, () => given.progressOf(turnId).started === 3, "three subagents linked", 30_000);
  const pending = follower.treeEnded(turnId, { timeoutMs: 60_000 }).catch((e: unknown) => e);
  await client.close();
  const closed = await pending;
  expect(MspError.is(closed) && closed.kind).toBe("connectionClosed");
  const after = await follower.treeEnded(turnId).catch((e: unknown) => e);
  expect(MspError.is(after) && after.kind).toBe("connectionClosed");
  follower.dispose();
}, 90_000);
