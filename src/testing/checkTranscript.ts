/**
 * checkTranscript: verifies a wire transcript is well-formed JSON-RPC 2.0 and keeps MSP's
 * invariants 1–6 (ARCHITECTURE.md): one terminal per accepted turn, items closed before their
 * turn's terminal, nothing after a terminal, `already_terminal` only after the terminal,
 * `viewCursor` strictly increasing per session, and a tool call whose item was
 * `approval: "pending"` runs only after an `approve`, with every `tool/approve` answered at most once.
 */
import {
  ApprovalDecisions,
  ApprovalStates,
  COMMAND_REJECTED_CODE,
  HostRequests,
  Notifications,
  RejectionReasons,
  isObject,
  parseViewCursor,
  problemWithApprovalAnswer,
  problemWithNotification,
  problemWithToolApprove,
} from "../protocol/index.js";
import { readTranscriptRows, type TranscriptLine } from "./transcript.js";

/**
 * Options of {@link checkTranscript}.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const { ok, problems } = checkTranscript(readFileSync("excerpt.jsonl", "utf8"), { excerpt: true });
 * ```
 */
export interface CheckTranscriptOptions {
  /**
   * The transcript is an excerpt of a longer exchange: a turn accepted in it may end after the
   * excerpt does, and an item started in it may complete later. Without this, an accepted turn
   * with no `turn/completed` is a problem (invariant 1). Duplicates are problems either way.
   * @defaultValue false
   */
  excerpt?: boolean;
}

/**
 * The verdict of {@link checkTranscript}: `ok` when `problems` is empty.
 *
 * @example
 * ```ts
 * const check: TranscriptCheck = checkTranscript(readTranscript("transcripts/cancel-race.jsonl"));
 * if (!check.ok) throw new Error(check.problems.join("\n"));
 * ```
 */
export interface TranscriptCheck {
  ok: boolean;
  /** One sentence per problem, each starting with `line <n>:` (1-based). */
  problems: string[];
}

/**
 * What {@link checkTranscript} accepts: the text, its lines, or parsed lines.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const input: TranscriptInput = readFileSync("transcripts/cancel-race.jsonl", "utf8");
 * checkTranscript(input);
 * ```
 */
export type TranscriptInput = string | readonly string[] | readonly TranscriptLine[];

interface Parsed {
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

/**
 * Session-level state, which survives a reconnection (`<name>.2.jsonl` continues `<name>.jsonl`);
 * JSON-RPC ids are per connection and reset with each part.
 */
class SessionHistory {
  /** turnId -> where it was accepted ("part line n" text). */
  readonly accepted = new Map<string, { at: string; part: number }>();
  /** turnId -> where its turn/completed was, and its terminal. */
  readonly terminals = new Map<string, { at: string; terminal: unknown }>();
  /** itemId -> the open item/started. */
  readonly openItems = new Map<string, { turnId: string; at: string; part: number }>();
  readonly completedItems = new Map<string, string>();
  /** sessionId -> last viewCursor and where. */
  readonly cursors = new Map<string, { cursor: string; at: string }>();
  /**
   * itemId -> the approval gate of a tool call whose item was once `approval: "pending"`: its
   * latest approval state, and whether the client answered `approve` while it was pending (only
   * then may the call run: invariant 6).
   */
  readonly gates = new Map<string, { approval: string; at: string; approved: boolean }>();
  /** Turns the client has sent `turn/cancel` for: their open questions are withdrawn, so a later `approve` runs nothing. */
  readonly cancelSent = new Set<string>();
}

/** A `tool/approve` the host sent (per connection: JSON-RPC ids reset with each part). */
interface HostRequest {
  line: number;
  turnId: string;
  itemId: string;
  answeredAt?: number;
}

const approvalStates: ReadonlySet<string> = new Set(Object.values(ApprovalStates));

function parseLines(input: TranscriptInput, problems: string[]): Parsed[] {
  if (input.length > 0 && typeof input !== "string" && typeof input[0] !== "string") {
    return (input as readonly TranscriptLine[]).map((l) => ({ line: l.line, dir: l.dir, message: l.message }));
  }
  return readTranscriptRows(input as string | readonly string[], (line, problem) => problems.push(`line ${line}: ${problem}`));
}

function isId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

function checkPart(input: TranscriptInput, part: number, label: (line: number) => string, history: SessionHistory, problems: string[]): void {
  const requests = new Map<string, Request>();
  const hostRequests = new Map<string, HostRequest>();
  const at = label;
  for (const { line, dir, message } of parseLines(input, problems)) {
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
          else checkToolApprove(message, isObject(params) ? params : undefined, line, at, history, hostRequests, say);
          continue;
        }
        const key = JSON.stringify(message["id"]);
        const earlier = requests.get(key);
        if (earlier !== undefined && earlier.answeredAt === undefined)
          say(`${method}: request id ${key} is still in use by the request at ${at(earlier.line)}`);
        requests.set(key, { line, method, params: isObject(params) ? params : {} });
        if (method === "turn/cancel" && isObject(params) && typeof params["turnId"] === "string") history.cancelSent.add(params["turnId"]);
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
      say(`response to id ${key} matches no earlier client request`);
      continue;
    }
    if (request.answeredAt !== undefined) {
      say(`a second response to id ${key} (${request.method}); the first was at ${at(request.answeredAt)}`);
      continue;
    }
    request.answeredAt = line;
    const commandId = request.params["commandId"];
    if (hasResult) checkResult(request, message["result"], commandId, here, part, history, say);
    else checkError(request, message["error"], commandId, history, say);
  }
}

