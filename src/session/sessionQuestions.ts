/**
 * The session's questions: each `tool/approve` shown once on the turn it belongs to (a subagent's
 * on the session's turn it runs below), an answer given offline kept until the host asks again,
 * and a Stop that is final: once a turn is stopped, every question of it is answered `cancelled`.
 */
import type { MspClient } from "../client/mspClient.js";
import { problemWithDecision } from "@muse-code/protocol/approvalOffer.js";
import type { ApprovalDecision, ToolApproveParams, ToolApproveResult } from "@muse-code/protocol";
import type { ApprovalQuestion } from "../turns/approvals.js";
import type { SessionTree } from "./sessionTree.js";
import { touch, type SessionTurns, type TurnState } from "./sessionTurns.js";

/** What the questions need of the session. */
export interface QuestionsHost {
  readonly turns: SessionTurns;
  readonly tree: SessionTree;
  /** The session's id, once known. */
  sessionId(): string | undefined;
  /** `client` is the session's current connection. */
  isCurrent(client: MspClient): boolean;
  /** Send the turn's one `turn/cancel` on `client`. */
  sendCancel(client: MspClient, turn: TurnState): void;
  /** What the snapshot shows changed. */
  changed(): void;
  onWarning(message: string): void;
}

/** Why the SDK answers `cancelled` for a stopped turn. */
const STOPPED = "turn cancelled";

/** The open questions of a session's turns; see the module header. */
export class SessionQuestions {
  readonly #host: QuestionsHost;

  constructor(host: QuestionsHost) {
    this.#host = host;
  }

  /** The host asked on `client` (or asked again after a reconnect): the answer resolves when the app, or a Stop, gives it. */
  asked(client: MspClient, request: ToolApproveParams, signal: AbortSignal): Promise<ToolApproveResult> {
    const host = this.#host;
    return new Promise((resolve) => {
      const reply = (decision: ApprovalDecision, reason?: string) => resolve(reason === undefined ? { decision } : { decision, reason });
      // Closed without this answer (withdrawn, the turn ended, the connection went): what resolves here is not sent.
      signal.addEventListener("abort", () => resolve({ decision: "cancelled" }), { once: true });
      const own = request.sessionId === host.sessionId();
      const place = own ? undefined : host.tree.placeOf(request.sessionId, request.turnId);
      const depth = own ? 0 : (place?.depth ?? host.tree.depthOf(request.sessionId));
      const turn = own ? host.turns.ensure(request.turnId) : this.holderOf(request);
      if (turn === undefined || depth === undefined) {
        // The host routed it here, but the tree cannot place it (a subagent turn it never heard of, or forgot): never a
        // denial the host would act on. It stays unanswered, reported; a Stop of the turn above withdraws it.
        host.onWarning(
          `a question of session ${request.sessionId} (turn ${request.turnId}, item ${request.itemId}) was left unanswered: no turn of this session is known to be above it`,
        );
        return;
      }
      const earlier = turn.approvals.get(request.itemId);
      if (earlier !== undefined && (turn.stopRequested || earlier.answered !== undefined)) {
        turn.approvals.delete(request.itemId);
        touch(turn);
        host.changed();
      }
      if (turn.stopRequested) {
        // A Stop is final: answered `cancelled`, then the turn's one cancel goes if it has not (the host asking proves it has the turn).
        turn.stoppedQuestions.add(request.itemId);
        reply("cancelled", STOPPED);
        if (host.isCurrent(client)) host.sendCancel(client, turn);
        return;
      }
      // Answered while offline: the answer goes now, and the question leaves the snapshot.
      if (earlier?.answered !== undefined) return reply(earlier.answered, earlier.reason);
      turn.approvals.set(request.itemId, { request, live: true, reply, ...(depth === 0 ? {} : { subagent: { sessionId: request.sessionId, depth } }) });
      touch(turn);
      host.changed();
    });
  }

  /** The session's own turn a question shows on: its own turn, or the one a subagent's turn runs below. */
  holderOf(request: ToolApproveParams): TurnState | undefined {
    const host = this.#host;
    if (request.sessionId === host.sessionId()) return host.turns.get(request.turnId);
    // The tree's place of the turn counts even when its session is no longer followed (past limits.subagentSessions).
    const root = host.tree.placeOf(request.sessionId, request.turnId)?.root;
    return root === undefined ? undefined : host.turns.get(root);
  }

  /**
   * The app's answer to the question about `itemId`: sent at once when it is live and `online`,
   * else kept for the host's next ask. Returns the decision that stands: `cancelled` once its turn
   * was stopped. Throws a TypeError for a decision the question did not offer.
   */
  answer(itemId: string, decision: ApprovalDecision, reason: string | undefined, online: boolean): ApprovalDecision {
    for (const turn of this.#host.turns.unended()) {
      const question = turn.approvals.get(itemId);
      if (question === undefined) continue;
      // A decision the question did not offer is refused here, before anything is sent or kept.
      const refused = problemWithDecision(decision, question.request);
      if (refused !== undefined) throw new TypeError(`answerApproval: ${refused}`);
      // The Stop came first: the question is answered `cancelled` whatever is answered after it.
      if (turn.stopRequested) return "cancelled";
      if (question.live && question.reply !== undefined && online) question.reply(decision, reason);
      else {
        question.answered = decision;
        if (reason === undefined) delete question.reason;
        else question.reason = reason;
      }
      touch(turn);
      this.#host.changed();
      return decision;
    }
    // Gone because a Stop answered it `cancelled`: that answer stands, not this one.
    for (const turn of this.#host.turns.all()) if (turn.stoppedQuestions.has(itemId)) return "cancelled";
    return decision;
  }

  /** Stop was pressed for `turn`: its live questions are answered `cancelled` now; the others when the host asks again. */
  stopped(turn: TurnState): void {
    for (const [itemId, question] of turn.approvals) {
      turn.stoppedQuestions.add(itemId);
      if (question.live) question.reply?.("cancelled", STOPPED);
    }
  }

  /** The current connection answered `question` (the app, a Stop, the SDK itself): it leaves the turn it shows on. */
  answered(question: ApprovalQuestion): void {
    const turn = this.holderOf(question.request);
    const open = turn?.approvals.get(question.request.itemId);
    // A kept question (not live) is settled by any answer the host got for its item: the SDK's own `cancelled` of a stopped turn.
    if (turn === undefined || open === undefined || (open.live && open.request !== question.request)) return;
    turn.approvals.delete(question.request.itemId);
    touch(turn);
    this.#host.changed();
  }

  /** The connection went: every question waits for the host to ask again. */
  offline(): void {
    for (const turn of this.#host.turns.unended()) {
      if (turn.approvals.size === 0) continue;
      for (const question of turn.approvals.values()) question.live = false;
      touch(turn);
    }
  }
}
