/**
 * checkTranscript's approval invariant (6, extended by MSP 2.1): the host asks only about a pending
 * tool call, the client answers each question once with a decision it offered, and a gated call
 * runs only after an `approve` or `approveForSession`, or under a grant of its session that an
 * `approveForSession` answer created and that covers it (named by its item); a `denyAndStop`
 * answer ends the turn `cancelled`, cause `user`, and runs nothing more.
 */
import { ApprovalDecisions, ApprovalStates, isObject, problemWithApprovalAnswer, problemWithToolApprove } from "@muse-code/protocol";
import { problemWithApprovalOffer, problemWithDecision } from "@muse-code/protocol/approvalOffer.js";
import type { ApprovalDecision, ToolApproveParams } from "@muse-code/protocol";
import { noteCancelAccepted, noteCancelSent } from "./steeringInvariant.js";
import type { SessionHistory } from "./transcriptHistory.js";

/** A `tool/approve` the host sent (per connection: JSON-RPC ids reset with each part). */
export interface HostRequest {
  line: number;
  turnId: string;
  itemId: string;
  answeredAt?: number;
  /** The question as asked (what it offered: its `decisions`, or `approve` and `deny` from a 2.0 host). */
  question: ToolApproveParams;
}

const approvalStates: ReadonlySet<string> = new Set(Object.values(ApprovalStates));

