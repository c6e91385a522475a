/**
 * The per-connection bound ("Bounds" in docs/protocol.md): `muse-host serve --ws` as a child
 * process with `--max-sessions-per-connection 3`, SDK clients over real WebSockets. Past the bound
 * a connection's `session/create`, and its `session/resume` of a session it does not hear, answer
 * `too_many_sessions`; everything it heard it goes on hearing, and another connection is not
 * refused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MspError, RejectionReasons, type MspClient } from "../../src/index.js";
import { startWebSocketHost, wsClient, type WebSocketHostProcess } from "./webSocketHostProcess.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(limit: number): Promise<{ host: WebSocketHostProcess; tab(): Promise<MspClient> }> {
  const dir = mkdtempSync(join(tmpdir(), "muse-bounds-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const host = await startWebSocketHost([
    "--script",
    "packages/host/models/hello.json",
    "--data",
    join(dir, "data"),
    "--max-sessions-per-connection",
    String(limit),
  ]);
  cleanups.push(() => host.stop());
  return {
    host,
    async tab() {
      const client = await wsClient(host.url, { token: host.token });
      cleanups.push(async () => void (await client.close()));
      return client;
    },
  };
}

/** The rejection `promise` settles with: an MspError `commandRejected`, or the test fails. */
async function rejectionOf(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(MspError.is(error) && error.kind === "commandRejected")) throw new Error(`expected a commandRejected MspError, got ${String(error)}`);
  return error.data;
}

describe("sessions per connection, over WebSocket", () => {
  it("past the bound a connection's create and its resume of another session are refused too_many_sessions; what it hears goes on", async () => {
    const { tab } = await start(3);
    const a = await tab();
    const own: string[] = [];
    for (let i = 0; i < 3; i++) own.push((await a.command("session/create", {})).sessionId);

    const refused = await rejectionOf(a.command("session/create", {}));
    expect(refused["reason"]).toBe(RejectionReasons.tooManySessions);
    expect(refused["limit"]).toBe(3);

    // A resume of a session it hears is never refused for the bound.
    const resumed = await a.command("session/resume", { sessionId: own[0] as string });
    expect(resumed.sessionId).toBe(own[0]);

    // Another connection is not refused, and its session is one `a` may not take as a fourth.
    const b = await tab();
    const { sessionId: theirs } = await b.command("session/create", {});
    const resumeRefused = await rejectionOf(a.command("session/resume", { sessionId: theirs }));
    expect(resumeRefused["reason"]).toBe(RejectionReasons.tooManySessions);

    // `a` still hears every session of its own: a turn on the last one reaches it whole.
    const turn = a.startTurn({ sessionId: own[2] as string, input: [{ type: "text", text: "hello" }] });
    const ended = await turn.waitForTerminal({ timeoutMs: 20_000 });
    expect(ended.terminal).toBe("completed");

    // And `b`, which was never refused, resumes the session `a` could not.
    expect((await b.command("session/resume", { sessionId: theirs })).sessionId).toBe(theirs);
  });
});
