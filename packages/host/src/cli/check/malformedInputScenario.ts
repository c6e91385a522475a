/** The malformed-input scenario: each kind of bad JSON-RPC gets its standard error, and the host survives it. */
import { checkTranscript } from "@muse-code/sdk/testing";
import { QUICK } from "./directives.js";
import type { Scenario } from "./scenario.js";

/** One malformed message and the JSON-RPC 2.0 error it must get. */
interface Malformed {
  what: string;
  text: string;
  code: number;
  /** The id the error must carry: null, or the request's (null also allowed when the id could not be read). */
  id: string | null;
}

const MALFORMED: Malformed[] = [
  { what: "a truncated JSON text", text: '{"jsonrpc":"2.0","id":"msp-check-1","method":"host/info"', code: -32700, id: null },
  { what: "a line that is not JSON", text: "this is not JSON", code: -32700, id: null },
  { what: "a request without a method", text: '{"jsonrpc":"2.0","id":"msp-check-2","params":{}}', code: -32600, id: "msp-check-2" },
  { what: 'a request with jsonrpc "1.0"', text: '{"jsonrpc":"1.0","id":"msp-check-3","method":"host/info","params":{}}', code: -32600, id: "msp-check-3" },
  { what: "an empty batch", text: "[]", code: -32600, id: null },
  {
    what: "a method the host does not have",
    text: '{"jsonrpc":"2.0","id":"msp-check-4","method":"msp-check/no-such-method","params":{}}',
    code: -32601,
    id: "msp-check-4",
  },
];

export const malformedInput: Scenario = {
  name: "malformed input",
  async run(ctx) {
    for (const bad of MALFORMED) {
      const before = ctx.wire.sendRaw(bad.text);
      ctx.step(`waiting for the JSON-RPC error answering ${bad.what}`);
      const answer = await ctx.wire.waitFor((m) => !("method" in m) && (m["id"] === null || m["id"] === bad.id), before);
      const message = answer.message as Record<string, unknown>;
      const error = message["error"] as Record<string, unknown> | undefined;
      ctx.expect(
        error?.["code"] === bad.code,
        `${bad.what} must be answered with JSON-RPC error ${bad.code}, got ${error === undefined ? "no error" : JSON.stringify(error["code"])}`,
        [before + 1, answer.line],
      );
      ctx.expect(
        message["id"] === null || message["id"] === bad.id,
        `the answer to ${bad.what} must carry id ${JSON.stringify(bad.id)}, got ${JSON.stringify(message["id"])}`,
        [answer.line],
      );
    }
    // The host survives all of it.
    await ctx.settle();
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, QUICK);
    await ctx.terminal(turn.turnId);
  },
  checkWire(wire) {
    // The raw lines (and their answers) are this scenario's own, not JSON-RPC the transcript checker should read.
    const raw = new Set(MALFORMED.map((m) => m.text));
    return checkTranscript(
      wire.transcript((l) => {
        if (l.dir === "client") return !raw.has(l.raw);
        const id = l.message?.["id"];
        return "method" in (l.message ?? {}) || !(id === null || (typeof id === "string" && id.startsWith("msp-check-")));
      }),
    ).problems;
  },
};
