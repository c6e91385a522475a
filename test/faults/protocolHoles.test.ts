/**
 * Finding 6 (issue 10): small protocol holes, against the real host process over stdio.
 * - A request id the answer cannot carry exactly (`1e400` parses as Infinity) was executed and
 *   answered with `id: null`. Now it is an Invalid Request (-32600, id null) and runs nothing.
 * - `session/resume` with an `afterCursor` beyond the session's last cursor was accepted with
 *   `replayed: 0`, and the client took that future cursor as its own. Now it is Invalid params
 *   (-32602) naming the session's `lastCursor`, and a retry with a valid cursor works.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { model, startHost, tempDataDir } from "../helpers/referenceHost.js";
import { fixture, useHostProcesses } from "../host/hostProcess.js";
import { useFaultHarness } from "./harness.js";

useFaultHarness();
const { start, tempDir } = useHostProcesses("muse-faults-protocol-");

describe("finding 6: small protocol holes", () => {
  it("finding 6: a request id 1e400 (Infinity), or any id that is not a safe integer, is an Invalid Request with id null and is not executed", async () => {
    const data = tempDir();
    const host = start(["--script", fixture("hello.json"), "--data", data]);
    const badIds = ["1e400", "-1e400", "1.5", "9007199254740992", "1e20"];
    for (const [i, raw] of badIds.entries()) {
      host.writeLine(`{"jsonrpc":"2.0","id":${raw},"method":"session/create","params":{"commandId":"bad-${i}"}}`);
    }
    // A good request after them: its answer comes after theirs (one line at a time, in order).
    const ok = await host.request("host/info", {});
    expect(ok.result).toMatchObject({ status: "accepted" });
    const answers = host.wire.filter((m) => m !== ok);
    expect(answers).toHaveLength(badIds.length);
    for (const answer of answers) {
      expect(answer).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      expect(answer["result"]).toBeUndefined();
    }
    // Nothing ran: no session log was created, and the commandIds were not taken.
    expect(readdirSync(join(data, "sessions"))).toEqual([]);
    const created = await host.request("session/create", { commandId: "bad-0" });
    expect(created.result).toMatchObject({ status: "accepted", commandId: "bad-0" });
    expect(readdirSync(join(data, "sessions"))).toHaveLength(1);
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 6: session/resume with an afterCursor beyond the session's last cursor is Invalid params naming lastCursor, and a retry with a valid cursor works", async () => {
    const host = start(["--script", fixture("hello.json"), "--data", tempDir()]);
    const sessionId = (await host.request("session/create", {})).result!["sessionId"] as string;
    const turnId = (await host.request("turn/start", { sessionId, input: [{ type: "text", text: "hi" }] })).result!["turnId"] as string;
    const done = await host.waitFor((m) => m.method === "turn/completed" && m.params?.["turnId"] === turnId);
    const last = Number(String(done.params!["viewCursor"]).split(":").pop());
    expect(last).toBeGreaterThan(2);

    const ahead = `v:${sessionId}:${last + 5}`;
    const before = host.wire.length;
    const rejected = await host.request("session/resume", { sessionId, afterCursor: ahead, commandId: "resume-ahead" });
    expect(rejected.error).toMatchObject({ code: -32602, data: { commandId: "resume-ahead", lastCursor: `v:${sessionId}:${last}` } });
    expect(rejected.error?.message).toContain(ahead);
    // One cursor ahead is ahead too; the last cursor itself is not.
    const oneAhead = await host.request("session/resume", { sessionId, afterCursor: `v:${sessionId}:${last + 1}` });
    expect(oneAhead.error).toMatchObject({ code: -32602, data: { lastCursor: `v:${sessionId}:${last}` } });
    // A retry with the cursor the rejection named: accepted, nothing to replay.
    const atLast = await host.request("session/resume", { sessionId, afterCursor: String(rejected.error!.data!["lastCursor"]) });
    expect(atLast.result).toMatchObject({ status: "accepted", sessionId, replayed: 0 });
    // A retry from two back replays exactly the last two, in order.
    const twoBack = await host.request("session/resume", { sessionId, afterCursor: `v:${sessionId}:${last - 2}` });
    expect(twoBack.result).toMatchObject({ replayed: 2 });
    await host.waitFor((m) => m.method === "turn/completed" && m.params?.["viewCursor"] === `v:${sessionId}:${last}` && host.wire.indexOf(m) > before);
    const sent = host.wire.slice(before).filter((m) => m.method !== undefined);
    expect(sent.map((m) => m.params?.["viewCursor"])).toEqual([`v:${sessionId}:${last - 1}`, `v:${sessionId}:${last}`]);
    // The same commandId answers the same rejection (idempotency), and the session goes on.
    const again = await host.request("session/resume", { sessionId, afterCursor: ahead, commandId: "resume-ahead" });
    expect(again.error).toEqual(rejected.error);
    expect((await host.request("turn/start", { sessionId, input: [] })).result).toMatchObject({ status: "accepted" });
    expect(await host.stop()).toEqual({ code: 0, signal: null });
  });

  it("finding 6: through the SDK, a resume ahead of the host rejects with rpcError, and after a resume at lastCursor later notifications arrive in order", async () => {
    const data = tempDataDir();
    const { host } = startHost(model("hello.json"), data.dir);
    const problems: string[] = [];
    host.events.on("protocolError", (e) => problems.push(e.message));
    try {
      const { sessionId } = await host.command("session/create", {});
      await host.startTurn({ sessionId, input: [{ type: "text", text: "hi" }] }).completed;
      const last = host.lastViewCursor(sessionId)!;
      const n = Number(last.split(":").pop());
      const error = await host.command("session/resume", { sessionId, afterCursor: `v:${sessionId}:${n + 100}` }).catch((e: unknown) => e);
      expect(MspError.is(error) && error.kind === "rpcError").toBe(true);
      const data = (error as MspError<"rpcError">).data;
      expect(data.code).toBe(-32602);
      expect(data.data).toMatchObject({ lastCursor: last });
      // The refused resume leaves the connection's cursor where it was: no future cursor adopted.
      expect(host.lastViewCursor(sessionId)).toBe(last);
      const third = await host.startTurn({ sessionId, input: [{ type: "text", text: "still here" }] }).completed;
      expect(third.terminal).toBe("completed");
      expect(problems).toEqual([]);
      const resumed = await host.command("session/resume", { sessionId, afterCursor: host.lastViewCursor(sessionId)! });
      expect(resumed.replayed).toBe(0);
      const second = await host.startTurn({ sessionId, input: [{ type: "text", text: "again" }] }).completed;
      expect(second.terminal).toBe("completed");
      expect(Number(host.lastViewCursor(sessionId)!.split(":").pop())).toBeGreaterThan(n);
      expect(problems).toEqual([]);
    } finally {
      await host.close();
      data.remove();
    }
  });
});
