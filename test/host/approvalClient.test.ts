/**
 * Approvals end to end: the SDK client (`client.onApproval`, `StopController`) against the real
 * host (`muse-host serve --stdio`, a child process). The tool's side effect (a marker file) proves
 * whether it ran; every recorded exchange must pass checkTranscript.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StopController, type StopSnapshot } from "../../src/ui/index.js";
import { spawnHost, type SpawnedHost } from "../../src/node/index.js";
import { checkTranscript, formatTranscriptEntry, recordingChannel } from "../../src/testing/index.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { approvalModel } from "./approvalModel.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function start(): { msp: SpawnedHost; marker: string; transcript: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "muse-approval-sdk-"));
  const { model, marker } = approvalModel(dir);
  const transcript: string[] = [];
  const msp = spawnHost({
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      join(repoRoot, "packages", "host", "src", "serve", "main.ts"),
      "serve",
      "--stdio",
      "--script",
      model,
      "--data",
      join(dir, "data"),
    ],
    cwd: repoRoot,
    stderr: "ignore",
    defaultTimeoutMs: 10_000,
    wrapChannel: (channel) => recordingChannel(channel, (entry) => transcript.push(formatTranscriptEntry(entry))),
  });
  cleanups.push(async () => {
    await msp.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { msp, marker, transcript };
}

const toolCallOf = (msp: SpawnedHost, turnId: string) => msp.items.itemsOf(turnId).find((item) => item.kind === "toolCall");

describe("approvals through the SDK, against the real host", () => {
  it("Stop with the dialog open: the question is answered cancelled, the dialog closes, nothing runs, the turn ends cancelled", async () => {
    const { msp, marker, transcript } = start();
    const { sessionId } = await msp.command("session/create", {});
    msp.onApproval(() => new Promise(() => {})); // the dialog answers, or Stop does
    const turn = msp.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const stop = new StopController(turn, { stopTimeoutMs: 10_000 });
    const asking = await new Promise<StopSnapshot>((resolve) => {
      const off = stop.subscribe((s) => {
        if (s.approval === undefined) return;
        off();
        resolve(s);
      });
    });
    expect(asking.approval?.request).toMatchObject({ sessionId, tool: "shell" });
    const final = await stop.stop();
    expect(final).toMatchObject({
      state: "ended",
      turnCompleted: { terminal: "cancelled", reason: "cancelled while awaiting approval", cause: { kind: "user" } },
    });
    expect(final.approval).toBeUndefined();
    expect(final.ack).toBe("accepted"); // the cancelled answer withdrew the dialog; the turn/cancel ended the turn
    expect(toolCallOf(msp, final.turnCompleted!.turnId)).toMatchObject({
      status: "cancelled",
      approval: "cancelled",
      failureReason: "tool call aborted before dispatch",
      visibleOutput: "",
    });
    expect(msp.approvals.size).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    await msp.close();
    expect(checkTranscript(transcript).problems).toEqual([]);
  });

  it("a handler's approve runs the tool; its deny does not, and the turn goes on", async () => {
    const { msp, marker, transcript } = start();
    const { sessionId } = await msp.command("session/create", {});
    const decisions: Array<"approve" | "deny"> = ["deny", "approve"];
    msp.onApproval(() => ({ decision: decisions.shift() ?? "deny", reason: "the test decided" }));
    const denied = await msp.startTurn({ sessionId, input: [{ type: "text", text: "first" }] }).completed;
    expect(denied).toMatchObject({ terminal: "completed" });
    expect(toolCallOf(msp, denied.turnId)).toMatchObject({
      status: "failed",
      approval: "denied",
      failureReason: "denied by the user",
      error: { message: "the test decided" },
    });
    expect(existsSync(marker)).toBe(false);
    const approved = await msp.startTurn({ sessionId, input: [{ type: "text", text: "second" }] }).completed;
    expect(approved).toMatchObject({ terminal: "completed" });
    expect(toolCallOf(msp, approved.turnId)).toMatchObject({ status: "completed", approval: "approved", visibleOutput: "wrote it\n" });
    expect(existsSync(marker)).toBe(true);
    await msp.close();
    expect(checkTranscript(transcript).problems).toEqual([]);
  });

  it("no handler installed: the SDK denies ('no approval handler') and the host runs nothing", async () => {
    const { msp, marker } = start();
    const { sessionId } = await msp.command("session/create", {});
    const terminal = await msp.startTurn({ sessionId, input: [{ type: "text", text: "go" }] }).completed;
    expect(terminal).toMatchObject({ terminal: "completed" });
    expect(toolCallOf(msp, terminal.turnId)).toMatchObject({
      status: "failed",
      approval: "denied",
      error: { code: "TOOL_DENIED", message: "no approval handler" },
    });
    expect(existsSync(marker)).toBe(false);
  });

  it("a handler that throws: the SDK denies with its message", async () => {
    const { msp, marker } = start();
    const { sessionId } = await msp.command("session/create", {});
    msp.onApproval(() => {
      throw new Error("the dialog crashed");
    });
    const terminal = await msp.startTurn({ sessionId, input: [{ type: "text", text: "go" }] }).completed;
    expect(toolCallOf(msp, terminal.turnId)).toMatchObject({ status: "failed", approval: "denied", error: { message: "the dialog crashed" } });
    expect(existsSync(marker)).toBe(false);
  });
});
