/**
 * Approvals: the host's `tool/approve` questions on one connection, each answered exactly once.
 * The app's handler answers, or the app does through `client.approvals` (a dialog,
 * `StopController.answer`). Otherwise the SDK answers `cancelled` itself when the question is
 * withdrawn: this client cancels the turn, the turn ends, the host moves the item off `pending`,
 * or the connection closes. Users see it through its read-only view, {@link TurnApprovals}.
 */
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import { problemWithApprovalAnswer, type ApprovalDecision, type Item, type ToolApproveParams, type ToolApproveResult } from "@muse-code/protocol";
import { errorMessage } from "../internal/errorMessage.js";

/**
 * What an {@link ApprovalHandler} gets beside the question.
 *
 * @example
 * ```ts
 * client.onApproval((request, context: ApprovalContext) => {
 *   context.signal.addEventListener("abort", () => console.log("the question was withdrawn"));
 *   return { decision: "deny", reason: "read-only session" };
 * });
 * ```
 */
export interface ApprovalContext {
  /**
   * Aborts when the question closes without this handler's answer: this client cancelled the
   * turn, the turn ended, the host withdrew the question, the connection closed, or the app
   * answered it another way (`client.approvals`, `StopController.answer`). The SDK has then
   * answered; whatever the handler returns later is ignored.
   */
  readonly signal: AbortSignal;
}

/**
 * The app's single, replace-only answerer of `tool/approve` (see `MspClient.onApproval`). It
 * returns the answer, or a promise of one. A throw or a rejection answers `deny` with its
 * message; so does an answer that is not a {@link ToolApproveResult}.
 *
 * @example
 * ```ts
 * const allowReads: ApprovalHandler = (request) =>
 *   request.tool === "read_file" ? { decision: "approve" } : { decision: "deny", reason: `${request.tool} is not allowed here` };
 * client.onApproval(allowReads);
 * ```
 */
export type ApprovalHandler = (request: ToolApproveParams, context: ApprovalContext) => ToolApproveResult | PromiseLike<ToolApproveResult>;

/**
 * One open `tool/approve` question. `answer()` answers it once: it returns `true` when this
 * call sent the answer, `false` when the question was already answered or withdrawn.
 *
 * @example
 * ```ts
 * client.events.on("approvalAsked", (question: ApprovalQuestion) => {
 *   if (confirm(`Run ${question.request.tool} ${question.request.args}?`)) question.answer("approve");
 *   else question.answer("deny", "the user said no");
 * });
 * ```
 */
export interface ApprovalQuestion {
  /** The host's question, as it sent it. */
  readonly request: ToolApproveParams;
  /** Aborts when the question closes by any answer but the handler's (see {@link ApprovalContext.signal}). */
  readonly signal: AbortSignal;
  /** Answer the question, unless it is already answered; `true` when this call answered it. */
  answer(decision: ApprovalDecision, reason?: string): boolean;
}

/**
 * The open `tool/approve` questions of a connection, read-only: `client.approvals`. A question
 * leaves it the moment it is answered; `approvalAsked` and `approvalAnswered` on `client.events`
 * tell when.
 *
 * @example
 * ```ts
 * for (const question of client.approvals.openOf(turnId)) console.log(`waiting: ${question.request.tool} ${question.request.args}`);
 * ```
 */
export interface TurnApprovals {
  /**
   * A turn's open questions, oldest first (empty when it has none).
   *
   * @example
   * ```ts
   * const [question] = client.approvals.openOf(turnId);
   * question?.answer("approve");
   * ```
   */
  openOf(turnId: string): ApprovalQuestion[];
  /** Number of open questions, over all turns (at most 1 000: past it the SDK answers `cancelled`). */
  readonly size: number;
}

/** Most questions open at once on one connection; past it a new one is answered `cancelled` at once. */
export const MAX_OPEN_APPROVALS = 1_000;

const CANCELLED = "turn cancelled";

/** Most turns remembered as cancelled by this connection (until their terminal); the oldest is forgotten first. */
const MAX_CANCELLED_TURNS = 10_000;

/** What the connection lends the approvals: the wire and the events. */
export interface ApprovalWire {
  /** Write the answer to the host's request `id`. */
  answer(id: number | string, result: ToolApproveResult): void;
  /** Tell `client.events`. */
  emit(event: "approvalAsked" | "approvalAnswered", question: ApprovalQuestion, answer?: ToolApproveResult): void;
}

/** One open question: the view the app gets, and its request id and abort controller. */
interface Question extends ApprovalQuestion {
  id: number | string;
  abort: AbortController;
}

/**
 * The open questions of one connection. The connection asks ({@link Approvals.ask}), withdraws
 * by turn or item, and closes it; every question is answered exactly once, on the wire and in
 * `approvalAnswered`.
 */
