/**
 * Steering on the real reference host (stdio), the bounds and the durability: the caps per turn
 * (`inbox_full`), a retried `turn/steer` (same commandId) answered again without a second item,
 * an empty input refused, a restart that closes a pending steering item `failed: host restarted`,
 * carried-over steering that waits in the log across a restart for the session's next turn, and a
 * policy stop (a time limit) that carries steering over as keepInbox does.
 */
import { afterEach, expect, it } from "vitest";
import { MspError, type MessageItem } from "../../src/index.js";
import { checkTranscriptParts } from "../../src/testing/index.js";
import { crashHost, killGroups, model, startHost, tempDataDir, until, type HostRun } from "../helpers/referenceHost.js";

const input = (text: string) => [{ type: "text" as const, text }];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function run(data: string, modelName = "steer-tool.json"): HostRun {
  const r = startHost(model(modelName), data);
  cleanups.push(() => r.host.close().then(() => undefined));
  return r;
}

function dataDir(): string {
  const temp = tempDataDir();
  cleanups.push(temp.remove);
  return temp.dir;
}

async function toolRunning(r: HostRun, turnId: string): Promise<void> {
  await until(r.host, () => r.host.items.itemsOf(turnId).some((i) => i.kind === "toolCall" && /started/.test(i.visibleOutput)), "the tool's output");
}

const steeringOf = (r: HostRun, turnId: string) =>
  r.host.items.itemsOf(turnId).filter((i): i is MessageItem & { status: string } => i.kind === "message" && i.steerId !== undefined);

async function refusal(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(MspError.is(error) && (error.kind === "commandRejected" || error.kind === "rpcError"))) throw new Error(`expected a refusal, got ${String(error)}`);
  return error.kind === "commandRejected" ? { kind: error.kind, ...error.data } : { kind: error.kind, ...error.data };
}

it("caps a turn's steering (16 inputs, 65 536 bytes: inbox_full), answers a retried commandId again without a second item, refuses an empty input", async () => {
  const r = run(dataDir());
  const { sessionId } = await r.host.command("session/create", {});
  const turn = r.host.startTurn({ sessionId, input: input("go") });
  const { turnId } = await turn.accepted;
  await toolRunning(r, turnId);

  const commandId = "0198f0b9-6072-7a01-8c01-00000000ab01";
  const first = await r.host.command("turn/steer", { sessionId, turnId, input: input("steer 1"), commandId });
  const again = await r.host.command("turn/steer", { sessionId, turnId, input: input("steer 1"), commandId });
  expect(again).toEqual(first);
  expect(first.steerId).toBe(commandId);
  for (let i = 2; i <= 16; i++) await r.host.command("turn/steer", { sessionId, turnId, input: input(`steer ${i}`) });
  const full = await refusal(r.host.command("turn/steer", { sessionId, turnId, input: input("steer 17") }));
  expect(full).toMatchObject({ kind: "commandRejected", reason: "inbox_full", turnId, maxSteers: 16, maxSteerBytes: 65_536 });
  const empty = await refusal(r.host.command("turn/steer", { sessionId, turnId, input: [] }));
  expect(empty).toMatchObject({ kind: "rpcError", code: -32602 });
  // Only empty text is empty too.
  const blank = await refusal(r.host.command("turn/steer", { sessionId, turnId, input: input("") }));
  expect(blank).toMatchObject({ kind: "rpcError", code: -32602 });
  await until(r.host, () => steeringOf(r, turnId).length === 16, "16 steering items");
  expect(steeringOf(r, turnId).filter((i) => i.steerId === commandId)).toHaveLength(1);
  await turn.cancel({ timeoutMs: 10_000 });

  // The byte cap, on a new session's first turn: one input past 65 536 bytes of UTF-8 (2 bytes a character).
  const other = (await r.host.command("session/create", {})).sessionId;
  const second = r.host.startTurn({ sessionId: other, input: input("go") });
  const secondId = (await second.accepted).turnId;
  await toolRunning(r, secondId);
  const big = await refusal(r.host.command("turn/steer", { sessionId: other, turnId: secondId, input: input("é".repeat(32_769)) }));
  expect(big).toMatchObject({ reason: "inbox_full", turnId: secondId });
  await r.host.command("turn/steer", { sessionId: other, turnId: secondId, input: input("é".repeat(32_768)) });
  await second.cancel({ timeoutMs: 10_000 });
  await r.host.close();
  expect(checkTranscriptParts([r.wire]).flatMap((part) => part.problems)).toEqual([]);
}, 60_000);

