/**
 * The approval gate: the host side of `tool/approve`, MSP's one host → client request. It sends
 * the question to a connection, matches the answer by JSON-RPC id, re-asks on a resuming
 * connection, and bounds every question: one is open until it is answered or withdrawn (its turn
 * was cancelled or ended). When the connection that was asked closes, the question goes to the
 * session's next open connection, or, when there is none, waits unasked until a `session/resume`
 * asks it again. An answer of `cancelled` withdraws only the connection that gave it: the question
 * stays open (its turn's `turn/cancel`, which a Stop sends next, is what ends it).
 */
import { ApprovalDecisions, HostRequests, isObject, type ApprovalDecision, type ToolApproveParams } from "@muse-code/protocol";
import { BoundedMap } from "@muse-code/protocol/boundedMap.js";
import type { JsonRpcId } from "./jsonRpc.js";
import { SessionRoutes } from "./sessionRoutes.js";

/**
 * Where a question goes: a subscriber of the host core (one peer's way back to its client). Compared by identity.
 *
 * @example
 * ```ts
 * const target: AskTarget = { send: (message) => transport.send(message) };
 * ```
 */
export interface AskTarget {
  send(message: unknown): void;
}

/**
 * What the gate hands the agent: the client's decision, or why the answer could not be read
 * (`invalid`: then `decision` is `"deny"`, the gate failing closed). Never `cancelled`: that
 * answer withdraws a connection, it decides nothing.
 *
 * @example
 * ```ts
 * const answer: ApprovalAnswer = { decision: "deny", invalid: "result.decision must be approve, deny or cancelled" };
 * ```
 */
export interface ApprovalAnswer {
  decision: Exclude<ApprovalDecision, "cancelled">;
  reason?: string;
  /** Set when the answer was malformed or a JSON-RPC error: the host treats it as a deny. */
  invalid?: string;
}

/**
 * How many answers the gate still recognises, per connection, for questions that are no longer
 * open (withdrawn by a cancel, or decided on another connection). A later answer to an older one
 * is logged as unknown; either way it runs nothing.
 *
 * @example
 * ```ts
 * const gate = new ApprovalGate({ lateAnswersPerTarget: LATE_ANSWERS_REMEMBERED });
 * ```
 */
export const LATE_ANSWERS_REMEMBERED = 256;

/**
 * Options of an {@link ApprovalGate}.
 *
 * @example
 * ```ts
 * const options: ApprovalGateOptions = { logger: (line) => process.stderr.write(`${line}\n`) };
 * ```
 */
export interface ApprovalGateOptions<T extends AskTarget = AskTarget> {
  /** Told about answers it ignores (late, unknown, duplicate) and answers it cannot read. */
  logger?: (line: string) => void;
  /** The host's routing table (who speaks for each session, and the tree), shared with its delivery; a table of its own when not given. */
  routes?: SessionRoutes<T>;
  /** @defaultValue {@link LATE_ANSWERS_REMEMBERED} */
  lateAnswersPerTarget?: number;
}

/** One open question. */
interface Question {
  params: ToolApproveParams;
  /** The request id it was sent under, per target still asked (unanswered). */
  asks: Map<AskTarget, JsonRpcId>;
  /** Targets that answered it `cancelled` (withdrew), not asked again unless they resume. */
  withdrewFrom: Set<AskTarget>;
  closed: boolean;
  settle: (answer: ApprovalAnswer) => void;
}

/** Per target: its outstanding request ids and what each was about. */
interface TargetState {
  nextId: number;
  open: Map<JsonRpcId, Question>;
  /** Request ids of questions no longer open, kept (bounded) so a late answer reads as late. */
  late: BoundedMap<JsonRpcId, string>;
  /** Open questions this target answered `cancelled`: moved on when it closes, like its open ones. */
  withdrew: Set<Question>;
}

/**
 * Reads a `tool/approve` result; `invalid` says what is wrong with it (and the decision is then
 * `deny`). A decision the question did not offer (its `decisions`, or `approve` and `deny` when
 * it lists none) is refused the same way: it runs nothing. `cancelled` is always allowed.
 */
