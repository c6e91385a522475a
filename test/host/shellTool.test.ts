/** Tests of the shell tool with real `sh` processes: output, caps, exit codes, group kill and grace. */
import { afterEach, describe, expect, it } from "vitest";
import { runShell } from "../../packages/host/src/tools/shellTool.js";
import { processGone, waitGone } from "../helpers/processGone.js";

function pidsIn(output: string, label: string): number {
  return Number(new RegExp(`${label} (\\d+)`).exec(output)?.[1]);
}

const strays: number[] = []; // processes a test let escape its group: killed even if the test fails
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

describe("runShell", () => {
  it("captures stdout and stderr and completes on exit 0", async () => {
    const result = await runShell("echo out; echo err >&2", { signal: new AbortController().signal });
    expect(result.status).toBe("completed");
    expect(result.exitCode).toBe(0);
    expect(result.visibleOutput.split("\n").sort()).toEqual(["", "err", "out"]);
    expect(result.truncated).toBe(false);
  });

  it("fails with the exit code on a non-zero exit", async () => {
    const result = await runShell("echo partial; exit 7", { signal: new AbortController().signal });
    expect(result).toMatchObject({ status: "failed", failureReason: "exit code 7", exitCode: 7, visibleOutput: "partial\n" });
  });

  it("caps visible output and marks it truncated", async () => {
    const result = await runShell("head -c 5000 /dev/zero | tr '\\0' x", { signal: new AbortController().signal }, { outputCapBytes: 100 });
    expect(result.truncated).toBe(true);
    expect(result.visibleOutput).toBe("x".repeat(100));
  });

  it("streams output to onOutput as it arrives", async () => {
    const seen: string[] = [];
    await runShell("echo a; sleep 0.1; echo b", { signal: new AbortController().signal, onOutput: (out) => seen.push(out) });
    expect(seen[0]).toBe("a\n");
    expect(seen.at(-1)).toBe("a\nb\n");
  });

  it("on abort kills the whole process group (grandchildren too) and reports the output so far", async () => {
    const abort = new AbortController();
    let output = "";
    const done = runShell("echo started $$; sh -c 'echo grandchild $$; exec sleep 30' & wait", {
      signal: abort.signal,
      onOutput: (out) => (output = out),
    });
    const deadline = Date.now() + 3000;
    while (!/grandchild \d+/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const shell = pidsIn(output, "started");
    const grandchild = pidsIn(output, "grandchild");
    expect(processGone(grandchild)).toBe(false);
    const t0 = Date.now();
    abort.abort({ kind: "user" });
    const result = await done;
    expect(Date.now() - t0).toBeLessThan(1000); // cooperative: SIGTERM was enough
    expect(result).toMatchObject({ status: "cancelled", failureReason: "turn cancelled", pid: shell });
    expect(result.visibleOutput).toBe(output);
    expect(() => process.kill(shell, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    expect(await waitGone([shell, grandchild], 1000)).toBe(true);
  });

  it("SIGKILLs a group that ignores SIGTERM after the grace, and not before", async () => {
    const abort = new AbortController();
    let output = "";
    const done = runShell("trap '' TERM; echo stubborn $$; sleep 30", { signal: abort.signal, onOutput: (out) => (output = out) }, { killGraceMs: 400 });
    const deadline = Date.now() + 3000;
    while (!/stubborn \d+/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const shell = pidsIn(output, "stubborn");
    const t0 = Date.now();
    abort.abort({ kind: "user" });
    await new Promise((r) => setTimeout(r, 200));
    expect(processGone(shell)).toBe(false); // still alive inside the grace
    const result = await done;
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(1500);
    expect(result.status).toBe("cancelled");
    expect(result.visibleOutput).toBe(`stubborn ${shell}\n`);
    expect(() => process.kill(shell, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it("does not spawn when the signal is already aborted", async () => {
    const abort = new AbortController();
    abort.abort({ kind: "user" });
    const result = await runShell("echo never", { signal: abort.signal });
    expect(result).toMatchObject({ status: "cancelled", visibleOutput: "" });
    expect(result.pid).toBeUndefined();
  });

  it("leaves no orphan when the shell exits but left a background job", async () => {
    const result = await runShell("sh -c 'echo bg $$; exec sleep 30' & sleep 0.1; echo leader done", { signal: new AbortController().signal });
    expect(result.status).toBe("completed");
    const bg = pidsIn(result.visibleOutput, "bg");
    expect(await waitGone([bg], 1000)).toBe(true);
  });

  it("caps output without splitting a UTF-8 character", async () => {
    const result = await runShell("printf 'a\\303\\251b'", { signal: new AbortController().signal }, { outputCapBytes: 2 });
    expect(result.truncated).toBe(true);
    expect(result.visibleOutput).toBe("a");
  });

  it("stops waiting for pipes held by a process that escaped the group, and a late cancel does not relabel an exit 0", async () => {
    const abort = new AbortController();
    let output = "";
    let leader = 0;
    const t0 = Date.now();
    const done = runShell(
      "setsid sh -c 'echo held $$; exec sleep 30' & sleep 0.1; exit 0",
      { signal: abort.signal, onOutput: (out) => (output = out) },
      { killGraceMs: 300, onSpawn: (pid) => (leader = pid) },
    );
    const deadline = Date.now() + 3000;
    while (!(/held \d+/.test(output) && leader !== 0 && processGone(leader)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    strays.push(pidsIn(output, "held"));
    expect(processGone(leader)).toBe(true); // the shell exited 0; the escaped sleep holds the pipes
    // /proc shows the zombie before Node has reaped it and run the child's "exit" handler; give
    // Node that moment (well inside the 300 ms escape grace), so the cancel really comes after.
    await new Promise((r) => setTimeout(r, 100));
    abort.abort({ kind: "user" }); // too late to matter
    const result = await done;
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(result).toMatchObject({ status: "completed", exitCode: 0, escaped: true });
    expect(result.failureReason).toBeUndefined();
  });
});