it("a crash with steering pending: the restarted host closes its item failed, host restarted; carried-over steering waits in the log for the next turn", async () => {
  const data = dataDir();
  const r = run(data);
  const { sessionId } = await r.host.command("session/create", {});
  // Carried over (keepInbox, nothing queued): it waits for the session's next turn.
  const first = r.host.startTurn({ sessionId, input: input("go") });
  const firstId = (await first.accepted).turnId;
  await toolRunning(r, firstId);
  const carried = await first.steer(input("use pnpm"), { timeoutMs: 10_000 });
  await first.cancel({ keepInbox: true, timeoutMs: 10_000 });
  await r.host.close();

  // A new host on the same data: the session's next turn begins with the carried steering, read back from the log.
  const r2 = run(data);
  await r2.host.command("session/resume", { sessionId });
  const second = r2.host.startTurn({ sessionId, input: input("next") });
  const secondId = (await second.accepted).turnId;
  expect((await second.completed).terminal).toBe("completed");
  expect(steeringOf(r2, secondId)[0]).toMatchObject({ steerId: carried.steerId, status: "completed", text: "use pnpm" });
  expect(r2.host.items.itemsOf(secondId).at(-1)).toMatchObject({ kind: "message", text: "Next turn, starting with: use pnpm." });

  // Then a turn that is steered and crashes with the steering pending.
  const third = r2.host.startTurn({ sessionId, input: input("go") });
  const thirdId = (await third.accepted).turnId;
  await toolRunning(r2, thirdId);
  const pending = await third.steer(input("only the unit tests"), { timeoutMs: 10_000 });
  await until(r2.host, () => steeringOf(r2, thirdId).length === 1, "the steering item");
  const orphans = crashHost(r2.host.pid);
  cleanups.push(() => killGroups(orphans));

  const r3 = run(data);
  const resumed = await r3.host.command("session/resume", { sessionId });
  expect(resumed.replayed).toBeGreaterThan(0);
  const end = await r3.host.turns.terminalOf(thirdId, { timeoutMs: 10_000 });
  expect(end).toMatchObject({ terminal: "failed", reason: "host restarted" });
  expect(steeringOf(r3, thirdId).at(-1)).toMatchObject({
    steerId: pending.steerId,
    status: "failed",
    failureReason: "host restarted",
    text: "only the unit tests",
  });
  expect(steeringOf(r3, thirdId).at(-1)?.interrupted).toBeUndefined();
  await r3.host.close();
}, 60_000);

it("a policy stop keeps the inbox: the steering is carried over (no splice) and the queued turn begins with it", async () => {
  const r = run(dataDir(), "steer-time-limited.json");
  const { sessionId } = await r.host.command("session/create", {});
  const first = r.host.startTurn({ sessionId, input: input("go") });
  const next = r.host.startTurn({ sessionId, input: input("next") });
  const firstId = (await first.accepted).turnId;
  const nextId = (await next.accepted).turnId;
  await toolRunning(r, firstId);
  const { steerId } = await first.steer(input("use pnpm"), { timeoutMs: 10_000 });
  const stopped = await first.completed;
  expect(stopped).toMatchObject({ terminal: "cancelled", cause: { kind: "hook", reason: "turn time limit (4000 ms)" } });
  expect((await next.completed).terminal).toBe("completed");
  expect(steeringOf(r, firstId)).toEqual([expect.objectContaining({ steerId, status: "cancelled", carriedOver: true })]);
  expect(steeringOf(r, nextId)).toEqual([expect.objectContaining({ steerId, status: "completed" })]);
  expect(r.host.items.itemsOf(nextId).at(-1)).toMatchObject({ kind: "message", text: "Next turn, starting with: use pnpm." });
  await r.host.close();
  expect(r.wire.some((line) => line.includes("inbox/cancelled"))).toBe(false);
  expect(checkTranscriptParts([r.wire]).flatMap((part) => part.problems)).toEqual([]);
}, 60_000);