/** A `tool/approve` from the host: well-formed, its id free, its turn running, its item pending (invariant 6). */
function checkToolApprove(
  message: Record<string, unknown>,
  params: Record<string, unknown> | undefined,
  line: number,
  at: (line: number) => string,
  history: SessionHistory,
  hostRequests: Map<string, HostRequest>,
  say: (p: string) => void,
): void {
  const key = JSON.stringify(message["id"]);
  const earlier = hostRequests.get(key);
  if (earlier !== undefined && earlier.answeredAt === undefined) say(`tool/approve: request id ${key} is still in use by the request at ${at(earlier.line)}`);
  const problem = problemWithToolApprove(params);
  if (problem !== undefined || params === undefined) return say(`tool/approve: ${problem ?? "params must be an object"}`);
  const turnId = params["turnId"] as string;
  const itemId = params["itemId"] as string;
  hostRequests.set(key, { line, turnId, itemId });
  const ended = history.terminals.get(turnId);
  if (ended !== undefined) return say(`tool/approve for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
  const gate = history.gates.get(itemId);
  if (gate?.approval !== ApprovalStates.pending) {
    say(`tool/approve for item ${itemId}, which no item/updated before it set approval: "pending" (invariant 6)`);
  }
}

/**
 * The client's answer to a host request: it answers a `tool/approve` of this connection, once,
 * with a well-formed answer (or a JSON-RPC error). An `approve` given while the item is pending
 * lets the call run. An answer after the turn's `turn/completed` must be `cancelled`: a client
 * that has seen the terminal has nothing left to decide (the SDK answers so itself), and the
 * host ignores it.
 */
function checkApprovalAnswer(
  message: Record<string, unknown>,
  at: (line: number) => string,
  history: SessionHistory,
  hostRequests: Map<string, HostRequest>,
  line: number,
  say: (p: string) => void,
): void {
  const key = JSON.stringify(message["id"]);
  const request = hostRequests.get(key);
  if (request === undefined) return say(`the client answered id ${key}, which matches no earlier tool/approve`);
  if (request.answeredAt !== undefined) return say(`a second answer to tool/approve id ${key}; the first was at ${at(request.answeredAt)} (invariant 6)`);
  request.answeredAt = line;
  if ("error" in message) {
    const error = message["error"];
    if (!isObject(error) || typeof error["code"] !== "number" || typeof error["message"] !== "string")
      say("tool/approve: error must be {code: number, message: string, data?}");
    return;
  }
  const answer = message["result"];
  const problem = problemWithApprovalAnswer(answer);
  if (problem !== undefined) return say(`tool/approve: ${problem}`);
  const decision = (answer as Record<string, unknown>)["decision"];
  const ended = history.terminals.get(request.turnId);
  if (ended !== undefined && decision !== ApprovalDecisions.cancelled) {
    return say(
      `answered ${JSON.stringify(decision)} to tool/approve id ${key} after turn ${request.turnId} ended at ${ended.at}; after the terminal the answer is "cancelled"`,
    );
  }
  const gate = history.gates.get(request.itemId);
  // An approve that follows this client's own turn/cancel is late: the host withdrew the question when it read the cancel.
  if (decision === ApprovalDecisions.approve && gate?.approval === ApprovalStates.pending && !history.cancelSent.has(request.turnId)) gate.approved = true;
}

/** Item notifications of a tool call behind an approval gate: it may not run before an `approve` (invariant 6). */
function checkGate(method: string, item: Record<string, unknown>, here: string, history: SessionHistory, say: (p: string) => void): void {
  const itemId = item["itemId"] as string;
  const approval = item["approval"];
  if (approval !== undefined && !approvalStates.has(approval as string)) {
    return say(`${method}: item.approval ${JSON.stringify(approval)} is not one of ${[...approvalStates].join(", ")}`);
  }
  let gate = history.gates.get(itemId);
  if (approval === ApprovalStates.pending) {
    if (gate === undefined || gate.approval !== ApprovalStates.pending)
      history.gates.set(itemId, (gate = { approval: ApprovalStates.pending, at: here, approved: false }));
  } else if (gate !== undefined && typeof approval === "string") gate.approval = approval;
  if (gate === undefined || gate.approved) return;
  const ran =
    approval === ApprovalStates.approved
      ? `set approval: "approved"`
      : typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== ""
        ? "shows output"
        : item["status"] === "completed"
          ? "completed"
          : undefined;
  if (ran !== undefined)
    say(`${method}: tool call ${itemId}, pending approval since ${gate.at}, ${ran} with no approve answered while it was pending (invariant 6)`);
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
}

function checkError(request: Request, error: unknown, commandId: unknown, history: SessionHistory, say: (p: string) => void): void {
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
  if (terminal === undefined) return say(`already_terminal rejection for turn ${turnId} before that turn's turn/completed (invariant 4)`);
  if (data["terminal"] !== undefined && data["terminal"] !== terminal.terminal) {
    say(
      `already_terminal rejection says terminal ${JSON.stringify(data["terminal"])}, but turn ${turnId} ended ${JSON.stringify(terminal.terminal)} at ${terminal.at}`,
    );
  }
}

function checkNotification(
  method: string,
  params: Record<string, unknown> | undefined,
  here: string,
  part: number,
  history: SessionHistory,
  say: (p: string) => void,
): void {
  const shape = problemWithNotification(method, params);
  if (shape !== undefined) return say(`${method}: ${shape}`);
  if (params === undefined) return;
  // Invariant 5.
  const sessionId = params["sessionId"];
  const cursor = params["viewCursor"];
  if (typeof sessionId === "string" && typeof cursor === "string") {
    const last = history.cursors.get(sessionId);
    if (parseViewCursor(cursor, sessionId) === undefined) {
      say(`${method}: viewCursor ${JSON.stringify(cursor)} is not a cursor of session ${sessionId} (v:<sessionId>:<n>, invariant 5)`);
    } else {
      if (last !== undefined && !cursorAfter(cursor, last.cursor, sessionId)) {
        say(`${method}: viewCursor ${cursor} does not increase on ${last.cursor} at ${last.at} (invariant 5)`);
      }
      history.cursors.set(sessionId, { cursor, at: here });
    }
  }
  switch (method) {
    case Notifications.turnStarted: {
      const turnId = params["turnId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) say(`turn/started for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
      return;
    }
    case Notifications.itemStarted:
    case Notifications.itemUpdated:
    case Notifications.itemCompleted: {
      const item = params["item"] as Record<string, unknown>;
      const turnId = item["turnId"] as string;
      const itemId = item["itemId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) return say(`${method} (item ${itemId}) for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
      if (item["kind"] === "toolCall") checkGate(method, item, here, history, say);
      if (method === Notifications.itemStarted) {
        const open = history.openItems.get(itemId);
        if (open !== undefined) say(`a second item/started for item ${itemId}; the first was at ${open.at}`);
        else if (history.completedItems.has(itemId)) say(`item/started for item ${itemId} after its item/completed at ${history.completedItems.get(itemId)}`);
        else history.openItems.set(itemId, { turnId, at: here, part });
      } else if (method === Notifications.itemCompleted) {
        const done = history.completedItems.get(itemId);
        if (done !== undefined) say(`a second item/completed for item ${itemId}; the first was at ${done} (invariant 2)`);
        else {
          history.openItems.delete(itemId);
          history.completedItems.set(itemId, here);
        }
      }
      return;
    }
    case Notifications.turnCompleted: {
      const turnId = params["turnId"] as string;
      const ended = history.terminals.get(turnId);
      if (ended !== undefined) return say(`a second turn/completed for turn ${turnId}; the first was at ${ended.at} (invariant 1)`);
      history.terminals.set(turnId, { at: here, terminal: params["terminal"] });
      for (const [itemId, open] of history.openItems) {
        if (open.turnId !== turnId) continue;
        say(`turn/completed for turn ${turnId} while item ${itemId}, started at ${open.at}, has no item/completed (invariant 2)`);
        history.openItems.delete(itemId);
      }
      return;
    }
    default:
      return;
  }
}

/** True when cursor `next` comes strictly after `last` (both well-formed cursors of `sessionId`), by their sequence numbers. */
function cursorAfter(next: string, last: string, sessionId: string): boolean {
  return (parseViewCursor(next, sessionId) as number) > (parseViewCursor(last, sessionId) as number);
}

function finish(history: SessionHistory, options: CheckTranscriptOptions, problemsOf: (part: number) => string[]): void {
  if (options.excerpt === true) return;
  for (const [turnId, accepted] of history.accepted) {
    if (history.terminals.has(turnId)) continue;
    problemsOf(accepted.part).push(
      `${accepted.at}: turn ${turnId}, accepted here, never gets a turn/completed (invariant 1; pass {excerpt: true} for an excerpt)`,
    );
  }
  for (const [itemId, open] of history.openItems) {
    if (history.accepted.has(open.turnId) && !history.terminals.has(open.turnId)) continue; // reported above
    problemsOf(open.part).push(`${open.at}: item ${itemId} of turn ${open.turnId}, started here, never gets an item/completed (invariant 2)`);
  }
}

/**
 * Check one transcript: JSON-RPC 2.0 well-formedness (`jsonrpc: "2.0"`; a request has a
 * method and an id; a response has an id and exactly one of result and error, answers an
 * earlier client request, and only once; every result carries the request's `commandId` and
 * `status: "accepted"`) and MSP's invariants 1–6. Each problem names its 1-based line.
 *
 * Approvals (invariant 6): the host may send one request, `tool/approve`, for a tool call whose
 * item an earlier `item/updated` set `approval: "pending"`, and the client answers each at most
 * once. Until the client answers `approve` while the item is still pending, the call must not
 * run: no `approval: "approved"`, no output, no `completed` status. An `approve` that comes after
 * the host withdrew the question, or after the client's own `turn/cancel` of that turn (the host
 * reads the cancel first, and withdraws), is late: it runs nothing. An answer that follows its turn's
 * `turn/completed` must be `cancelled`: the transcript is the client's view, and a client that
 * has seen the terminal has nothing left to decide.
 *
 * An `item/completed` with no `item/started` before it, or a `turn/completed` for a turn the
 * transcript never started, is fine: a transcript may begin mid-session. An accepted turn
 * with no `turn/completed` is a problem unless `options.excerpt` is set; a duplicate terminal
 * always is.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * const { ok, problems } = checkTranscript(readFileSync("transcripts/cancel-race.jsonl", "utf8"));
 * if (!ok) console.error(problems.join("\n"));
 * ```
 */
export function checkTranscript(lines: TranscriptInput, options: CheckTranscriptOptions = {}): TranscriptCheck {
  const problems: string[] = [];
  const history = new SessionHistory();
  checkPart(lines, 1, (line) => `line ${line}`, history, problems);
  finish(history, options, () => problems);
  return { ok: problems.length === 0, problems };
}

/**
 * Check the transcripts of successive connections to one host as one history, e.g. a crash
 * (`survive-host-crash.jsonl`) and the reconnection that resumes it
 * (`survive-host-crash.2.jsonl`). JSON-RPC ids reset with each part; turns, items and
 * `viewCursor`s carry over, so a turn accepted in part 1 may get its terminal in part 2.
 * Returns one verdict per part; a turn that never ends is reported in the part that accepted it.
 *
 * @example
 * ```ts
 * const parts = ["transcripts/survive-host-crash.jsonl", "transcripts/survive-host-crash.2.jsonl"].map((path) => readTranscript(path));
 * const [crash, resume] = checkTranscriptParts(parts);
 * ```
 */
export function checkTranscriptParts(parts: readonly TranscriptInput[], options: CheckTranscriptOptions = {}): TranscriptCheck[] {
  const history = new SessionHistory();
  const problems: string[][] = parts.map(() => []);
  const label = (part: number) => (line: number) => (parts.length > 1 ? `line ${line} (part ${part})` : `line ${line}`);
  parts.forEach((part, index) => checkPart(part, index + 1, label(index + 1), history, problems[index] as string[]));
  finish(history, options, (part) => problems[part - 1] as string[]);
  return problems.map((p) => ({ ok: p.length === 0, problems: p }));
}
