/**
 * The shutdown scenario: a turn whose tool runs, and the host's process gets SIGTERM. The host
 * shutting down ends the running turn `cancelled` with `cause.kind: "disposed"` (docs/protocol.md,
 * Notifications), then closes its stdout and exits 0 (`muse-host serve --stdio`: running turns
 * cancelled, tools drained). It runs only where the check spawned the host: over a WebSocket the
 * check has no process to signal, and the scenario is reported "not run". The check signals the
 * process it spawned, not its group: a wrapper passes the signal on once (a host told twice stops
 * draining); one that exits without passing it on, leaving the host running, fails naming it.
 */
import type { HostExit } from "@muse-code/sdk/node";
import { LONG_TOOL } from "./directives.js";
import type { Scenario } from "./scenario.js";
import { paramsOf } from "./scenarioContext.js";

/** How long a process of the host's group may take to be gone after the host exits. @unit milliseconds */
const REAP_MS = 200;

function describeExit(exit: HostExit): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.exitCode)}`;
}

export const shutdownMidTool: Scenario = {
  name: "shutdown mid-tool",
  needsSpawnedHost: true,
  async run(ctx) {
    const spawned = ctx.spawned;
    if (spawned === undefined) throw new Error("shutdown mid-tool needs the host's process (the check did not spawn the host)");
    const sessionId = await ctx.session();
    const turn = await ctx.start(sessionId, LONG_TOOL);
    const running = await ctx.item(
      turn.turnId,
      (method, item) =>
        method === "item/delta"
          ? item["field"] === "visibleOutput"
          : method === "item/updated" && typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== "",
      "the tool call's first output (an item/delta of its visibleOutput)",
    );
    // The host shuts down: SIGTERM to its process, as a supervisor would.
    ctx.shutdownAfter = ctx.wire.lines.length;
    const signalled = ctx.shutdownAfter;
    spawned.signal("SIGTERM");
    ctx.step(`waiting for the host to close its stdout after SIGTERM (sent after line ${signalled})`);
    await ctx.client.closed;
    ctx.step(`waiting for the host's process to exit after SIGTERM (sent after line ${signalled}) and the end of its stdout`);
    const exit = await spawned.exited;
    // The process the check signalled is gone, and others of its group live on (past a moment for the dying to be reaped): it wrapped the host, and kept the signal.
    let leftBehind = spawned.groupAlive?.() === true;
    if (leftBehind) {
      await new Promise((resolve) => setTimeout(resolve, REAP_MS));
      leftBehind = spawned.groupAlive?.() === true;
    }
    if (leftBehind) {
      ctx.fail(
        `the process the check spawned ${describeExit(exit)} after SIGTERM (sent after line ${signalled}), leaving processes of its group running: the command is a wrapper (npx, a shell script, a supervisor) that did not pass SIGTERM on to the host it runs, or did not wait for it to exit (docs/checkable-hosts.md, "Behind a wrapper")`,
        [running.line],
      );
    }
    const lastLine = ctx.wire.lines.at(-1)?.line;
    const terminals = ctx.wire.lines.filter(
      (l) => l.dir === "server" && l.message?.["method"] === "turn/completed" && paramsOf(l.message)["turnId"] === turn.turnId,
    );
    const [terminal] = terminals;
    if (terminal === undefined) {
      ctx.fail(
        `the host closed its stdout without a turn/completed for turn ${turn.turnId}, whose tool was running when the host got SIGTERM (after line ${signalled}): missing its terminal "cancelled" with cause.kind "disposed" (a host shutting down ends each running turn so)`,
        [running.line, lastLine],
      );
    } else {
      ctx.expect(
        terminals.length === 1,
        `turn ${turn.turnId} got ${terminals.length} turn/completed after SIGTERM; a turn ends exactly once`,
        terminals.map((l) => l.line),
      );
      const params = paramsOf(terminal.message ?? {});
      // A "cancelled" terminal's cause is the cancel-cause rule's (it must be "disposed" after a shutdown).
      ctx.expect(
        params["terminal"] === "cancelled",
        `the turn running when the host got SIGTERM (after line ${signalled}) must end "cancelled" with cause.kind "disposed", it ended ${JSON.stringify(params["terminal"])}`,
        [terminal.line],
      );
    }
    const finalMessage = ctx.completedItems(turn.turnId).find((i) => i.item["text"] === "The tool finished.");
    ctx.expect(finalMessage === undefined, "the step after the tool call the shutdown stopped must not run", [finalMessage?.line]);
    ctx.expect(
      exit.signal === null && exit.exitCode === 0,
      `after SIGTERM, a host ends its running turns, closes its stdout and exits 0; this host ${describeExit(exit)}`,
      [lastLine],
    );
  },
};
