/**
 * checkTranscript's approval invariant (6, extended by MSP 2.1): the host asks only about a pending
 * tool call, the client answers each question once with a decision it offered, and a gated call
 * runs only after an `approve` or `approveForSession`, or under a session grant that covers it
 * exactly (named by its item).
 */
import { ApprovalDecisions, ApprovalStates, isObject, problemWithApprovalAnswer, problemWithToolApprove } from "../protocol/index.js";
import { problemWithApprovalOffer, problemWithDecision } from "../protocol/approvalOffer.js";
import type { ApprovalDecision, ToolApproveParams } from "../protocol/index.js";
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
  if (approves && gate?.approval === ApprovalStates.pending && !history.cancelSent.has(request.turnId)) gate.approved = true;
}

/**
 * A toolCall item that names the session grant that approved it (MSP 2.1, invariant 6 extended):
 * the grant is well-formed, keeps one rule under one `grantId`, and an `exact` grant covers the
 * call: the same `tool` with byte-equal `args`. A host whose grant covers a different call (too
 * wide) is caught here. A call with no open question may run only under such a grant.
 */
function checkGrant(method: string, item: Record<string, unknown>, history: SessionHistory, say: (p: string) => void): void {
  const grant = item["grant"];
  const itemId = item["itemId"] as string;
  if (!isObject(grant) || typeof grant["grantId"] !== "string" || typeof grant["tool"] !== "string" || typeof grant["match"] !== "string") {
    return say(`${method}: item ${itemId} has grant ${JSON.stringify(grant)}, not {grantId, tool, args?, match}`);
  }
  if (history.grantedItems.has(itemId)) return; // checked once per item, at the first notification that names its grant
  history.grantedItems.add(itemId);
  const grantId = grant["grantId"];
  const rule = JSON.stringify([grant["tool"], grant["args"], grant["match"]]);
  const known = history.grants.get(grantId);
  if (known === undefined) history.grants.set(grantId, { rule, at: itemId });
  else if (known.rule !== rule)
    say(`${method}: item ${itemId} names grant ${grantId} with rule ${rule}, but item ${known.at} named it with ${known.rule} (invariant 6)`);
  if (item["approval"] !== undefined && item["approval"] !== ApprovalStates.approved) {
    say(`${method}: item ${itemId} names grant ${grantId} but its approval is ${JSON.stringify(item["approval"])}, not "approved" (invariant 6)`);
  }
  const tool = item["tool"];
  const args = item["args"];
  if (grant["match"] === "exact" && typeof tool === "string" && typeof args === "string" && (grant["tool"] !== tool || grant["args"] !== args)) {
    say(
      `${method}: tool call ${itemId} (${tool} ${args}) ran under grant ${grantId}, whose exact rule covers ${String(grant["tool"])} ${String(grant["args"])}: a grant covers only the same call (invariant 6)`,
    );
  }
}

/** Item notifications of a tool call behind an approval gate: it may not run before an `approve` (invariant 6). */
export function checkGate(method: string, item: Record<string, unknown>, here: string, history: SessionHistory, say: (p: string) => void): void {
  const itemId = item["itemId"] as string;
  const approval = item["approval"];
  if (approval !== undefined && !approvalStates.has(approval as string)) {
    return say(`${method}: item.approval ${JSON.stringify(approval)} is not one of ${[...approvalStates].join(", ")}`);
  }
  if (item["grant"] !== undefined) checkGrant(method, item, history, say);
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
