/**
 * The streaming scenario (MSP 2.0): a long message and a tool's output arrive as `item/delta`
 * appends, and what the client folds from them, link by link, is the directed text and the
 * output the tool call completes with. Invariants A and B are checked on its wire, as on every
 * scenario's; this one also says what the client made of the stream.
 */
import type { ItemDeltaEvent, ItemNotificationParams, LedgerItem, MspError } from "@muse-code/sdk";
import type { WireLine } from "./checkWire.js";
import { STREAMED, STREAMED_TEXT } from "./directives.js";
import type { Scenario } from "./scenario.js";
import type { ScenarioContext } from "./scenarioContext.js";

/** How much of a text a finding quotes. @unit UTF-16 code units */
const EXCERPT = 24;

/** Where `got` and `want` first differ, as a phrase: `from character 7 it has "…" where the directive has "…"`. */
function difference(got: string, want: string): string {
  let i = 0;
  while (i < got.length && i < want.length && got.charCodeAt(i) === want.charCodeAt(i)) i++;
  const quote = (text: string) => JSON.stringify(text.length > i + EXCERPT ? `${text.slice(i, i + EXCERPT)}…` : text.slice(i));
  return `from character ${i + 1} it has ${quote(got)} where the directive has ${quote(want)}`;
}

/** The wire line of a message the client reported (a protocol error's offending message). */
function lineOf(lines: readonly WireLine[], message: unknown): number | undefined {
  if (message === undefined) return undefined;
  const text = JSON.stringify(message);
  return lines.find((l) => l.dir === "server" && l.message !== undefined && JSON.stringify(l.message) === text)?.line;
}

/** The client's view of the stream: each item as folded before its completion, and what it could not fold. */
function watch(ctx: ScenarioContext): { folded: Map<string, LedgerItem>; refused: MspError<"protocol">[]; stop: () => void } {
  const folded = new Map<string, LedgerItem>();
  const refused: MspError<"protocol">[] = [];
  const onChange = ({ item }: ItemDeltaEvent | ItemNotificationParams) => void folded.set(item.itemId, item);
  const onError = (error: MspError<"protocol">) => {
    const method = (error.data.message as { method?: unknown } | undefined)?.method;
    if (typeof method === "string" && method.startsWith("item/")) refused.push(error);
  };
  const events = ctx.client.events;
  events.on("item/delta", onChange);
  events.on("item/updated", onChange);
  events.on("protocolError", onError);
  return {
    folded,
    refused,
    stop: () => {
      events.off("item/delta", onChange);
      events.off("item/updated", onChange);
      events.off("protocolError", onError);
    },
  };
}

/**
 * "streamed deltas": a turn of {@link STREAMED}; what the client folds of its message and tool
 * output is checked against the directive and the completions (see docs/checkable-hosts.md).
 */
export const streamedDeltas: Scenario = {
  name: "streamed deltas",
  async run(ctx) {
    const sessionId = await ctx.session();
    const client = watch(ctx);
    try {
      const turn = await ctx.start(sessionId, STREAMED);
      const terminal = await ctx.terminal(turn.turnId);
      await ctx.settle();
      ctx.expect(terminal.params["terminal"] === "completed", `the streamed turn must complete, it ended ${JSON.stringify(terminal.params["terminal"])}`, [
        terminal.line,
      ]);
      const first = client.refused[0];
      ctx.expect(
        first === undefined,
        `the client could not fold ${client.refused.length} of the host's item notifications (it applies none it cannot fold); the first: ${first?.data.problem ?? ""}`,
        [lineOf(ctx.wire.lines, first?.data.message)],
      );
      const completed = ctx.completedItems(turn.turnId);
      const message = completed.find((c) => c.item["kind"] === "message");
      if (!ctx.expect(message !== undefined, "the streamed turn's message never got its item/completed", [terminal.line]) || message === undefined) return;
      const itemId = message.item["itemId"];
      const deltas = ctx.wire.lines.filter(
        (l) => l.dir === "server" && l.message?.["method"] === "item/delta" && (l.message["params"] as Record<string, unknown>)["itemId"] === itemId,
      );
      ctx.expect(
        deltas.length > 0,
        `the ${STREAMED_TEXT.length}-character message came with no item/delta: a streamed message arrives as item/delta appends (MSP 2.0)`,
        [message.line],
      );
      const streamed = client.folded.get(String(itemId));
      const text = streamed !== undefined && "text" in streamed ? streamed.text : "";
      if (deltas.length > 0) {
        ctx.expect(
          text === STREAMED_TEXT,
          `the message the client folded from its item/delta appends, before its item/completed, is not the directed text: ${difference(text, STREAMED_TEXT)}`,
          [deltas.at(-1)?.line, message.line],
        );
      }
      const final = String(message.item["text"]);
      ctx.expect(final === STREAMED_TEXT, `the message completed with text that is not the directed text: ${difference(final, STREAMED_TEXT)}`, [message.line]);
      const tool = completed.find((c) => c.item["kind"] === "toolCall");
      const output = typeof tool?.item["visibleOutput"] === "string" ? tool.item["visibleOutput"] : "";
      ctx.expect(tool?.item["status"] === "completed" && output !== "", "the tool call must complete with its output", [tool?.line, terminal.line]);
      const toolFold = tool === undefined ? undefined : client.folded.get(String(tool.item["itemId"]));
      const before = toolFold !== undefined && "visibleOutput" in toolFold ? toolFold.visibleOutput : "";
      ctx.expect(
        output.startsWith(before),
        `the tool output the client folded from its item/delta appends (${before.length} characters) is not a prefix of the output its item/completed carries`,
        [tool?.line],
      );
    } finally {
      client.stop();
    }
  },
};
