/**
 * checkPart: checks one connection's lines of a transcript: JSON-RPC 2.0 well-formedness, each
 * response matched to its request, results and rejections (invariant 4), and hands host
 * notifications and approvals to their invariant checks. JSON-RPC ids are per connection.
 */
import { COMMAND_REJECTED_CODE, HostRequests, RejectionReasons, isObject } from "@muse-code/protocol";
import { checkApprovalAnswer, checkToolApprove, type HostRequest } from "./approvalInvariant.js";
import { seedItems } from "./itemChain.js";
import { hearResumedTree, seedLinks } from "./subagentInvariant.js";
import type { SessionHistory } from "./transcriptHistory.js";
import { noteCancelAccepted, noteCancelSent, noteSteerAccepted } from "./steeringInvariant.js";
import { checkCancelCause, checkNotification } from "./turnLifecycle.js";

/** One parsed line of a transcript. */
export interface ParsedLine {
  line: number;
  dir: "client" | "server";
  message: Record<string, unknown>;
}

interface Request {
  line: number;
  method: string;
  params: Record<string, unknown>;
  answeredAt?: number;
}

function isId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** Check one part (one connection) of a transcript, parsed, into `history`, pushing each problem to `problems`. */
export function checkPart(lines: readonly ParsedLine[], part: number, label: (line: number) => string, history: SessionHistory, problems: string[]): void {
  const requests = new Map<string, Request>();
  const hostRequests = new Map<string, HostRequest>();
  const at = label;
  for (const { line, dir, message } of lines) {
    const here = at(line);
    const say = (problem: string) => problems.push(`${here}: ${problem}`);
    if (message["jsonrpc"] !== "2.0") say(`jsonrpc must be "2.0", got ${JSON.stringify(message["jsonrpc"]) ?? "nothing"}`);
    const hasMethod = "method" in message;
    const hasId = "id" in message;
    if (hasMethod) {
      const method = message["method"];
      if (typeof method !== "string" || method === "") {
        say("method must be a non-empty string");
        continue;
      }
      const params = message["params"];
      if (params !== undefined && !isObject(params) && !Array.isArray(params)) say(`${method}: params must be an object or an array`);
      if (hasId) {
        // A request.
        if (!isId(message["id"])) {
          say(`${method}: a request id must be a string or a number, got ${JSON.stringify(message["id"])}`);
          continue;
        }
        if (dir === "server") {
          if (method !== HostRequests.toolApprove) say(`${method}: the host sent a request; the only request MSP hosts send is tool/approve`);
          else {
            const sessionId = isObject(params) ? params["sessionId"] : undefined;
            const own = history.connectionSessions;
            if (own !== undefined && typeof sessionId === "string" && !own.has(sessionId)) {
              say(`${method} for session ${sessionId}, which this connection did not create or resume (a foreign session)`);
            }
            checkToolApprove(message, isObject(params) ? params : undefined, line, at, history, hostRequests, say);
          }
          continue;
        }
        const key = JSON.stringify(message["id"]);
        const earlier = requests.get(key);
        if (earlier !== undefined && earlier.answeredAt === undefined)
          say(`${method}: request id ${key} is still in use by the request at ${at(earlier.line)}`);
        requests.set(key, { line, method, params: isObject(params) ? params : {} });
        // A resumed session's replay may come before the answer: the session is this connection's from the request on.
        if (method === "session/resume" && isObject(params) && typeof params["sessionId"] === "string") history.connectionSessions?.add(params["sessionId"]);
        if (method === "session/resume" && isObject(params)) hearResumedTree(params, history);
        if (method === "turn/cancel" && isObject(params) && typeof params["turnId"] === "string") {
          history.cancelSent.add(params["turnId"]);
          history.connectionCancels.add(params["turnId"]);
          noteCancelSent(history.steering, params["turnId"], params["keepInbox"]);
        }
        continue;
      }
      // A notification.
      if (dir === "client") continue; // MSP defines none; JSON-RPC allows them
      checkNotification(method, isObject(params) ? params : undefined, here, part, history, say);
      continue;
    }
    // A response.
    if (!hasId) {
      say("a message needs a method (request or notification) or an id (response)");
      continue;
    }
    const hasResult = "result" in message;
    const hasError = "error" in message;
    if (hasResult === hasError) {
      say(`a response must have exactly one of result and error, it has ${hasResult ? "both" : "neither"}`);
      continue;
    }
    if (dir === "client") {
      checkApprovalAnswer(message, at, history, hostRequests, line, say);
      continue;
    }
    const id = message["id"];
    if (id === null) {
      if (!hasError) say("a response with a null id must be an error");
      continue;
    }
    const key = JSON.stringify(id);
    const request = requests.get(key);
    if (request === undefined) {
      // A transcript with gaps may have left the request out.
      if (!history.gaps) say(`response to id ${key} matches no earlier client request`);
      continue;
    }
    if (request.answeredAt !== undefined) {
      say(`a second response to id ${key} (${request.method}); the first was at ${at(request.answeredAt)}`);
      continue;
    }
    request.answeredAt = line;
    const commandId = request.params["commandId"];
    if (hasResult) checkResult(request, message["result"], commandId, here, part, history, say);
    else checkError(request, message["error"], commandId, here, history, say);
  }
}

