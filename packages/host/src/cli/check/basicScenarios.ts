/** The first two scenarios: the host says who it is and offers the checked model (msp-check, or `--model`), and a directed turn runs to its end. */
import type { Scenario } from "./scenario.js";
import { paramsOf } from "./scenarioContext.js";

/** "host info": `host/info` names the host, its version and protocol, and offers the check's model; without it no other scenario runs. */
export const hostInfo: Scenario = {
  name: "host info",
  async run(ctx) {
    const info = await ctx.command("host/info", {});
    for (const field of ["name", "version", "protocolVersion"]) {
      ctx.expect(typeof info[field] === "string" && info[field] !== "", `host/info: the result needs a non-empty ${field}`, [ctx.wire.lines.at(-1)?.line]);
    }
    const models = Array.isArray(info["models"]) ? (info["models"] as unknown[]) : [];
    const ids = models.map((m) => (typeof m === "object" && m !== null ? (m as Record<string, unknown>)["id"] : m));
    ctx.expect(
      ids.includes(ctx.model),
      `host/info lists no model "${ctx.model}" (it lists ${JSON.stringify(ids)}): the host is not checkable; see docs/checkable-hosts.md`,
      [ctx.wire.lines.at(-1)?.line],
    );
  },
};

/** "start and complete": a turn of reasoning and text starts, shows both items with the directed text, and ends `completed`. */
export const startAndComplete: Scenario = {
  name: "start and complete",
  async run(ctx) {
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, [{ reasoning: "The user wants a greeting.", text: "Hello from muse check.", chunkSize: 5, chunkDelayMs: 5 }]);
    ctx.expect(turn.disposition === "started", `turn/start on an idle session: disposition must be "started", got ${JSON.stringify(turn.disposition)}`, [
      turn.ackLine,
    ]);
    const started = await ctx.wire.waitFor((m) => m["method"] === "turn/started" && paramsOf(m)["turnId"] === turn.turnId);
    const terminal = await ctx.terminal(turn.turnId);
    ctx.expect(terminal.params["terminal"] === "completed", `the turn must complete, it ended ${JSON.stringify(terminal.params["terminal"])}`, [terminal.line]);
    const items = ctx.completedItems(turn.turnId);
    const message = items.find((i) => i.item["kind"] === "message");
    ctx.expect(
      message?.item["text"] === "Hello from muse check." && message.item["status"] === "completed",
      `the turn's message must complete with the directed text "Hello from muse check.", got ${message === undefined ? "no message item/completed" : JSON.stringify(message.item["text"])}`,
      [message?.line, terminal.line],
    );
    const reasoning = items.find((i) => i.item["kind"] === "reasoning");
    ctx.expect(reasoning?.item["text"] === "The user wants a greeting.", "the turn's reasoning item must complete with the directed reasoning", [
      reasoning?.line,
    ]);
    const firstItem = ctx.wire.lines.find((l) => {
      if (l.dir !== "server" || typeof l.message?.["method"] !== "string" || !l.message["method"].startsWith("item/")) return false;
      const params = paramsOf(l.message);
      const named = (l.message["method"] === "item/delta" ? params : params["item"]) as Record<string, unknown> | undefined;
      return named?.["turnId"] === turn.turnId;
    });
    ctx.expect(firstItem === undefined || started.line < firstItem.line, "turn/started must come before the turn's first item", [
      started.line,
      firstItem?.line,
    ]);
    await ctx.settle();
  },
};
