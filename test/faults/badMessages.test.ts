/**
 * Bad messages from a real child process: each one becomes exactly one typed `protocol` event
 * (`events.on("protocolError")`), every valid message after it still arrives in wire order, and
 * the connection closes only when framing itself is lost (a frame over maxMessageBytes).
 */
import { describe, expect, it } from "vitest";
import { MspError } from "../../src/index.js";
import { expectClosed, outcome, spawnFaulty, useFaultHarness, type Action } from "./harness.js";

useFaultHarness();

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
let cursor = 0;
const note = (method: string, params: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  method,
  params: { sessionId: SESSION, viewCursor: `v:${SESSION}:${++cursor}`, emittedAtMs: 1, ...params },
});
const started = (turnId: string) => note("turn/started", { turnId });
const completed = (turnId: string, extra: Record<string, unknown> = {}) =>
  note("turn/completed", { turnId, terminal: "completed", reason: "completed", durationMs: 1, ...extra });
const item = (turnId: string, extra: Record<string, unknown> = {}) => ({
  itemId: `${turnId}-i`,
  kind: "message",
  turnId,
  revision: 1,
  status: "inProgress",
  recordedAt: "x",
  text: "",
  ...extra,
});

/** Each case: the bad wire text (or actions), and the problem it must be reported as. */
const BAD: Array<{ name: string; actions: Action[]; problem: RegExp }> = [
  { name: "malformed JSON", actions: [["raw", "{not json\n"]], problem: /malformed JSON/ },
  { name: "truncated JSON", actions: [["raw", '{"jsonrpc":"2.0","method":"turn/started","params":{\n']], problem: /malformed JSON/ },
  { name: "non-object JSON: string", actions: [["raw", '"a string"\n']], problem: /must be a JSON object/ },
  { name: "non-object JSON: number", actions: [["raw", "42\n"]], problem: /must be a JSON object/ },
  { name: "non-object JSON: null", actions: [["raw", "null\n"]], problem: /must be a JSON object/ },
  { name: "non-object JSON: array (batch)", actions: [["raw", "[1,2]\n"]], problem: /batches/ },
  { name: "wrong jsonrpc version", actions: [["send", { ...started("x"), jsonrpc: "1.0" }]], problem: /jsonrpc must be "2.0"/ },
  { name: "missing jsonrpc", actions: [["raw", '{"method":"turn/started","params":{}}\n']], problem: /jsonrpc must be "2.0"/ },
  { name: "neither method nor id", actions: [["raw", '{"jsonrpc":"2.0","params":{}}\n']], problem: /method or an id/ },
  // (id 77 is no pending command's: a malformed answer to a PENDING command fails that command as `protocol`, tested in connectionRobustness)
  {
    name: "response with both result and error",
    actions: [["raw", '{"jsonrpc":"2.0","id":77,"result":{},"error":{"code":1,"message":"m"}}\n']],
    problem: /exactly one of result and error/,
  },
  { name: "response to an unknown id", actions: [["send", { jsonrpc: "2.0", id: 999, result: { status: "accepted" } }]], problem: /unknown id 999/ },
  { name: "response id 0 (we number from 1)", actions: [["send", { jsonrpc: "2.0", id: 0, result: { status: "accepted" } }]], problem: /unknown id 0/ },
  { name: 'response id ""', actions: [["send", { jsonrpc: "2.0", id: "", result: { status: "accepted" } }]], problem: /unknown id ""/ },
  { name: "response with a null id", actions: [["send", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }]], problem: /null id/ },
  { name: "a valid response (command 1)", actions: [["respond", 1, { name: "h" }]], problem: /__none__/ },
  {
    name: "duplicate turn/completed",
    actions: [
      ["send", completed("dup")],
      ["send", completed("dup")],
    ],
    problem: /second turn\/completed for turn dup/,
  },
  {
    name: "item/started after its turn's terminal",
    actions: [
      ["send", completed("done1")],
      ["send", note("item/started", { item: item("done1") })],
    ],
    problem: /after its turn\/completed/,
  },
  {
    name: "item/completed after its turn's terminal",
    actions: [
      ["send", completed("done2")],
      ["send", note("item/completed", { item: item("done2", { status: "completed" }) })],
    ],
    problem: /after its turn\/completed/,
  },
  {
    name: "turn/completed missing turnId",
    actions: [["send", note("turn/completed", { terminal: "completed", reason: "r" })]],
    problem: /turnId must be a string/,
  },
  {
    name: "turn/completed with a numeric turnId",
    actions: [["send", note("turn/completed", { turnId: 5, terminal: "completed" })]],
    problem: /turnId must be a string/,
  },
  { name: "turn/completed with an unknown terminal", actions: [["send", completed("weird", { terminal: "exploded" })]], problem: /terminal "exploded"/ },
  { name: "turn/completed with an ill-typed cause", actions: [["send", completed("cause", { cause: { kind: "martians" } })]], problem: /cause must be/ },
  {
    name: "turn/started missing sessionId",
    actions: [["send", { jsonrpc: "2.0", method: "turn/started", params: { viewCursor: "v", turnId: "t" } }]],
    problem: /sessionId must be a string/,
  },
  { name: "turn/started with array params", actions: [["send", { jsonrpc: "2.0", method: "turn/started", params: [1] }]], problem: /params must be an object/ },
  {
    name: "turn/started with string params",
    actions: [["raw", '{"jsonrpc":"2.0","method":"turn/started","params":"p"}\n']],
    problem: /params must be an object or an array/,
  },
  { name: "item/updated without an item", actions: [["send", note("item/updated", {})]], problem: /item must be an object/ },
  {
    name: "item with a string revision",
    actions: [["send", note("item/updated", { item: item("t", { revision: "2" }) })]],
    problem: /revision must be a number/,
  },
  { name: "item with an unknown kind", actions: [["send", note("item/started", { item: item("t", { kind: "poem" }) })]], problem: /item.kind "poem"/ },
  { name: "result that is not an object", actions: [["send", { jsonrpc: "2.0", id: 2, result: 42 }]], problem: /__reject__/ },
];

