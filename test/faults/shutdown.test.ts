/**
 * Shutdown faults with real child processes: the host exits or is killed mid-command, closes its
 * stdout, closes its stdin (EPIPE), stops reading, or we close() with work pending. Every pending
 * command and terminal wait settles with a typed MspError within 100 ms, and nothing escapes as an
 * unhandled rejection.
 */
import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { closeAll, expectClosed, nextNotifications, outcome, spawnFaulty, useFaultHarness } from "./harness.js";

useFaultHarness();

const SETTLE_MS = 100;
const READY = { jsonrpc: "2.0", method: "test/ready", params: {} };

/** Pending work of every shape: a command, two waiters on one turn, an unbounded waiter. */
function pendingWork(host: ReturnType<typeof spawnFaulty>) {
  return [
    outcome(host.command("host/info", {})),
    outcome(host.turns.terminalOf("t1", { timeoutMs: 60_000 })),
    outcome(host.turns.terminalOf("t1", { timeoutMs: 60_000 })),
    outcome(host.turns.terminalOf("t2", { timeoutMs: Infinity })),
    outcome(host.cancelTurn({ sessionId: "s", turnId: "t3" })),
  ];
}

function exitAt(host: ReturnType<typeof spawnFaulty>): Promise<number> {
  return new Promise((resolve) => host.process.once("exit", () => resolve(performance.now())));
}

describe("the child exits or dies mid-command", () => {
  it("exit(3): everything settles connectionClosed with exitCode 3, within 100 ms of the exit", async () => {
    const host = spawnFaulty([
      ["await", 2],
      ["exit", 3],
    ]);
    const exited = exitAt(host);
    const work = pendingWork(host);
    const results = await Promise.all(work);
    const at = await exited;
    for (const r of results) {
      const e = expectClosed(r.error);
      expect(e.data["exitCode"]).toBe(3);
      expect(r.at - at).toBeLessThan(SETTLE_MS);
    }
    expect(host.pendingCount).toBe(0);
    expect(host.turns.waiterCount).toBe(0);
    expect((await host.closed).exitCode).toBe(3);
  });

  it("SIGKILL: everything settles connectionClosed with signal SIGKILL, within 100 ms", async () => {
    const host = spawnFaulty([
      ["await", 1],
      ["kill", "SIGKILL"],
    ]);
    const exited = exitAt(host);
    const results = await Promise.all(pendingWork(host));
    const at = await exited;
    for (const r of results) {
      const e = expectClosed(r.error);
      expect(e.data["signal"]).toBe("SIGKILL");
      expect(r.at - at).toBeLessThan(SETTLE_MS);
    }
  });

  it("a fire-and-forget startTurn and cancel on a dying host leak no unhandled rejection", async () => {
    const host = spawnFaulty([
      ["await", 1],
      ["exit", 1],
    ]);
    const turn = host.startTurn({ sessionId: "s", input: [{ type: "text", text: "hi" }] });
    void turn.completed.catch(() => {});
    const cancelled = await outcome(turn.cancel({ timeoutMs: 5_000 }));
    expectClosed(cancelled.error);
    await host.closed;
  });

  it("a host that never starts (ENOENT) settles everything connectionClosed", async () => {
    const { spawnHost } = await import("../../src/node/index.js");
    const host = spawnHost({ command: "/nonexistent/muse-host-xyz", stderr: "ignore", killGraceMs: 50 });
    const r = await outcome(host.command("host/info", {}));
    expect(String(expectClosed(r.error).data["reason"])).toMatch(/could not start/);
    await host.close();
  });
});

