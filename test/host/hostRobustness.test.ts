/**
 * End to end, with real child processes: retries across restarts, a client that stops reading,
 * tools that escape their process group, signals, session-log write failures, and invariant 4
 * after a restart.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkTranscript } from "../../src/testing/index.js";
import { fixture, HostProcess, useHostProcesses, type WireMessage } from "./hostProcess.js";
import { processGone, waitGone } from "../helpers/processGone.js";
import { grownAfter, grownTo } from "../helpers/foldedWire.js";

const { start, tempDir } = useHostProcesses("muse-host-robust-");
const strays: number[] = []; // pids a test expects to outlive the host (escaped processes)

afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

const isCompletedOf = (turnId: string) => (m: WireMessage) => m.method === "turn/completed" && m.params?.["turnId"] === turnId;
/** A tool call's output so far once `m` is read, folded as a client folds it. */
const outputOf = (host: HostProcess, m: WireMessage) => grownAfter(host.wire, m);
const toolOutput = (host: HostProcess, pattern: RegExp) => grownTo(host.wire, pattern);

async function createSession(host: HostProcess): Promise<string> {
  return (await host.request("session/create", {})).result?.["sessionId"] as string;
}

describe("muse-host robustness (real processes)", () => {
  it("a turn/start retried after a restart answers the original acceptance and starts no second turn", async () => {
    const data = tempDir();
    const first = start(["--script", fixture("hello.json"), "--data", data]);
    const sessionId = await createSession(first);
    const params = { sessionId, commandId: "0198f0aa-0000-7000-8000-0000000000aa", input: [{ type: "text", text: "hi" }] };
    const ack = await first.request("turn/start", params);
    await first.waitFor(isCompletedOf(params.commandId));
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = start(["--script", fixture("hello.json"), "--data", data]);
    const retried = await second.request("turn/start", params);
    expect(retried.result).toEqual(ack.result);
    const full = await second.request("session/resume", { sessionId, commandId: "resume-all" });
    await second.waitFor(() => second.notifications("turn/completed").length >= 1);
    await new Promise((r) => setTimeout(r, 200)); // anything a second turn would emit
    expect(second.notifications("turn/started", params.commandId)).toHaveLength(1); // the replayed one only
    expect(second.notifications("turn/completed", params.commandId)).toHaveLength(1);
    expect(full.result?.["replayed"]).toBe(second.wire.filter((m) => m.method !== undefined).length);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it("a client that stops reading stdout (EPIPE) shuts the host down cleanly: exit 0, tools killed", async () => {
    const host = start(["--script", fixture("shell-stubborn.json"), "--data", tempDir(), "--kill-grace-ms", "300"]);
    const sessionId = await createSession(host);
    await host.request("turn/start", { sessionId, input: [] });
    const pid = Number(/stubborn (\d+)/.exec(outputOf(host, await host.waitFor(toolOutput(host, /stubborn \d+/))))?.[1]);
    expect(processGone(pid)).toBe(false);
    host.child.stdout.destroy(); // the client goes away without closing stdin
    host.send("host/info", {}); // the answer hits EPIPE
    expect(await Promise.race([host.exited, new Promise((r) => setTimeout(() => r("still running"), 5000))])).toEqual({ code: 0, signal: null });
    expect(await waitGone([pid], 2000)).toBe(true);
  });

  it("a client killed with all three pipes (stdin, stdout, stderr closed at once): exit 0, the turn ends cancelled, tools killed", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("shell-stubborn.json"), "--data", data, "--kill-grace-ms", "300"]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    const pid = Number(/stubborn (\d+)/.exec(outputOf(host, await host.waitFor(toolOutput(host, /stubborn \d+/))))?.[1]);
    host.child.stderr.destroy();
    host.child.stdout.destroy();
    host.child.stdin.destroy();
    expect(await Promise.race([host.exited, new Promise((r) => setTimeout(() => r("still running"), 5000))])).toEqual({ code: 0, signal: null });
    expect(await waitGone([pid], 2000)).toBe(true);

    // The drain ran to its end: the logged terminal is the cancel's, not a restart's.
    const restarted = start(["--script", fixture("hello.json"), "--data", data]);
    await restarted.request("session/resume", { sessionId });
    const terminal = await restarted.waitFor(isCompletedOf(turnId));
    expect(terminal.params).toMatchObject({ terminal: "cancelled" });
    expect(terminal.params?.["reason"]).not.toBe("host restarted");
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  }, 15_000);

  it("a tool whose child escaped the process group (setsid) does not make cancel unbounded", async () => {
    const host = start(["--script", fixture("shell-setsid.json"), "--data", tempDir(), "--kill-grace-ms", "300"]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    const escaped = Number(/escaped (\d+)/.exec(outputOf(host, await host.waitFor(toolOutput(host, /escaped \d+/))))?.[1]);
    strays.push(escaped);
    const t0 = Date.now();
    await host.request("turn/cancel", { sessionId, turnId });
    const done = await host.waitFor(isCompletedOf(turnId), 4000, "turn/completed");
    expect(Date.now() - t0).toBeLessThan(2500); // SIGTERM, grace, SIGKILL, grace: then it stops waiting
    expect(done.params).toMatchObject({ terminal: "cancelled", reason: "cancelled during tool execution" });
    const item = host.notifications("item/completed", turnId).map((p) => p["item"] as Record<string, unknown>)[0];
    expect(item).toMatchObject({ kind: "toolCall", status: "cancelled", failureReason: "turn cancelled", error: { code: "TOOL_PROCESSES_ESCAPED" } });
    expect(checkTranscript(host.transcript).problems).toEqual([]);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("a second SIGTERM while draining SIGKILLs the tool groups and exits non-zero at once", async () => {
    const host = start(["--script", fixture("shell-stubborn.json"), "--data", tempDir(), "--kill-grace-ms", "20000"]);
    const sessionId = await createSession(host);
    await host.request("turn/start", { sessionId, input: [] });
    const pid = Number(/stubborn (\d+)/.exec(outputOf(host, await host.waitFor(toolOutput(host, /stubborn \d+/))))?.[1]);
    host.child.kill("SIGTERM");
    for (const deadline = Date.now() + 3000; !/SIGTERM: cancelling/.test(host.stderr) && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(host.child.exitCode).toBeNull(); // draining: the tool ignores SIGTERM, the grace is long
    host.child.kill("SIGTERM");
    const exited = await Promise.race([host.exited, new Promise((r) => setTimeout(() => r("still running"), 4000))]);
    expect(exited).toEqual({ code: 143, signal: null });
    expect(await waitGone([pid], 2000)).toBe(true);
  });

  it("SIGHUP shuts down like SIGTERM: turns cancelled with cause disposed, exit 0", async () => {
    const host = start(["--script", fixture("shell-sleep.json"), "--data", tempDir()]);
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    const output = outputOf(host, await host.waitFor(toolOutput(host, /grandchild \d+/)));
    host.child.kill("SIGHUP");
    expect(await host.exited).toEqual({ code: 0, signal: null });
    expect(host.wire.find(isCompletedOf(turnId))?.params).toMatchObject({ terminal: "cancelled", cause: { kind: "disposed" } });
    expect(await waitGone([Number(/started (\d+)/.exec(output)?.[1]), Number(/grandchild (\d+)/.exec(output)?.[1])], 2000)).toBe(true);
  });

  it("a session-log write failure shuts down: tools drained, exit 1; a restart closes the turn as host restarted", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("shell-chatty.json"), "--data", data, "--kill-grace-ms", "300"], { fileSizeLimitBlocks: 16 });
    const sessionId = await createSession(host);
    const turnId = (await host.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    const pid = Number(/chatty (\d+)/.exec(outputOf(host, await host.waitFor(toolOutput(host, /chatty \d+/))))?.[1]);
    const exited = await Promise.race([host.exited, new Promise((r) => setTimeout(() => r("still running"), 8000))]);
    expect(exited).toEqual({ code: 1, signal: null });
    expect(host.stderr).toMatch(/session log of .* failed/);
    expect(await waitGone([pid], 2000)).toBe(true);
    expect(host.wire.find(isCompletedOf(turnId))).toBeUndefined(); // a terminal that is not durable is never sent

    const restarted = start(["--script", fixture("hello.json"), "--data", data]);
    await restarted.request("session/resume", { sessionId });
    const terminal = await restarted.waitFor(isCompletedOf(turnId));
    expect(terminal.params).toMatchObject({ terminal: "failed", reason: "host restarted" });
    expect(await restarted.stop()).toEqual({ code: 0, signal: null });
  }, 15_000);

  it("after a restart, already_terminal follows that turn's logged turn/completed on the new connection", async () => {
    const data = tempDir();
    const first = start(["--script", fixture("hello.json"), "--data", data]);
    const sessionId = await createSession(first);
    const turnId = (await first.request("turn/start", { sessionId, input: [] })).result?.["turnId"] as string;
    const original = await first.waitFor(isCompletedOf(turnId));
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = start(["--script", fixture("hello.json"), "--data", data]);
    const rejected = await second.request("turn/cancel", { sessionId, turnId, commandId: "late" });
    expect(rejected.error).toMatchObject({ code: -32001, data: { reason: "already_terminal", turnId, terminal: "completed" } });
    const resent = second.wire.find(isCompletedOf(turnId));
    expect(resent?.params).toEqual(original.params); // the logged terminal, with its original cursor
    expect(second.indexOf(isCompletedOf(turnId))).toBeLessThan(second.indexOf((m) => m === rejected));
    expect(checkTranscript(second.transcript).problems).toEqual([]);
    // Sent once per connection: a second late cancel is rejected without a repeat.
    await second.request("turn/cancel", { sessionId, turnId });
    expect(second.notifications("turn/completed", turnId)).toHaveLength(1);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });

  it("a session is loaded only under its exact sessionId", async () => {
    const data = tempDir();
    const first = start(["--script", fixture("hello.json"), "--data", data]);
    const sessionId = await createSession(first);
    expect(await first.stop()).toEqual({ code: 0, signal: null });
    // What a case-insensitive file system would show: the same log under another spelling.
    const upper = sessionId.toUpperCase();
    copyFileSync(join(data, "sessions", `${sessionId}.jsonl`), join(data, "sessions", `${upper}.jsonl`));
    const second = start(["--script", fixture("hello.json"), "--data", data]);
    const resumed = await second.request("session/resume", { sessionId: upper });
    expect(resumed.error).toMatchObject({ code: -32001, data: { reason: "unknown_session" } });
    expect((await second.request("session/resume", { sessionId })).result).toMatchObject({ sessionId });
    expect(readFileSync(join(data, "sessions", `${sessionId}.jsonl`), "utf8")).toContain(sessionId);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});
