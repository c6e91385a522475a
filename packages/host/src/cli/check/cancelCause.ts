/**
 * The cause of a cancelled terminal, checked on every scenario's wire: a turn the client's
 * `turn/cancel` stopped (the turn it named, or a queued turn of its session it discarded) ends
 * `cancelled` with `cause.kind: "user"`; a turn a host shutting down stopped ends `cancelled`
 * with `cause.kind: "disposed"` (docs/protocol.md, Notifications). Only "shutdown mid-tool"
 * shuts the host down (SIGTERM to the host's process); on every other wire a `"disposed"` after
 * the client's `turn/cancel` is a problem. A cancelled terminal with no `cause` at all is not a
 * wrong cause: it is a note, not a problem.
 */
import type { WireLine } from "./checkWire.js";
import { paramsOf } from "./scenarioContext.js";

/**
 * The problems with the causes of the cancelled `turn/completed` on `lines`, each starting
 * `line <n>:`. `shutdownAfter`, when the scenario shut the host down, is the number of wire lines
 * recorded before it signalled the host: a cancelled terminal after that, in a session the client
 * sent no `turn/cancel` to, must say `cause.kind: "disposed"`. A cancelled terminal with no
 * `cause` where either rule applies goes to `notes` (each `line <n>: …`) instead.
 */
export function cancelCauseProblems(lines: readonly WireLine[], shutdownAfter?: number, notes: string[] = []): string[] {
  const problems: string[] = [];
  /** sessionId -> the line of the client's first turn/cancel of that session so far. */
  const cancels = new Map<string, number>();
  for (const l of lines) {
    const message = l.message;
    if (message === undefined) continue;
    const params = paramsOf(message);
    const sessionId = String(params["sessionId"]);
    if (l.dir === "client" && message["method"] === "turn/cancel") {
      if (!cancels.has(sessionId)) cancels.set(sessionId, l.line);
      continue;
    }
    if (l.dir !== "server" || message["method"] !== "turn/completed" || params["terminal"] !== "cancelled") continue;
    const cause = params["cause"];
    const kind = typeof cause === "object" && cause !== null ? (cause as Record<string, unknown>)["kind"] : undefined;
    const cancelLine = cancels.get(sessionId);
    const turn = `turn/completed of turn ${String(params["turnId"])} is "cancelled" with no cause`;
    if (cancelLine !== undefined) {
      if (kind === "user") continue;
      if (cause === undefined) {
        notes.push(`line ${l.line}: ${turn} after the client's turn/cancel at line ${cancelLine}: a host that sends a cause says "user" here (cancel cause)`);
        continue;
      }
      problems.push(
        `line ${l.line}: turn/completed of turn ${String(params["turnId"])} is "cancelled" after the client's turn/cancel at line ${cancelLine}, with cause ${JSON.stringify(cause) ?? "missing"}: a turn a user's turn/cancel stopped says cause.kind "user" ("disposed" is a host shutting down) (cancel cause)`,
      );
      continue;
    }
    if (shutdownAfter === undefined || l.line <= shutdownAfter || kind === "disposed") continue;
    if (cause === undefined) {
      notes.push(
        `line ${l.line}: ${turn} after the check shut the host down (SIGTERM after line ${shutdownAfter}): a host that sends a cause says "disposed" here (cancel cause)`,
      );
      continue;
    }
    problems.push(
      `line ${l.line}: turn/completed of turn ${String(params["turnId"])} is "cancelled" after the check shut the host down (SIGTERM after line ${shutdownAfter}), with cause ${JSON.stringify(cause) ?? "missing"}, and the client sent no turn/cancel: a turn a host shutting down stopped says cause.kind "disposed" ("user" is a user's turn/cancel) (cancel cause)`,
    );
  }
  return problems;
}