describe("the child closes a pipe", () => {
  it("stdout EOF with the child still alive: everything settles connectionClosed within 100 ms", async () => {
    const host = spawnFaulty([["await", 1], ["closeStdout"], ["hang"]]);
    const eof = new Promise<number>((resolve) => host.process.stdout?.once("end", () => resolve(performance.now())));
    const results = await Promise.all(pendingWork(host));
    const at = await eof;
    for (const r of results) {
      expectClosed(r.error);
      expect(r.at - at).toBeLessThan(SETTLE_MS);
    }
  });

  it("stdin closed by the child (EPIPE on our next write): the command and all waits settle within 100 ms", async () => {
    const host = spawnFaulty([["closeStdin"], ["send", READY], ["hang"]]);
    await nextNotifications(host, 1);
    const waits = [outcome(host.turns.terminalOf("t1")), outcome(host.turns.terminalOf("t2", { timeoutMs: Infinity }))];
    const sent = performance.now();
    const command = await outcome(host.command("host/info", {}));
    expectClosed(command.error);
    expect(command.at - sent).toBeLessThan(SETTLE_MS);
    for (const r of await Promise.all(waits)) {
      expectClosed(r.error);
      expect(r.at - sent).toBeLessThan(SETTLE_MS);
    }
    expect(host.isClosed).toBe(true);
  });

  it("the child exits while a large write is blocked in the pipe: it settles connectionClosed within 100 ms of the exit", async () => {
    const host = spawnFaulty([["stopReading"], ["send", READY], ["sleep", 150], ["exit", 7]]);
    await nextNotifications(host, 1);
    const exited = exitAt(host);
    const big = "x".repeat(4 * 1024 * 1024); // far more than a pipe buffer holds
    const results = await Promise.all([outcome(host.command("host/info", { big })), outcome(host.turns.terminalOf("t1"))]);
    const at = await exited;
    for (const r of results) {
      expectClosed(r.error);
      expect(r.at - at).toBeLessThan(SETTLE_MS);
    }
  });

  // Regression: the EPIPE from stdin used to win the race against the exit event (no exit code in
  // the error) and was also emitted as a protocolError although the host sent nothing wrong.
  it("the child exits while a large write is blocked: the error carries exitCode 7 and no protocolError is emitted", async () => {
    const host = spawnFaulty([["stopReading"], ["send", READY], ["sleep", 100], ["exit", 7]]);
    await nextNotifications(host, 1);
    const problems: Array<MspError<"protocol">> = [];
    host.events.on("protocolError", (e) => problems.push(e));
    const r = await outcome(host.command("host/info", { big: "x".repeat(4 * 1024 * 1024) }));
    expect(expectClosed(r.error).data["exitCode"]).toBe(7);
    expect(problems).toEqual([]);
  });
});

describe("close() while work is pending", () => {
  it("a hanging host: every command and wait settles connectionClosed within 100 ms of close(), and the child is gone", async () => {
    const host = spawnFaulty([["hang"]]);
    await new Promise((r) => setTimeout(r, 20));
    const work = pendingWork(host);
    const more = Array.from({ length: 20 }, (_, i) => outcome(host.command("host/info", { i })));
    const started = performance.now();
    const closing = host.close();
    const results = await Promise.all([...work, ...more]);
    for (const r of results) {
      expectClosed(r.error);
      expect(r.at - started).toBeLessThan(SETTLE_MS);
    }
    expect((await closing).reason).toBe("closed by the client");
    const exit = await host.exited;
    expect(exit.signal === "SIGTERM" || exit.signal === "SIGKILL" || exit.exitCode !== null).toBe(true);
    expect(host.pendingCount).toBe(0);
    expect(host.turns.waiterCount).toBe(0);
    await closeAll();
  });

  it("a host that stopped reading stdin: timeout and abort stay distinct, close() settles the rest", async () => {
    const host = spawnFaulty([["stopReading"], ["hang"]]);
    const timedOut = await outcome(host.command("host/info", {}, { timeoutMs: 30 }));
    expect((timedOut.error as MspError).kind).toBe("timeout");
    const controller = new AbortController();
    const aborted = outcome(host.command("host/info", {}, { signal: controller.signal }));
    const reason = new Error("user left");
    controller.abort(reason);
    const a = (await aborted).error as MspError;
    expect(a.kind).toBe("aborted");
    expect(a.cause).toBe(reason);
    const pending = outcome(host.command("host/info", { big: "y".repeat(1 << 20) }));
    const started = performance.now();
    void host.close();
    const r = await pending;
    expectClosed(r.error);
    expect(r.at - started).toBeLessThan(SETTLE_MS);
  });
});