describe("bad messages from a real child", () => {
  it("each bad message is one typed protocol event and every valid message after it arrives in order", async () => {
    const actions: Action[] = [["await", 2]];
    const expectedGood: string[] = [];
    const expectedProblems: RegExp[] = [];
    BAD.forEach((bad, i) => {
      actions.push(...bad.actions);
      if (!/__reject__|__none__/.test(bad.problem.source)) expectedProblems.push(bad.problem);
      // A valid notification after every bad one: it must be delivered, in order.
      actions.push(["send", started(`ok-${i}`)]);
      expectedGood.push(`ok-${i}`);
    });
    actions.push(["send", completed("last")], ["hang"]);
    // Number the viewCursors in wire order, so only the intended problem is in each bad message.
    let wireCursor = 0;
    for (const action of actions) {
      const params = action[0] === "send" ? ((action[1] as Record<string, unknown>)["params"] as Record<string, unknown> | undefined) : undefined;
      if (params !== undefined && !Array.isArray(params) && typeof params["viewCursor"] === "string") params["viewCursor"] = `v:${SESSION}:${++wireCursor}`;
    }
    const host = spawnFaulty(actions);
    const problems: Array<MspError<"protocol">> = [];
    host.events.on("protocolError", (e) => problems.push(e));
    const handlerErrors: unknown[] = [];
    host.events.on("handlerError", (e) => handlerErrors.push(e));
    const good: string[] = [];
    host.onNotification((n) => {
      if (n.method === "turn/started") good.push(String(n.params?.["turnId"]));
    });
    const first = outcome(host.command("host/info", {}));
    const second = outcome(host.command("host/info", {}));
    await host.turns.terminalOf("last", { timeoutMs: 10_000 });

    expect(good).toEqual(expectedGood);
    expect(problems.map((p) => p.kind)).toEqual(expectedProblems.map(() => "protocol"));
    problems.forEach((p, i) => expect(String(p.data["problem"]), `problem #${i}`).toMatch(expectedProblems[i] as RegExp));
    expect((await first).value).toMatchObject({ name: "h" });
    // A non-object result rejects its own command as `protocol`, rather than becoming an event.
    expect(((await second).error as MspError).kind).toBe("protocol");
    expect(handlerErrors).toEqual([]);
    expect(host.isClosed).toBe(false);
    // The first terminal stands; the duplicate did not overwrite it.
    expect(host.turns.get("weird")).toBeUndefined();
    expect(host.turns.get("dup")?.turnId).toBe("dup");
  });

  // Regression: an answered command once moved into the "abandoned" table, so a duplicate response
  // read as a lateResponse (and answered ids were retained).
  it("a duplicate response is a protocol event, not a lateResponse", async () => {
    const host = spawnFaulty([["await", 1], ["respond", 1, { name: "h" }], ["respond", 1, { name: "again" }], ["send", completed("end")], ["hang"]]);
    const problems: Array<MspError<"protocol">> = [];
    const late: unknown[] = [];
    host.events.on("protocolError", (e) => problems.push(e));
    host.events.on("lateResponse", (r) => late.push(r));
    expect(await host.command("host/info", {})).toMatchObject({ name: "h" });
    await host.turns.terminalOf("end", { timeoutMs: 5_000 });
    expect(late).toEqual([]);
    expect(problems.map((p) => String(p.data["problem"]))).toEqual(["a response to unknown id 1"]);
    expect(host.isClosed).toBe(false);
  });

  // "turn/completed for an unknown turn": in a session this client follows (it sent commands
  // there) and has not resumed, a terminal for a turn it never started, cancelled or saw is a
  // protocol event; it is still recorded, so a waiter never misses it. A terminal in a session the
  // client does not follow (another client's, a broadcast) is not the client's to judge.
  it("a turn/completed for a turn this client never saw, in a session it follows, is reported and still recorded", async () => {
    const host = spawnFaulty([
      ["await", 1],
      ["respond", 1, { commandId: "c", turnId: "mine" }],
      ["send", completed("mine")],
      ["send", completed("stranger")],
      ["send", completed("after")],
      ["hang"],
    ]);
    const problems: Array<MspError<"protocol">> = [];
    host.events.on("protocolError", (e) => problems.push(e));
    await host.command("turn/cancel", { sessionId: SESSION, turnId: "mine" });
    await host.turns.terminalOf("after", { timeoutMs: 5_000 });
    expect(host.turns.get("stranger")?.terminal).toBe("completed");
    expect(problems.map((p) => String(p.data["problem"]))).toEqual([
      `turn/completed for turn stranger, which this connection never started, cancelled or saw in session ${SESSION}`,
      `turn/completed for turn after, which this connection never started, cancelled or saw in session ${SESSION}`,
    ]);
  });

  it("a turn/completed in a session this client does not follow is recorded and not judged", async () => {
    const host = spawnFaulty([["send", completed("stranger")], ["send", completed("after")], ["hang"]]);
    const problems: Array<MspError<"protocol">> = [];
    host.events.on("protocolError", (e) => problems.push(e));
    await host.turns.terminalOf("after", { timeoutMs: 5_000 });
    expect(host.turns.get("stranger")?.terminal).toBe("completed");
    expect(problems).toEqual([]);
  });

  for (const framing of ["ndjson", "content-length"] as const) {
    it(`${framing}: a frame over maxMessageBytes is one protocol event, then the connection closes and pending work settles`, async () => {
      const big = JSON.stringify(started("x".repeat(10_000)));
      const good = JSON.stringify(started("before"));
      const wire =
        framing === "ndjson"
          ? `${good}\n${big}\n${good}\n`
          : `Content-Length: ${Buffer.byteLength(good)}\r\n\r\n${good}Content-Length: ${Buffer.byteLength(big)}\r\n\r\n${big}`;
      const host = spawnFaulty([["await", 1], ["raw", wire], ["hang"]], { framing, maxMessageBytes: 4_096 });
      const problems: Array<MspError<"protocol">> = [];
      host.events.on("protocolError", (e) => problems.push(e));
      const seen: string[] = [];
      host.onNotification((n) => seen.push(String(n.params?.["turnId"])));
      const results = await Promise.all([outcome(host.command("host/info", {})), outcome(host.turns.terminalOf("t", { timeoutMs: Infinity }))]);
      for (const r of results) expect(String(expectClosed(r.error).data["reason"])).toMatch(/framing lost: .*maxMessageBytes/);
      expect(seen).toEqual(["before"]);
      expect(problems).toHaveLength(1);
      expect(problems[0]?.kind).toBe("protocol");
      expect(String(problems[0]?.data["problem"])).toMatch(/maxMessageBytes/);
    });
  }

  it("content-length: a bad body is a protocol event; framing holds and later frames arrive", async () => {
    const frame = (text: string) => `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
    const wire = [frame("{oops"), frame('"str"'), frame(JSON.stringify(started("ü-🌍"))), frame(JSON.stringify(completed("end")))].join("");
    const host = spawnFaulty([["raw", wire], ["hang"]], { framing: "content-length" });
    const problems: Array<MspError<"protocol">> = [];
    host.events.on("protocolError", (e) => problems.push(e));
    const seen: string[] = [];
    host.onNotification((n) => seen.push(String(n.params?.["turnId"])));
    await host.turns.terminalOf("end", { timeoutMs: 5_000 });
    expect(seen).toEqual(["ü-🌍", "end"]);
    expect(problems.map((p) => p.kind)).toEqual(["protocol", "protocol"]);
    expect(host.isClosed).toBe(false);
  });
});