export class Approvals implements TurnApprovals {
  /** The app's handler (`onApproval`); `undefined` answers `deny`. */
  handler: ApprovalHandler | undefined;
  readonly #wire: ApprovalWire;
  readonly #open = new Map<number | string, Question>();
  /** Turns this connection sent `turn/cancel` for: a Stop is final, so their questions are answered `cancelled`. */
  readonly #cancelled = new BoundedMap<string, true>({ capacity: MAX_CANCELLED_TURNS });

  constructor(wire: ApprovalWire) {
    this.#wire = wire;
  }

  /**
   * A well-formed question arrived as request `id`. Returns a problem to report when the host
   * should not have asked it: the id is already open (it stays unanswered: its answer is the
   * first one's), or the turn has ended (answered `cancelled` at once). A question of a turn this
   * connection cancelled is answered `cancelled` at once, unreported: the host may have asked it
   * before it read the cancel.
   */
  ask(id: number | string, request: ToolApproveParams, turnEnded: boolean): string | undefined {
    const open = this.#open;
    if (open.has(id)) return `tool/approve: request id ${JSON.stringify(id)} is already open`;
    const abort = new AbortController();
    const question: Question = {
      id,
      abort,
      request,
      signal: abort.signal,
      answer: (decision, reason) => this.#close(question, reason === undefined ? { decision } : { decision, reason }),
    };
    open.set(id, question);
    if (turnEnded || open.size > MAX_OPEN_APPROVALS || this.#cancelled.has(request.turnId)) {
      this.#close(question, {
        decision: "cancelled",
        reason: turnEnded ? "turn ended" : open.size > MAX_OPEN_APPROVALS ? "too many open questions" : CANCELLED,
      });
      return turnEnded ? `tool/approve for turn ${request.turnId} after its turn/completed` : undefined;
    }
    this.#wire.emit("approvalAsked", question);
    if (open.get(id) !== question) return undefined; // an approvalAsked listener answered it
    const handler = this.handler;
    if (handler === undefined) return void this.#close(question, { decision: "deny", reason: "no approval handler" });
    const decide = (answer: unknown) => {
      const problem = problemWithApprovalAnswer(answer);
      this.#close(question, problem === undefined ? (answer as ToolApproveResult) : { decision: "deny", reason: `approval handler: ${problem}` }, true);
    };
    const fail = (error: unknown) => this.#close(question, { decision: "deny", reason: errorMessage(error) }, true);
    try {
      const answer = handler(request, { signal: abort.signal });
      if (typeof (answer as Partial<PromiseLike<unknown>> | undefined)?.then === "function") (answer as PromiseLike<unknown>).then(decide, fail);
      else decide(answer);
    } catch (error) {
      fail(error);
    }
    return undefined;
  }

  /**
   * Answer `cancelled`, reason `why`, every open question of `turnId` (only those of `itemId`,
   * when given); every question, when `turnId` is undefined.
   */
  withdraw(turnId: string | undefined, why: string, itemId?: string): void {
    for (const question of [...this.#open.values()]) {
      const { request } = question;
      if ((turnId ?? request.turnId) === request.turnId && (itemId ?? request.itemId) === request.itemId)
        this.#close(question, { decision: "cancelled", reason: why });
    }
  }

  /**
   * No more answers but `cancelled` for `turnId`: this connection is sending its `turn/cancel`
   * (its later questions too are answered `cancelled`), or it `ended` (nothing more is asked).
   */
  closeTurn(turnId: string, ended: boolean): void {
    if (ended) this.#cancelled.delete(turnId);
    else this.#cancelled.set(turnId, true);
    this.withdraw(turnId, ended ? "turn ended" : CANCELLED);
  }

  /** An item notification: a toolCall the host finished or moved off `pending` has no question left. */
  noteItem(item: Item): void {
    if (item.kind === "toolCall" && (item.status !== "inProgress" || (item.approval ?? "pending") !== "pending"))
      this.withdraw(item.turnId, "withdrawn by the host", item.itemId);
  }

  /** See {@link TurnApprovals.openOf}. */
  openOf(turnId: string): ApprovalQuestion[] {
    return [...this.#open.values()].filter((question) => question.request.turnId === turnId);
  }

  /** See {@link TurnApprovals.size}. */
  get size(): number {
    return this.#open.size;
  }

  /** Send `answer` unless the question is already answered; only the handler's own answer leaves its signal alone. */
  #close(question: Question, answer: ToolApproveResult, byHandler?: boolean): boolean {
    const problem = problemWithApprovalAnswer(answer);
    if (problem !== undefined) throw new TypeError(`tool/approve: ${problem}`);
    if (!this.#open.delete(question.id)) return false;
    if (!byHandler) question.abort.abort();
    const sent: ToolApproveResult = answer.reason === undefined ? { decision: answer.decision } : { decision: answer.decision, reason: answer.reason };
    this.#wire.answer(question.id, sent);
    this.#wire.emit("approvalAnswered", question, sent);
    return true;
  }
}
