/** End to end: the real `muse-host serve --stdio` child process, spoken to in raw NDJSON JSON-RPC. */
import { describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";
import { fixture, HostProcess, useHostProcesses, type WireMessage } from "./hostProcess.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { grownAfter, grownTo } from "../helpers/foldedWire.js";

const { start, tempDir } = useHostProcesses("muse-host-test-");

async function createSession(host: HostProcess): Promise<string> {
  const created = await host.request("session/create", {});
  expect(created.result?.["status"]).toBe("accepted");
  return created.result?.["sessionId"] as string;
}

function toolItem(host: HostProcess, turnId: string, method: string): Record<string, unknown> | undefined {
  const found = host.notifications(method, turnId).find((p) => (p["item"] as { kind: string }).kind === "toolCall");
  return found?.["item"] as Record<string, unknown> | undefined;
}

const isCompletedOf = (turnId: string) => (m: WireMessage) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;

describe("muse-host serve --stdio", () => {
  it("answers host/info, -32700 on malformed JSON (and keeps serving), -32601, -32602", async () => {
    const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
    host.writeLine("{not json");
    const parseError = await host.waitFor((m) => m.error?.code === -32700);
    expect(parseError.id).toBeNull();
    const info = await host.request("host/info", { commandId: "info-1" });
    expect(info.result).toMatchObject({ commandId: "info-1", status: "accepted", name: "muse-host", protocolVersion: "2.1", models: [{ id: "default" }] });
    expect(info.result?.["fingerprint"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await host.request("nope/nope", {})).error?.code).toBe(-32601);
    expect((await host.request("turn/start", { sessionId: 42, input: [] })).error?.code).toBe(-32602);
    expect((await host.request("turn/start", { sessionId: "no-such", input: [] })).error).toMatchObject({ code: -32001, data: { reason: "unknown_session" } });
    expect((await host.request("session/create", { model: "gpt-x" })).error).toMatchObject({ code: -32001, data: { reason: "unknown_model" } });
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("streams a turn: reasoning then text, items closed, turn completed; idempotent turn/start", async () => {
    const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const params = { sessionId, commandId: "0198f0aa-0000-7000-8000-000000000001", input: [{ type: "text", text: "hi" }] };
    const ack = await host.request("turn/start", params);
    expect(ack.result).toEqual({ commandId: params.commandId, status: "accepted", turnId: params.commandId, startedNewTurn: true, disposition: "started" });
    const again = await host.request("turn/start", params);
    expect(again.result).toEqual(ack.result);
    const done = await host.waitFor(isCompletedOf(params.commandId));
    expect(done.params).toMatchObject({ terminal: "completed", reason: "completed" });
    const completed = host.notifications("item/completed", params.commandId).map((p) => p["item"] as Record<string, unknown>);
    expect(completed.map((i) => [i["kind"], i["status"], i["text"]])).toEqual([
      ["reasoning", "completed", "The user said hi."],
      ["message", "completed", "Hello there, friend!"],
    ]);
    expect(host.notifications("turn/started")).toHaveLength(1); // the repeated turn/start did not re-execute
    expect(checkTranscript(host.transcript).problems).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("cancels a running shell tool: ack, cancelled item with output so far, terminal, no surviving processes", async () => {
    const host = start(["--script", fixture("shell-sleep.json"), "--data", tempDir(), "--kill-grace-ms", "2000"]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [{ type: "text", text: "go" }] })).result?.["turnId"] as string;
    const updated = await host.waitFor(grownTo(host.wire, /grandchild \d+/), 5000, "shell output");
    const output = grownAfter(host.wire, updated);
    const shellPid = Number(/started (\d+)/.exec(output)?.[1]);
    const grandchildPid = Number(/grandchild (\d+)/.exec(output)?.[1]);
    expect(processGone(shellPid)).toBe(false);
    expect(processGone(grandchildPid)).toBe(false);

    const cancelSent = host.wire.length;
    const ack = await host.request("turn/cancel", { sessionId, turnId, commandId: "cancel-1" });
    expect(ack.result).toEqual({ commandId: "cancel-1", status: "accepted", turnId });
    const terminal = await host.waitFor(isCompletedOf(turnId), 5000, "turn/completed");
    const item = toolItem(host, turnId, "item/completed");
    expect(item).toMatchObject({ status: "cancelled", failureReason: "turn cancelled", tool: "shell", truncated: false });
    expect(String(item?.["visibleOutput"])).toMatch(/^started \d+\ngrandchild \d+\n$/);
    expect(terminal.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "user" } });
    // The item/completed came after the cancel and before the terminal.
    const itemAt = host.indexOf((m) => m.method === "item/completed" && (m.params?.["item"] as { kind: string }).kind === "toolCall");
    expect(itemAt).toBeGreaterThan(cancelSent);
    expect(itemAt).toBeLessThan(host.indexOf(isCompletedOf(turnId)));
    // The second step ("Done.") never ran.
    expect(host.notifications("item/completed", turnId).map((p) => (p["item"] as { text?: string }).text)).not.toContain("Done.");
    expect(await waitGone([shellPid, grandchildPid], 2000)).toBe(true);
    expect(() => process.kill(shellPid, 0)).toThrow(expect.objectContaining({ code: "ESRCH" })); // reaped by the host
    expect(checkTranscript(host.transcript).problems).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("rejects a cancel after completion with already_terminal, after the terminal on the wire", async () => {
    const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    await host.waitFor(isCompletedOf(turnId));
    const rejected = await host.request("turn/cancel", { sessionId, turnId, commandId: "late-cancel" });
    expect(rejected.error).toMatchObject({ code: -32001, data: { commandId: "late-cancel", reason: "already_terminal", turnId, terminal: "completed" } });
    expect(host.indexOf((m) => m === rejected)).toBeGreaterThan(host.indexOf(isCompletedOf(turnId)));
    const unknown = await host.request("turn/cancel", { sessionId, turnId: "0198f0aa-dead-7000-8000-000000000000" });
    expect(unknown.error).toMatchObject({ code: -32001, data: { reason: "unknown_turn" } });
    expect(checkTranscript(host.transcript).problems).toEqual([]);
  });

  it("a default cancel discards queued turns, each with its own cancelled terminal", async () => {
    const host = start(["--script", fixture("shell-sleep.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const first = (await host.request("turn/start", { sessionId, input: [] })).result!;
    const second = (await host.request("turn/start", { sessionId, input: [] })).result!;
    const third = (await host.request("turn/start", { sessionId, input: [] })).result!;
    expect([first["disposition"], second["disposition"], third["disposition"]]).toEqual(["started", "queued", "queued"]);
    await host.waitFor((m) => m.method === "item/started" && (m.params?.["item"] as { kind: string }).kind === "toolCall");
    await host.request("turn/cancel", { sessionId, turnId: first["turnId"] });
    await host.waitFor(isCompletedOf(first["turnId"] as string));
    for (const queued of [second, third]) {
      const t = host.wire.find(isCompletedOf(queued["turnId"] as string));
      expect(t?.params).toMatchObject({ terminal: "cancelled", reason: "discarded from inbox", cause: { kind: "user" } });
    }
    expect(host.notifications("turn/started")).toHaveLength(1);
    expect(checkTranscript(host.transcript).problems).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("keepInbox: the running turn is cancelled, queued turns survive and run next", async () => {
    const host = start(["--script", fixture("shell-sleep.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const first = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    const second = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    await host.waitFor((m) => m.method === "item/started" && (m.params?.["item"] as { kind: string }).kind === "toolCall");
    await host.request("turn/cancel", { sessionId, turnId: first, keepInbox: true });
    const firstDone = await host.waitFor(isCompletedOf(first));
    expect(firstDone.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution" });
    const secondStarted = await host.waitFor((m) => m.method === "turn/started" && m.params?.["turnId"] === second);
    expect(host.indexOf((m) => m === secondStarted)).toBeGreaterThan(host.indexOf(isCompletedOf(first)));
    await host.waitFor(
      (m) =>
        m.method === "item/started" &&
        (m.params?.["item"] as { kind: string; turnId: string }).turnId === second &&
        (m.params?.["item"] as { kind: string }).kind === "toolCall",
    );
    // stdin EOF shuts down: the second turn is cancelled with cause "disposed" and drained.
    expect(await host.stop()).toEqual({ code: 0, signal: null });
    const secondDone = host.wire.find(isCompletedOf(second));
    expect(secondDone?.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "disposed" } });
    expect(checkTranscript(host.transcript).problems).toEqual([]);
  });

  it("SIGTERM shuts down cleanly: turns cancelled with cause disposed, exit 0", async () => {
    const host = start(["--script", fixture("shell-sleep.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    await host.waitFor(grownTo(host.wire, /grandchild/));
    host.child.kill("SIGTERM");
    expect(await host.exited).toEqual({ code: 0, signal: null });
    expect(host.wire.find(isCompletedOf(turnId))?.params).toMatchObject({ terminal: "cancelled", cause: { kind: "disposed" } });
  });

  it("after SIGKILL mid-turn, a restarted host on the same --data replays the turn as failed: host restarted", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("shell-sleep.json"), "--data", data]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result!["turnId"] as string;
    const updated = await host.waitFor(grownTo(host.wire, /grandchild \d+/));
    const output = grownAfter(host.wire, updated);
    const orphanPids = [Number(/started (\d+)/.exec(output)?.[1]), Number(/grandchild (\d+)/.exec(output)?.[1])];
    const lastCursor = String(host.wire.filter((m) => m.method !== undefined).at(-1)?.params?.["viewCursor"]);
    await host.kill();
    for (const pid of orphanPids) if (!processGone(pid)) process.kill(-orphanPids[0]!, "SIGKILL"); // a SIGKILLed host cannot clean up

    const restarted = start(["--script", fixture("shell-sleep.json"), "--data", data]);
    const resumed = await restarted.request("session/resume", { sessionId, afterCursor: lastCursor });
    expect(resumed.result).toMatchObject({ status: "accepted", sessionId });
    const terminal = await restarted.waitFor(isCompletedOf(turnId));
    expect(terminal.params).toMatchObject({ terminal: "failed", reason: "host restarted" });
    const replay = restarted.wire.filter((m) => m.method !== undefined);
    expect(resumed.result?.["replayed"]).toBe(replay.length);
    expect(replay.map((m) => m.method)).toEqual(["item/completed", "turn/completed"]);
    expect(replay[0]?.params?.["item"]).toMatchObject({ kind: "toolCall", status: "failed", failureReason: "host restarted" });
    const cursors = replay.map((m) => Number(String(m.params?.["viewCursor"]).split(":").pop()));
    expect(cursors[0]).toBe(Number(lastCursor.split(":").pop()) + 1);
    // A full resume replays everything from the start, in order; the new turn continues the cursors.
    const full = await restarted.request("session/resume", { sessionId });
    expect(full.result?.["replayed"]).toBe(cursors.at(-1));
    const next = (await restarted.request("turn/cancel", { sessionId, turnId })).error;
    expect(next).toMatchObject({ code: -32001, data: { reason: "already_terminal", terminal: "failed" } });
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  });
});

describe("HOST_VERSION", () => {
  it("matches the package version", async () => {
    const { HOST_VERSION } = await import("../../packages/host/src/index.js");
    const { readFileSync } = await import("node:fs");
    expect(HOST_VERSION).toBe((JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version);
  });
});