function readAnswer(message: Record<string, unknown>, params: ToolApproveParams): Omit<ApprovalAnswer, "decision"> & { decision: ApprovalDecision } {
  if ("error" in message) {
    const error = message["error"];
    const code = isObject(error) ? error["code"] : undefined;
    const text = isObject(error) ? error["message"] : undefined;
    return { decision: "deny", invalid: `the client answered with JSON-RPC error ${String(code)}${typeof text === "string" ? ` (${text})` : ""}` };
  }
  const result = message["result"];
  if (!isObject(result)) return { decision: "deny", invalid: "the result is not an object" };
  const decision = result["decision"];
  if (typeof decision !== "string" || !(Object.values(ApprovalDecisions) as string[]).includes(decision)) {
    return {
      decision: "deny",
      invalid: `result.decision must be one of ${Object.values(ApprovalDecisions).join(", ")}, got ${JSON.stringify(decision) ?? "nothing"}`,
    };
  }
  const offered: readonly string[] = params.decisions ?? [ApprovalDecisions.approve, ApprovalDecisions.deny];
  if (decision !== ApprovalDecisions.cancelled && !offered.includes(decision)) {
    return { decision: "deny", invalid: `result.decision "${decision}" was not offered (${offered.join(", ")})` };
  }
  const reason = result["reason"];
  if (reason !== undefined && typeof reason !== "string") return { decision: "deny", invalid: "result.reason must be a string" };
  return reason === undefined ? { decision: decision as ApprovalDecision } : { decision: decision as ApprovalDecision, reason };
}

/**
 * The host's outgoing requests and their answers. The host core routes every JSON-RPC response
 * it reads to {@link ApprovalGate.answer}, tells it which connection speaks for a session
 * ({@link ApprovalGate.attach}), and that a connection closed ({@link ApprovalGate.detach}).
 *
 * Rules:
 * - A question is asked on the connection that most recently created or resumed its session.
 *   When that connection closes, it is asked on the next most recent one still open; when none
 *   is, it waits unasked.
 * - `session/resume` asks every open question of the session again on the resuming connection
 *   (a new request id), unless that connection already has it outstanding.
 * - The first readable decision the question offered (`approve`, `approveForSession`, `deny`,
 *   `denyAndStop`) decides; any other answer (a late one after a cancel,
 *   one from another connection, a second answer to one id) is ignored and logged.
 * - `cancelled` withdraws the connection that gave it (its user pressed Stop, or it is closing):
 *   it is not asked again unless it resumes, and the question stays open for the `turn/cancel`
 *   that follows a Stop, or, when that connection closes, for the session's next one.
 * - A JSON-RPC error, a malformed result, or a decision the question did not offer is a deny,
 *   with `invalid` saying why: an answer the host cannot read or did not offer never runs a tool.
 *
 * @example
 * ```ts
 * const gate = new ApprovalGate({ logger: console.error });
 * gate.attach(sessionId, subscriber);
 * const answer = await gate.ask(params, signal); // rejects with signal.reason when the turn is cancelled
 * ```
 */
export class ApprovalGate<T extends AskTarget = AskTarget> {
  readonly #logger: (line: string) => void;
  readonly #lateCapacity: number;
  readonly #targets = new Map<AskTarget, TargetState>();
  /** Who speaks for each session (most recent last), and the tree below it. */
  readonly #routes: SessionRoutes<T>;
  /** Open questions by session. */
  readonly #open = new Map<string, Set<Question>>();

  constructor(options: ApprovalGateOptions<T> = {}) {
    this.#logger = options.logger ?? (() => {});
    this.#lateCapacity = options.lateAnswersPerTarget ?? LATE_ANSWERS_REMEMBERED;
    this.#routes = options.routes ?? new SessionRoutes<T>();
  }

