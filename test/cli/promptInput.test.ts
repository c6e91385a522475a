import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { PromptInput } from "../../packages/host/src/cli/promptInput.js";

/** A terminal's stdin: raw mode switchable; what the test emits is what the terminal hands over. */
class FakeTerminal extends EventEmitter {
  readonly isTTY = true;
  rawMode = false;
  setRawMode(raw: boolean): void {
    this.rawMode = raw;
  }
  resume(): void {}
  pause(): void {}
}

describe("PromptInput on a terminal", () => {
  it("a line half-typed before the question (handed over as raw mode begins) is not an answer; it starts the next steering line", async () => {
    const tty = new FakeTerminal();
    const input = new PromptInput(tty);
    const lines: string[] = [];
    input.listen((line) => {
      if ("text" in line) lines.push(line.text);
    });
    let shown = false;
    const answer = input.read(new AbortController().signal, () => (shown = true));
    expect(tty.rawMode).toBe(true);
    // The terminal hands over the half-typed "a" (the start of "add a test") as raw mode begins.
    tty.emit("data", "a");
    expect(shown).toBe(false);
    await expect.poll(() => shown, { timeout: 2_000 }).toBe(true);
    let settled: string | undefined;
    void answer.then((key) => (settled = key));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBeUndefined(); // the "a" did not grant anything
    tty.emit("data", "y"); // a key pressed once the question shows
    await expect(answer).resolves.toBe("yes");
    expect(tty.rawMode).toBe(false);
    // Back in line mode, the rest of the line completes the held start.
    tty.emit("data", "dd a test\n");
    expect(lines).toEqual(["add a test"]);
    input.close();
  });

  it("shows the question at once on a pipe, and a piped line answers it", async () => {
    const pipe = new EventEmitter() as EventEmitter & { resume(): void; pause(): void };
    pipe.resume = () => {};
    pipe.pause = () => {};
    const input = new PromptInput(pipe);
    let shown = false;
    const answer = input.read(new AbortController().signal, () => (shown = true));
    expect(shown).toBe(true);
    pipe.emit("data", "a\n");
    await expect(answer).resolves.toBe("always");
    input.close();
  });
});
