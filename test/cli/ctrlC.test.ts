/**
 * Ctrl-C is Stop, under a real pseudo-terminal (script(1)): muse's stdout is a TTY and `\x03` is the
 * terminal's own Ctrl-C, a SIGINT from the line discipline. The first press sends turn/cancel,
 * shows "stopping…", and muse exits only after the turn's own terminal, which it prints (130). A
 * second press closes the connection at once and kills the spawned host, and its tool with it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processGone, waitGone } from "../helpers/processGone.js";
import { expectInOrder } from "./expectInOrder.js";
import { hostCommand, modelPath, MuseTerminal, runMuse, tempDir, useMuseBundles } from "./museProcess.js";

const bundles = useMuseBundles();
const terminals: MuseTerminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

function start(args: string[]): MuseTerminal {
  const terminal = new MuseTerminal(bundles(), args);
  terminals.push(terminal);
  return terminal;
}

describe("Ctrl-C in muse run (a pseudo-terminal)", () => {
  it("the first Ctrl-C stops the turn: stopping…, the tool drains, the real terminal is printed, exit 130", async () => {
    const t = start(["run", "run the tests", "--spawn", hostCommand(bundles(), `--script ${modelPath("run-tests")}`)]);
    await t.waitFor(/test 3 \.\.\. ok/);
    expect(t.raw).toMatch(/⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏/); // the progress line, on a terminal
    expect(t.raw).toContain("\u001b[36m●\u001b[39m \u001b[1mshell\u001b[22m:"); // styled output: the tool call's header
    t.interrupt();
    await t.waitFor(/stopping…/);
    const { code } = await t.exited;
    expect(code).toBe(130);
    const text = t.text;
    // The tool's own drain output arrives after the stop, then its cancelled status, then the terminal.
    expectInOrder(text, [
      "stopping…",
      "│ SIGTERM: stopping the test run",
      "│ test run stopped after",
      "└ cancelled: turn cancelled",
      "turn cancelled: you stopped it (cancelled during tool execution) after",
    ]);
    expect(text).not.toContain("All 100 tests passed.");
  });

  it("a second Ctrl-C closes the connection at once and kills the host and its stubborn tool (exit 130, no terminal)", async () => {
    const t = start(["run", "start the job", "--spawn", hostCommand(bundles(), `--kill-grace-ms 20000 --script ${modelPath("cli-stubborn")}`)]);
    const [, pid] = await t.waitFor(/job pid (\d+)/);
    await t.waitFor(/tick 3\b/);
    t.interrupt();
    await t.waitFor(/stopping…/);
    await t.waitFor(/│ SIGTERM ignored/); // the host signalled the tool, which ignores it: the drain would last the 20 s grace
    const second = Date.now();
    t.interrupt();
    const { code } = await t.exited;
    expect(Date.now() - second).toBeLessThan(3_000);
    expect(code).toBe(130);
    expect(t.text).toContain("closing the connection without waiting for the terminal");
    expect(t.text).not.toContain("turn cancelled:");
    expect(await waitGone([Number(pid)], 3_000)).toBe(true);
    expect(processGone(Number(pid))).toBe(true);
  });

  it("Ctrl-C the moment the host starts, before any command runs: interrupted, 130, the host gone (never killed by the signal)", async () => {
    const temp = tempDir("muse-ctrlc-early-");
    try {
      const pidFile = join(temp.dir, "host.pid");
      // The host's first act is the user's Ctrl-C: a SIGINT to muse, its parent, while muse is still
      // setting up. Repeated: the press lands at a different point of the setup each time.
      for (let i = 0; i < 5; i++) {
        const result = await runMuse(bundles(), ["info", "--spawn", `sh -c 'echo $$ > ${pidFile}; kill -INT $PPID; exec cat >/dev/null'`]);
        expect(result.signal, result.stderr).toBeNull();
        expect(result.code, result.stderr).toBe(130);
        expect(result.stderr).toContain("muse: interrupted");
        expect(await waitGone([Number(readFileSync(pidFile, "utf8"))], 3_000)).toBe(true);
      }
    } finally {
      temp.remove();
    }
  });

  it("Ctrl-C while a command waits on a host that never answers quits at once (130)", async () => {
    const temp = tempDir("muse-ctrlc-");
    try {
      const started = join(temp.dir, "started");
      // A host that never answers: it marks that it runs, then reads stdin forever.
      const t = start(["info", "--spawn", `sh -c 'touch ${started}; exec cat >/dev/null'`]);
      const deadline = Date.now() + 10_000;
      while (!existsSync(started) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      t.interrupt();
      const { code } = await t.exited;
      expect(code, t.text).toBe(130);
      expect(t.text).toContain("muse: interrupted");
    } finally {
      temp.remove();
    }
  });
});