/** A `tool/approve` from the host: well-formed, its id free, its turn running, its item pending (invariant 6). */
export function checkToolApprove(
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
  for (const open of hostRequests.values()) {
    if (open.itemId !== itemId || open.answeredAt !== undefined) continue;
    say(`tool/approve for item ${itemId} while the tool/approve at ${at(open.line)} about it is still open: at most one open question per item (invariant 6)`);
    break;
  }
  const offer = problemWithApprovalOffer(params);
  if (offer !== undefined) say(`tool/approve: ${offer}`);
  hostRequests.set(key, { line, turnId, itemId, question: params as unknown as ToolApproveParams });
  const ended = history.terminals.get(turnId);
  if (ended !== undefined) return say(`tool/approve for turn ${turnId} after its turn/completed at ${ended.at} (invariant 3)`);
  const gate = history.gates.get(itemId);
  // A transcript with gaps may have left out the patch that set it pending.
  if (gate?.approval !== ApprovalStates.pending && !history.gaps) {
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
export function checkApprovalAnswer(
  message: Record<string, unknown>,
  at: (line: number) => string,
  history: SessionHistory,
  hostRequests: Map<string, HostRequest>,
  line: number,
  say: (p: string) => void,
): void {
  const key = JSON.stringify(message["id"]);
  const request = hostRequests.get(key);
  if (request === undefined) {
    // A transcript with gaps may have left the question out.
    if (!history.gaps) say(`the client answered id ${key}, which matches no earlier tool/approve`);
    return;
  }
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
  // An answer the question did not offer is refused by the host and runs nothing (invariant 6): the gate stays shut.
  const refused = problemWithDecision(decision as ApprovalDecision, request.question);
  if (refused !== undefined) return say(`tool/approve id ${key}: ${refused}; the host refuses it and runs nothing (invariant 6)`);
  const ended = history.terminals.get(request.turnId);
  if (ended !== undefined && decision !== ApprovalDecisions.cancelled) {
    return say(
      `answered ${JSON.stringify(decision)} to tool/approve id ${key} after turn ${request.turnId} ended at ${ended.at}; after the terminal the answer is "cancelled"`,
    );
  }
  const gate = history.gates.get(request.itemId);
  // An approve that follows this client's own turn/cancel is late: the host withdrew the question when it read the cancel.
  const approves = decision === ApprovalDecisions.approve || decision === ApprovalDecisions.approveForSession;
  const decides = gate?.approval === ApprovalStates.pending && !history.cancelSent.has(request.turnId);
  if (!decides) return;
  if (approves) gate.approved = true;
  else gate.refused = true;
  // Only an approveForSession answer creates a grant, and only with the rule its question offered.
  const offered = request.question.grant;
  if (decision === ApprovalDecisions.approveForSession) {
    history.grantOffers.set(request.itemId, { ...(isObject(offered) ? { rule: ruleOf(offered) } : {}), at: at(line) });
  }
  // denyAndStop is the user's Stop, given in the dialog: it cancels as a default turn/cancel does.
  if (decision === ApprovalDecisions.denyAndStop && !history.stopAnswers.has(request.turnId)) {
    history.stopAnswers.set(request.turnId, { at: at(line), laterCalls: new Set() });
    noteCancelSent(history.steering, request.turnId, false);
    noteCancelAccepted(history.steering, request.turnId, false, history.turnsBegun.has(request.turnId), at(line));
  }
}

/** A grant rule as checkTranscript compares it: `[tool, args, match]` as JSON. */
function ruleOf(grant: Record<string, unknown>): string {
  return JSON.stringify([grant["tool"], grant["args"], grant["match"]]);
}

/** The `match` kinds MSP 2.1 defines: `exact` (same tool, byte-equal args) and `anyArgs` (same tool). */
const grantMatches: ReadonlySet<string> = new Set(["exact", "anyArgs"]);

/**
 * The terminal of a turn whose pending question the client answered `denyAndStop`: the user's
 * Stop, so the turn ends `cancelled` with `cause.kind: "user"`; with no `cause` at all it is
 * noted, not a problem.
 */
export function checkStopAnswerTerminal(
  turnId: string,
  terminal: Record<string, unknown>,
  history: SessionHistory,
  say: (p: string) => void,
  note: (p: string) => void,
): void {
  const stop = history.stopAnswers.get(turnId);
  if (stop === undefined) return;
  const cause = terminal["cause"];
  const kind = isObject(cause) ? cause["kind"] : undefined;
  // A cancelled terminal with no cause is not a wrong one: noted, unless the cancel-cause rule notes it already.
  if (terminal["terminal"] === "cancelled" && cause === undefined) {
    if (!history.cancelAccepted.has(turnId))
      note(
        `turn/completed of turn ${turnId} is cancelled with no cause after the client answered denyAndStop at ${stop.at}: a host that sends a cause says "user" here`,
      );
    return;
  }
  if (terminal["terminal"] !== "cancelled" || kind !== "user") {
    say(
      `turn/completed of turn ${turnId} is ${String(terminal["terminal"])} with cause.kind ${JSON.stringify(kind) ?? "missing"}, but the client answered denyAndStop at ${stop.at}: the turn ends cancelled, cause "user" (invariant 6)`,
    );
  }
}

/**
 * A toolCall item that names the session grant that approved it (MSP 2.1, invariant 6 extended):
 * the grant is well-formed and belongs to the item's session. A grantId is first accepted only on
 * an item whose pending question the client answered `approveForSession`, with the rule that
 * question offered in `grant`; a later item names a grant already recorded in its session, with the
 * same rule, and is covered by it (`exact`: the same `tool` with byte-equal `args`; `anyArgs`: the
 * same `tool`). Any other `match` is a problem. A session the transcript joined mid-way may name a
 * grant recorded before the transcript began: that one is recorded as it comes.
 */
function checkGrant(method: string, item: Record<string, unknown>, sessionId: string, history: SessionHistory, say: (p: string) => void): void {
  const grant = item["grant"];
  const itemId = item["itemId"] as string;
  if (!isObject(grant) || typeof grant["grantId"] !== "string" || typeof grant["tool"] !== "string" || typeof grant["match"] !== "string") {
    return say(`${method}: item ${itemId} has grant ${JSON.stringify(grant)}, not {grantId, tool, args?, match}`);
  }
  if (history.grantedItems.has(itemId)) return; // checked once per item, at the first notification that names its grant
  history.grantedItems.add(itemId);
  const grantId = grant["grantId"];
  const match = grant["match"];
  const rule = ruleOf(grant);
  const grants = history.grants.get(sessionId) ?? new Map<string, { rule: string; at: string }>();
  history.grants.set(sessionId, grants);
  const known = grants.get(grantId);
  const offer = history.grantOffers.get(itemId);
  if (known === undefined) {
    grants.set(grantId, { rule, at: itemId });
    if (offer === undefined && history.sessionsFromStart.has(sessionId)) {
      say(
        `${method}: item ${itemId} names grant ${grantId}, which no earlier item of session ${sessionId} named and no approveForSession answer to its own question created: a grant comes from an approveForSession answer (invariant 6)`,
      );
    } else if (offer?.rule !== undefined && offer.rule !== rule) {
      say(
        `${method}: item ${itemId} names grant ${grantId} with rule ${rule}, but its question offered ${offer.rule}, answered approveForSession at ${offer.at} (invariant 6)`,
      );
    }
  } else if (known.rule !== rule) {
    say(`${method}: item ${itemId} names grant ${grantId} with rule ${rule}, but item ${known.at} named it with ${known.rule} (invariant 6)`);
  }
  if (item["approval"] !== undefined && item["approval"] !== ApprovalStates.approved) {
    say(`${method}: item ${itemId} names grant ${grantId} but its approval is ${JSON.stringify(item["approval"])}, not "approved" (invariant 6)`);
  }
  if (!grantMatches.has(match)) {
    return say(
      `${method}: item ${itemId} names grant ${grantId} with match ${JSON.stringify(match)}, which MSP 2.1 does not define ("exact" or "anyArgs") (invariant 6)`,
    );
  }
  const tool = item["tool"];
  const args = item["args"];
  const covered = match === "exact" ? grant["tool"] === tool && grant["args"] === args : grant["tool"] === tool;
  if (!covered && typeof tool === "string" && typeof args === "string") {
    say(
      `${method}: tool call ${itemId} (${tool} ${args}) ran under grant ${grantId}, whose ${match} rule covers ${String(grant["tool"])} ${match === "exact" ? String(grant["args"]) : "with any args"}: a grant covers only the same call (invariant 6)`,
    );
  }
}

/** Item notifications of a tool call behind an approval gate: it may not run before an `approve` (invariant 6). */
export function checkGate(
  method: string,
  item: Record<string, unknown>,
  sessionId: string,
  here: string,
  history: SessionHistory,
  say: (p: string) => void,
): void {
  const itemId = item["itemId"] as string;
  const approval = item["approval"];
  if (approval !== undefined && !approvalStates.has(approval as string)) {
    return say(`${method}: item.approval ${JSON.stringify(approval)} is not one of ${[...approvalStates].join(", ")}`);
  }
  checkAfterStopAnswer(method, item, history, say);
  if (item["grant"] !== undefined) checkGrant(method, item, sessionId, history, say);
  let gate = history.gates.get(itemId);
  if (approval === ApprovalStates.pending) {
    if (gate === undefined || gate.approval !== ApprovalStates.pending)
      history.gates.set(itemId, (gate = { approval: ApprovalStates.pending, at: here, approved: false }));
  } else if (gate !== undefined && typeof approval === "string") gate.approval = approval;
  if (gate === undefined || gate.approved) return;
  // With gaps, the approve may be a left-out line: a run contradicts the gate only after an answer that refused it.
  if (history.gaps && gate.refused !== true) return;
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

/** A tool call of a turn the client stopped with `denyAndStop`, started after that answer: it may not run (show output or complete `completed`). */
function checkAfterStopAnswer(method: string, item: Record<string, unknown>, history: SessionHistory, say: (p: string) => void): void {
  const stop = history.stopAnswers.get(item["turnId"] as string);
  if (stop === undefined) return;
  const itemId = item["itemId"] as string;
  if (method === "item/started") stop.laterCalls.add(itemId);
  if (!stop.laterCalls.has(itemId)) return;
  const ran =
    typeof item["visibleOutput"] === "string" && item["visibleOutput"] !== ""
      ? "shows output"
      : item["status"] === "completed"
        ? "completes completed"
        : undefined;
  if (ran === undefined) return;
  stop.laterCalls.delete(itemId); // one problem per call
  say(`${method}: tool call ${itemId} ${ran} after the client answered denyAndStop at ${stop.at}: the turn is stopping, nothing more runs (invariant 6)`);
}
