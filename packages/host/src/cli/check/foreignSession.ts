/**
 * Foreign sessions, checked on every scenario's wire: a connection hears only of sessions it
 * created or resumed (an accepted `session/create` or `session/resume` on it), so a notification
 * for any other session is a problem (docs/protocol.md, Notifications). A session linked below
 * one it hears (a delegating call's `subagent` patch, or a child turn's `turn/started`
 * naming a heard parent session) is heard too, from the link on. Each scenario runs on a fresh
 * connection, so its wire holds every session it may hear of.
 */
import type { WireLine } from "./checkWire.js";
import { paramsOf } from "./scenarioContext.js";

/**
 * The problems with notifications for sessions the connection never created or resumed, one per
 * such session, each starting `line <n>:`.
 */
export function foreignSessionProblems(lines: readonly WireLine[]): string[] {
  const problems: string[] = [];
  /** JSON-RPC id of a session/create or session/resume the client sent -> its method. */
  const asked = new Map<string, string>();
  const joined = new Set<string>();
  const reported = new Set<string>();
  for (const l of lines) {
    const message = l.message;
    if (message === undefined) continue;
    const method = message["method"];
    if (l.dir === "client") {
      if (method === "session/create" || method === "session/resume") asked.set(JSON.stringify(message["id"]), method);
      continue;
    }
    if (typeof method !== "string") {
      const result = message["result"];
      if (!asked.has(JSON.stringify(message["id"])) || typeof result !== "object" || result === null) continue;
      const sessionId = (result as Record<string, unknown>)["sessionId"];
      if (typeof sessionId === "string") joined.add(sessionId);
      continue;
    }
    const params = paramsOf(message);
    const sessionId = params["sessionId"];
    if (typeof sessionId === "string" && joined.has(sessionId)) {
      const linked = linkedSession(params["item"]);
      if (linked !== undefined) joined.add(linked);
      continue;
    }
    const parent = method === "turn/started" ? params["parent"] : undefined;
    const parentSession = typeof parent === "object" && parent !== null ? (parent as Record<string, unknown>)["sessionId"] : undefined;
    if (typeof sessionId === "string" && typeof parentSession === "string" && joined.has(parentSession)) {
      joined.add(sessionId);
      continue;
    }
    if (typeof sessionId !== "string" || reported.has(sessionId)) continue;
    reported.add(sessionId);
    problems.push(`line ${l.line}: ${method} for session ${sessionId}, which this connection neither created nor resumed (foreign session)`);
  }
  return problems;
}

/** The child session an item's `subagent` link names, if it names one. */
function linkedSession(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const link = (item as Record<string, unknown>)["subagent"];
  if (typeof link !== "object" || link === null) return undefined;
  const sessionId = (link as Record<string, unknown>)["sessionId"];
  return typeof sessionId === "string" ? sessionId : undefined;
}