  /** How many questions are open now, over all sessions. */
  get openCount(): number {
    let n = 0;
    for (const set of this.#open.values()) n += set.size;
    return n;
  }

  #state(target: AskTarget): TargetState {
    let state = this.#targets.get(target);
    if (state === undefined) {
      state = { nextId: 1, open: new Map(), late: new BoundedMap({ capacity: this.#lateCapacity }), withdrew: new Set() };
      this.#targets.set(target, state);
    }
    return state;
  }

  #send(question: Question, target: AskTarget): void {
    if (question.asks.has(target)) return;
    const state = this.#state(target);
    question.withdrewFrom.delete(target);
    state.withdrew.delete(question);
    const id = `approve-${state.nextId++}`;
    state.open.set(id, question);
    question.asks.set(target, id);
    try {
      target.send({ jsonrpc: "2.0", id, method: HostRequests.toolApprove, params: { ...question.params } });
    } catch (error) {
      // A subscriber that cannot take the request is as good as closed for this question: it stays
      // open for the next connection or resume, and the turn goes on waiting (or is cancelled).
      state.open.delete(id);
      question.asks.delete(target);
      this.#logger(`tool/approve ${id} of call ${question.params.callId} could not be sent: ${(error as Error).message}`);
    }
  }

  /** Closes `question`: its outstanding requests become late ones, then it settles with `answer` (unless withdrawn). */
  #close(question: Question, why: string): void {
    question.closed = true;
    for (const target of question.withdrewFrom) this.#targets.get(target)?.withdrew.delete(question);
    question.withdrewFrom.clear();
    for (const [target, id] of question.asks) {
      const state = this.#targets.get(target);
      if (state === undefined) continue;
      state.open.delete(id);
      state.late.set(id, why);
    }
    question.asks.clear();
    const set = this.#open.get(question.params.sessionId);
    set?.delete(question);
    if (set?.size === 0) this.#open.delete(question.params.sessionId);
  }

  /**
   * Asks the client whether the tool call may run. Resolves with the first readable answer (or a
   * deny for an unreadable one). When `signal` aborts first, the question is withdrawn (a later
   * answer is ignored) and the promise rejects with `signal.reason`.
   */
  ask(params: ToolApproveParams, signal: AbortSignal): Promise<ApprovalAnswer> {
    signal.throwIfAborted();
    return new Promise<ApprovalAnswer>((resolve, reject) => {
      const onAbort = () => {
        this.#close(question, "withdrawn: its turn was cancelled");
        reject(signal.reason);
      };
      const question: Question = {
        params,
        asks: new Map(),
        withdrewFrom: new Set(),
        closed: false,
        settle: (answer) => {
          signal.removeEventListener("abort", onAbort);
          this.#close(question, `already answered "${answer.decision}"`);
          resolve(answer);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      let set = this.#open.get(params.sessionId);
      if (set === undefined) {
        set = new Set();
        this.#open.set(params.sessionId, set);
      }
      set.add(question);
      const speaker = this.#routes.speakerOf(params.sessionId);
      if (speaker !== undefined) this.#send(question, speaker);
    });
  }

  /**
   * `target` now speaks for `sessionId` and the sessions linked below it (it created or resumed
   * it): their next questions go to it. With `reask` (a `session/resume`), every open question of
   * them is asked on it now, unless it has that question outstanding already.
   */
  attach(sessionId: string, target: T, options: { reask?: boolean } = {}): void {
    const sessions = this.#routes.speak(target, sessionId);
    if (options.reask !== true) return;
    for (const id of sessions) for (const question of this.#open.get(id) ?? []) this.#send(question, target);
  }

  /**
   * `target` closed. Its answers can no longer come: each question it had outstanding is asked on
   * the session's next most recent connection, or, when there is none, waits for a resume.
   */
  detach(target: T): void {
    const state = this.#targets.get(target);
    this.#targets.delete(target);
    this.#routes.stopSpeaking(target);
    if (state === undefined) return;
    for (const question of [...state.open.values(), ...state.withdrew]) {
      question.asks.delete(target);
      question.withdrewFrom.delete(target);
      const next = this.#routes.speakerOf(question.params.sessionId);
      if (!question.closed && question.asks.size === 0 && next !== undefined) this.#send(question, next);
    }
  }

  /**
   * Takes one JSON-RPC response read from `target` (a message with `result` or `error` and no
   * `method`). Returns false when it answers nothing this gate asked (the caller may log it).
   */
  answer(target: AskTarget, message: Record<string, unknown>): boolean {
    const id = message["id"] as JsonRpcId;
    const state = this.#targets.get(target);
    const question = state?.open.get(id);
    if (state === undefined || question === undefined) {
      const late = state?.late.get(id);
      if (late !== undefined) {
        state?.late.delete(id);
        this.#logger(`tool/approve ${JSON.stringify(id)}: answer ignored (${late})`);
        return true;
      }
      this.#logger(`a response to ${JSON.stringify(id)}, which this host never asked: ignored`);
      return false;
    }
    const answer = readAnswer(message, question.params);
    if (answer.decision === "cancelled") {
      // This client withdrew (a Stop, or it is closing): it is not asked again unless it resumes.
      state.open.delete(id);
      state.late.set(id, "this client withdrew from it");
      question.asks.delete(target);
      question.withdrewFrom.add(target);
      state.withdrew.add(question);
      this.#logger(
        `tool/approve ${JSON.stringify(id)} of call ${question.params.callId}: the client withdrew (${answer.reason ?? "cancelled"}); the question stays open`,
      );
      return true;
    }
    if (answer.invalid !== undefined) this.#logger(`tool/approve ${JSON.stringify(id)} of call ${question.params.callId}: ${answer.invalid}; treated as deny`);
    question.settle({ ...answer, decision: answer.decision });
    return true;
  }
}
