/**
 * Approvals across real connections: `muse-host serve --ws` as a child process, SDK clients over
 * WebSocket (two browser tabs). The tab that was asked closes with the dialog open; a tab that
 * resumes the session is asked again and its answer decides. With both tabs open, the first
 * answer decides and the other tab's dialog closes by itself.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalQuestion, MspClient } from "../../src/index.js";
import { approvalModel } from "./approvalModel.js";
import { startWebSocketHost, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(): Promise<{ host: WebSocketHostProcess; marker: string; tab(): Promise<MspClient> }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-approval-ws-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const { model, marker } = approvalModel(dir);
  const host = await startWebSocketHost(["--script", model, "--data", join(dir, "data")]);
  cleanups.push(() => host.stop());
  return {
    host,
    marker,
    async tab() {
      const client = await wsClient(host.url, { token: host.token });
      cleanups.push(async () => void (await client.close()));
      return client;
    },
  };
}

/** Resolves with the next question asked on `client`. */
const nextQuestion = (client: MspClient) => new Promise<ApprovalQuestion>((resolve) => client.events.once("approvalAsked", resolve));

/** Every viewCursor `client` receives, in order. */
function cursors(client: MspClient): string[] {
  const seen: string[] = [];
  client.events.on("notification", ({ params }) => {
    const cursor = params?.["viewCursor"];
    if (typeof cursor === "string") seen.push(cursor);
  });
  return seen;
}

describe("approvals over WebSocket, two tabs", () => {
  it("the asked tab closes with the dialog open; the tab that resumes is asked again, approves, and the tool runs", async () => {
    const { host, marker, tab } = await start();
    const first = await tab();
    const seen = cursors(first);
    const { sessionId } = await first.command("session/create", {});
    first.onApproval(() => new Promise(() => {})); // the dialog is open
    const asked = nextQuestion(first);
    const turn = first.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const { turnId } = await turn.accepted;
    const question = await asked;
    // The tab closes. Its SDK answers the open question cancelled as it goes: that ends nothing.
    await first.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(host.stderr()).toMatch(/the client withdrew \(connection closed\); the question stays open/);
    expect(existsSync(marker)).toBe(false);

    const second = await tab();
    second.onApproval(() => ({ decision: "approve" }));
    const again = nextQuestion(second);
    await second.command("session/resume", { sessionId, afterCursor: seen.at(-1) });
    expect((await again).request).toEqual(question.request);
    const terminal = await second.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    expect(terminal).toMatchObject({ terminal: "completed" });
    expect(second.items.itemsOf(turnId).find((i) => i.kind === "toolCall")).toMatchObject({ status: "completed", approval: "approved" });
    expect(existsSync(marker)).toBe(true);
  });

  it("both tabs open: the resuming tab is asked too; the first answer decides and the other dialog closes by itself", async () => {
    const { marker, tab } = await start();
    const a = await tab();
    const { sessionId } = await a.command("session/create", {});
    a.onApproval(() => new Promise(() => {})); // a's dialog stays open
    const askedA = nextQuestion(a);
    const turn = a.startTurn({ sessionId, input: [{ type: "text", text: "go" }] });
    const { turnId } = await turn.accepted;
    await askedA;
    const b = await tab();
    b.onApproval(() => ({ decision: "deny", reason: "b said no" }));
    await b.command("session/resume", { sessionId });
    const terminal = await b.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    expect(terminal).toMatchObject({ terminal: "completed" });
    expect(b.items.itemsOf(turnId).find((i) => i.kind === "toolCall")).toMatchObject({ status: "failed", approval: "denied", error: { message: "b said no" } });
    // a heard the item leave "pending": its SDK closed a's dialog (answering cancelled, which the host ignores).
    await a.turns.terminalOf(turnId, { timeoutMs: 10_000 });
    expect(a.approvals.openOf(turnId)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });
});