function checkResult(
  request: Request,
  result: unknown,
  commandId: unknown,
  here: string,
  part: number,
  history: SessionHistory,
  say: (p: string) => void,
): void {
  if (!isObject(result)) return say(`${request.method}: the result must be an object`);
  if (result["status"] !== "accepted") say(`${request.method}: the result's status must be "accepted", got ${JSON.stringify(result["status"]) ?? "nothing"}`);
  if (typeof result["commandId"] !== "string") say(`${request.method}: the result must carry the commandId`);
  else if (typeof commandId === "string" && result["commandId"] !== commandId) {
    say(`${request.method}: the result's commandId ${result["commandId"]} is not the request's ${commandId}`);
  }
  if (request.method === "turn/start") {
    const turnId = result["turnId"];
    if (typeof turnId !== "string") return say("turn/start: an accepted turn/start must carry a turnId");
    if (!history.accepted.has(turnId)) history.accepted.set(turnId, { at: here, part });
  }
  if (request.method === "turn/cancel" && typeof request.params["turnId"] === "string") {
    const turnId = request.params["turnId"];
    history.cancelAccepted.set(turnId, here);
    noteCancelAccepted(history.steering, turnId, request.params["keepInbox"], history.turnsBegun.has(turnId) && !history.terminals.has(turnId), here);
    const ended = history.terminals.get(turnId);
    // The terminal came first: check its cause now (a terminal after this line is checked as it comes).
    if (ended?.params !== undefined) {
      const where = (p: string) => `${p} (its turn/completed is at ${ended.at})`;
      checkCancelCause(
        turnId,
        ended.params,
        here,
        (p) => say(where(p)),
        (p) => history.notes.push(`${here}: ${where(p)}`),
      );
    }
  }
  if (request.method === "turn/steer" && typeof result["turnId"] === "string" && typeof result["steerId"] === "string") {
    noteSteerAccepted(history.steering, result["steerId"], result["turnId"], here, part, history.terminals, say);
  }
  const sessionId = result["sessionId"];
  if (typeof sessionId !== "string") return;
  // A session created here is seen from its start; a resume after a cursor lists the items in progress there.
  if (request.method === "session/create") {
    history.sessions.set(sessionId, true);
    history.connectionSessions?.add(sessionId);
    history.sessionsFromStart.add(sessionId);
  }
  if (request.method === "session/resume" && request.params["afterCursor"] !== undefined) seedItems(sessionId, result["items"], here, part, history, say);
  if (request.method === "session/resume") seedLinks(sessionId, result["items"], here, history);
}

function checkError(request: Request, error: unknown, commandId: unknown, here: string, history: SessionHistory, say: (p: string) => void): void {
  // A refused resume leaves the session foreign to this connection.
  if (request.method === "session/resume" && typeof request.params["sessionId"] === "string") history.connectionSessions?.delete(request.params["sessionId"]);
  if (!isObject(error) || typeof error["code"] !== "number" || typeof error["message"] !== "string") {
    return say(`${request.method}: error must be {code: number, message: string, data?}`);
  }
  if (error["code"] !== COMMAND_REJECTED_CODE) return;
  const data = error["data"];
  if (!isObject(data) || typeof data["reason"] !== "string") return say(`${request.method}: a -32001 rejection needs data {commandId, reason, …}`);
  if (typeof commandId === "string" && data["commandId"] !== commandId)
    say(`${request.method}: the rejection's data.commandId is not the request's ${commandId}`);
  if (data["reason"] !== RejectionReasons.alreadyTerminal) return;
  // Invariant 4.
  const turnId = data["turnId"] ?? request.params["turnId"];
  if (typeof turnId !== "string") return say(`${request.method}: an already_terminal rejection needs data.turnId`);
  const terminal = history.terminals.get(turnId);
  if (terminal === undefined) {
    // A transcript with gaps may have left the terminal out before the rejection: only a terminal after it contradicts invariant 4.
    if (history.gaps) return void history.earlyRejections.set(turnId, here);
    return say(`already_terminal rejection for turn ${turnId} before that turn's turn/completed (invariant 4)`);
  }
  if (data["terminal"] !== undefined && data["terminal"] !== terminal.terminal) {
    say(
      `already_terminal rejection says terminal ${JSON.stringify(data["terminal"])}, but turn ${turnId} ended ${JSON.stringify(terminal.terminal)} at ${terminal.at}`,
    );
  }
}
