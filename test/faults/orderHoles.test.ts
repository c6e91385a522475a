/**
 * Finding 10 (issue 10), holes in the order checks, each from a real child host:
 * - a `turn/started` after that turn's `turn/completed` is a protocolError, not delivered;
 * - strict cursors: a viewCursor that is not MSP's `v:<sessionId>:<n>` is a protocolError and is
 *   not delivered, and never relaxes the check for the cursors after it (5, zzz, 3, zzz, 2 delivers 5 only);
 * - Content-Length headers that disagree lose the framing at once (whichever order they come in),
 *   so a pending command settles as connectionClosed instead of timing out; identical repeats are fine.
 */
import { describe, expect, it } from "vitest";
import { expectClosed, outcome, spawnFaulty, useFaultHarness, type Action } from "./harness.js";

useFaultHarness();

const SESSION = "0198f0aa-1111-7000-8000-0000000000aa";
const note = (method: string, cursor: string | number, params: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  method,
  params: { sessionId: SESSION, viewCursor: typeof cursor === "number" ? `v:${SESSION}:${cursor}` : cursor, emittedAtMs: 1, ...params },
});
const started = (turnId: string, cursor: string | number) => note("turn/started", cursor, { turnId });
const completed = (turnId: string, cursor: string | number) =>
  note("turn/completed", cursor, { turnId, terminal: "completed", reason: "completed", durationMs: 1 });

/** Play `sends` after the client's first command, then answer it: every notification before the answer has been handled once it resolves. */
async function play(sends: Action[]) {
  const host = spawnFaulty([["await", 1], ...sends, ["respond", 1, {}], ["hang"]]);
  const delivered: string[] = [];
  const problems: string[] = [];
  host.onNotification((n) => delivered.push(`${n.method} ${String(n.params?.["turnId"])} ${String(n.params?.["viewCursor"]).replace(`v:${SESSION}:`, "")}`));
  host.events.on("protocolError", (e) => problems.push(e.data.problem));
  await host.command("host/info", {}, { timeoutMs: 5_000 });
  return { delivered, problems };
}

describe("finding 10: order checks", () => {
  it("finding 10: a turn/started after that turn's turn/completed is a protocolError and is not delivered", async () => {
    const { delivered, problems } = await play([
      ["send", started("t", 1)],
      ["send", completed("t", 2)],
      ["send", started("t", 3)],
    ]);
    expect(delivered).toEqual(["turn/started t 1", "turn/completed t 2"]);
    expect(problems).toEqual(["turn/started for turn t after its turn/completed"]);
  });

  it("finding 10: strict cursors: 5, zzz, 3, zzz, 2 delivers only 5, and each of the others is a protocolError", async () => {
    const { delivered, problems } = await play([
      ["send", started("a", 5)],
      ["send", started("b", "zzz")],
      ["send", started("c", 3)],
      ["send", started("d", "zzz")],
      ["send", started("e", 2)],
    ]);
    expect(delivered).toEqual(["turn/started a 5"]);
    const malformed = `turn/started: viewCursor "zzz" is not a cursor of session ${SESSION} (v:<sessionId>:<n>)`;
    expect(problems).toEqual([
      malformed,
      `turn/started: viewCursor v:${SESSION}:3 does not follow v:${SESSION}:5`,
      malformed,
      `turn/started: viewCursor v:${SESSION}:2 does not follow v:${SESSION}:5`,
    ]);
  });

  it("finding 10: strict cursors: another session's cursor, a leading zero or a bare number is a protocolError too", async () => {
    const { delivered, problems } = await play([
      ["send", started("a", 1)],
      ["send", started("b", "v:0198f0aa-2222-7000-8000-0000000000bb:7")],
      ["send", started("c", `v:${SESSION}:07`)],
      ["send", started("d", "8")],
      ["send", started("e", 9)],
    ]);
    expect(delivered).toEqual(["turn/started a 1", "turn/started e 9"]);
    expect(problems).toHaveLength(3);
    for (const p of problems) expect(p).toMatch(/is not a cursor of session/);
  });

  const body = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, result: { status: "accepted", commandId: "c" } });
  const framed = (lengths: number[], text: string) => `${lengths.map((n) => `Content-Length: ${n}\r\n`).join("")}\r\n${text}`;

  for (const order of ["short, then long", "long, then short"]) {
    it(`finding 10: conflicting duplicate Content-Length headers (${order}) lose the framing: the command settles connectionClosed at once, not by timeout`, async () => {
      const text = body(1);
      const lengths = order === "short, then long" ? [10, text.length] : [text.length, 10];
      const host = spawnFaulty([["await", 1], ["raw", framed(lengths, text)], ["hang"]], { framing: "content-length" });
      const problems: string[] = [];
      host.events.on("protocolError", (e) => problems.push(e.data.problem));
      const sent = performance.now();
      const r = await outcome(host.command("host/info", {}, { timeoutMs: 5_000 }));
      expect(expectClosed(r.error).data.reason).toBe("framing lost: conflicting Content-Length headers");
      expect(r.at - sent).toBeLessThan(2_000);
      expect(problems).toEqual(["framing: conflicting Content-Length headers"]);
    });
  }

  it("finding 10: identical duplicate Content-Length headers are accepted", async () => {
    const text = body(1);
    const host = spawnFaulty([["await", 1], ["raw", framed([text.length, text.length], text)], ["hang"]], { framing: "content-length" });
    const problems: string[] = [];
    host.events.on("protocolError", (e) => problems.push(e.data.problem));
    expect(await host.command("host/info", {}, { timeoutMs: 5_000 })).toMatchObject({ status: "accepted" });
    expect(problems).toEqual([]);
  });
});
