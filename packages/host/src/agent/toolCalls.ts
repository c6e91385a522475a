/** Tool calls of a turn: each asked about first when its script says so, run with the turn's signal, drained on cancel. */
import { randomBytes } from "node:crypto";
import type { ApprovalGrant, ApprovalOffer, ApprovalState, Item, ToolApproveParams, ToolCallItem } from "@muse-code/protocol";
import { TOOL_ABORTED_BEFORE_DISPATCH, TOOL_DENIED_REASON } from "@muse-code/protocol/reasons.js";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import type { ApprovalAnswer } from "../server/approvalGate.js";
import { isoNow } from "./recordedAt.js";
import { TASK_TOOL, type ScriptedToolCall } from "../model/scriptedModel.js";
import { DelegationRefused, type ChildTurn, type Delegate } from "./delegation.js";
import type { SessionGrants } from "./sessionGrants.js";
import type { SessionLogRecord } from "../log/sessionLogRecord.js";
import { runShell, TOOL_PROCESSES_ESCAPED, type ShellOptions, type ToolResult } from "../tools/shellTool.js";

/** The `error` of a denied tool call; `message` is added when the client gave a reason. */
const TOOL_DENIED_ERROR = { name: "ToolDenied", code: "TOOL_DENIED" } as const;

/** Minimum gap between two updates (`item/delta`, or a patch) of one tool call's output. @unit milliseconds */
const TOOL_OUTPUT_THROTTLE_MS = 50;

/** The client's reason, or why its answer could not be read, for an approval record. */
function reasonOf(answer: ApprovalAnswer): { reason?: string; invalid?: boolean } {
  if (answer.invalid !== undefined) return { reason: answer.invalid, invalid: true };
  return answer.reason === undefined ? {} : { reason: answer.reason };
}

/** Why a question was withdrawn, for its approval record: a cancel (no answer), or an answer that came after the cancel. */
function withdrawal(answer: ApprovalAnswer | undefined): { reason?: string } {
  return answer === undefined ? {} : { reason: `answered ${answer.decision} after the turn was cancelled` };
}

/** What running tool calls needs of its session agent. */
export interface ToolCallOutput {
  /** Logs one whole-item notification and publishes it once its record is durable. */
  emitItem(method: "item/started" | "item/completed", item: Item): void;
  /** Logs and publishes the change from `previous` to `next` (revision one more): an `item/delta` for an append, else an `item/updated` patch. */
  changeItem(previous: Item, next: Item): void;
  /** Appends a record durably; false when the log failed. */
  append(record: SessionLogRecord): boolean;
  /** Makes everything written durable now and sends what waited on it. */
  settle(): void;
  /** The error of the session-log write that failed, if one did. */
  logFailure(): Error | undefined;
  /** Cancels the running turn as a default `turn/cancel` does, cause `user` (a `denyAndStop` answer). */
  stopTurn(): void;
}

/**
 * The turn a dispatch runs for: its id, its depth (0 for a top-level turn) and its model (a
 * `task` call plays that model's agents).
 */
export interface DispatchTurn {
  turnId: string;
  depth: number;
  modelName: string;
}

/** What the reference host offers when a call's script does not narrow it. */
const ALL_OFFERS: readonly ApprovalOffer[] = ["approve", "approveForSession", "deny", "denyAndStop"];

/**
 * Runs one session's tool calls: the shell tool, each call asked about first when its script
 * says `approval: true`.
 */
export class ToolCallRunner {
  readonly #sessionId: string;
  readonly #out: ToolCallOutput;
  readonly #ask: (params: ToolApproveParams, signal: AbortSignal) => Promise<ApprovalAnswer>;
  readonly #shell: ShellOptions;
  /** The session's grants: a call one covers runs without a question. */
  readonly #grants: SessionGrants;
  /** Creates a `task` call's child session; without it, a `task` call fails. */
  readonly #delegate: Delegate | undefined;
  /** The child turns the running turn runs now (its `task` calls in flight). */
  #children = 0;
  /** The turn last stopped while one of its calls awaited approval. */
  #stoppedAsking: string | undefined;

  constructor(options: {
    sessionId: string;
    out: ToolCallOutput;
    ask: (params: ToolApproveParams, signal: AbortSignal) => Promise<ApprovalAnswer>;
    shell: ShellOptions;
    grants: SessionGrants;
    delegate?: Delegate;
  }) {
    this.#delegate = options.delegate;
    this.#grants = options.grants;
    this.#sessionId = options.sessionId;
    this.#out = options.out;
    this.#ask = options.ask;
    this.#shell = options.shell;
  }

  /**
   * Asks about a call a turn driver runs itself (an agent's own tool call, already started as
   * `item`), exactly as about a scripted one: a session grant covers it, or `item/updated`
   * pending, `tool/approve` offering `decisions` (all four when absent), and the answer. Resolves
   * with the item `approved` when the call may run, or `undefined` when it was closed here (denied:
   * completed `failed`; withdrawn by a stop or by `withdraw`: completed `cancelled`).
   */
  approve(item: ToolCallItem, decisions: readonly ApprovalOffer[] | undefined, signal: AbortSignal, withdraw?: AbortSignal): Promise<ToolCallItem | undefined> {
    if (withdraw === undefined) return this.#approve(item, decisions, signal);
    return this.#approve(item, decisions, AbortSignal.any([signal, withdraw]), signal);
  }

  /** Turn `turnId` was stopped while one of its calls awaited approval (an abort, or a `denyAndStop`): its cancel point. */
  stoppedWhileAsking(turnId: string): boolean {
    return this.#stoppedAsking === turnId;
  }

  /** Dispatches tool calls in order. On abort, in-flight calls are drained and the rest get synthetic results. */
  async dispatch(context: DispatchTurn, calls: ScriptedToolCall[], signal: AbortSignal): Promise<void> {
    const { turnId } = context;
    // A step's `task` calls run at once (each its child turn); the step ends when all have ended.
    const delegated: Array<Promise<void>> = [];
    let thrown: { error: unknown } | undefined;
    try {
      for (const [i, call] of calls.entries()) {
        if (signal.aborted) {
          for (const skipped of calls.slice(i)) this.#skipCall(turnId, skipped);
          break;
        }
        if (call.tool === TASK_TOOL) delegated.push(this.#runTask(context, call, signal));
        else await this.#runCall(turnId, call, signal);
      }
    } catch (error) {
      thrown = { error };
    }
    // Leaves first: the turn goes on (or ends) only once every child's call has completed.
    const settled = await Promise.allSettled(delegated);
    if (thrown !== undefined) throw thrown.error;
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed !== undefined && !signal.aborted) throw failed.reason;
    signal.throwIfAborted();
  }

  /**
   * A `task` call: a child session plays the named agent in a child turn. The call is linked to it
   * (`subagent` patch, durable and sent) before the child's turn starts, and completes only after
   * the child's terminal: `completed` with the child's last message; `cancelled` with what it wrote
   * so far when this turn was cancelled (the child is cancelled with cause `parent`, or `disposed`
   * at a shutdown); `failed` `subagent cancelled` / `subagent failed: <reason>` when the child
   * ended so on its own (this turn goes on).
   */
  async #runTask(turn: DispatchTurn, call: ScriptedToolCall, signal: AbortSignal): Promise<void> {
    let item = this.#newCallItem(turn.turnId, call);
    this.#out.emitItem("item/started", item);
    const close = (status: "completed" | "failed" | "cancelled", visibleOutput: string, failureReason?: string) => {
      const final: ToolCallItem = { ...item, revision: item.revision + 1, status, recordedAt: isoNow(), visibleOutput, truncated: false };
      if (failureReason !== undefined) final.failureReason = failureReason;
      this.#out.emitItem("item/completed", final);
    };
    if (call.approval === true) {
      const approved = await this.#approve(item, call.decisions, signal);
      if (approved === undefined) return;
      item = approved;
    }
    if (signal.aborted) {
      this.#out.emitItem("item/completed", {
        ...item,
        revision: item.revision + 1,
        status: "cancelled",
        recordedAt: isoNow(),
        failureReason: TOOL_ABORTED_BEFORE_DISPATCH.failureReason,
        error: { ...TOOL_ABORTED_BEFORE_DISPATCH.error },
      });
      return;
    }
    let child: ChildTurn;
    try {
      if (this.#delegate === undefined) throw new DelegationRefused("this host runs no subagents");
      child = this.#delegate({
        parent: { sessionId: this.#sessionId, turnId: turn.turnId, itemId: item.itemId },
        depth: turn.depth + 1,
        agent: String(call.args["agent"]),
        prompt: String(call.args["prompt"] ?? ""),
        modelName: turn.modelName,
        running: this.#children,
      });
    } catch (error) {
      // A bound, or no child session could be made (no descriptor free): this call fails, the turn goes on.
      if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
      return close("failed", "", error instanceof DelegationRefused ? error.message : `subagent failed: ${(error as Error).message}`);
    }
    this.#children++;
    try {
      const linked: ToolCallItem = {
        ...item,
        subagent: { sessionId: child.sessionId, turnId: child.turnId },
        revision: item.revision + 1,
        recordedAt: isoNow(),
      };
      this.#out.changeItem(item, linked);
      item = linked;
      this.#out.settle(); // the link is durable and sent before anything of the child session
      if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
      let ended = false;
      const stopChild = () => {
        if (ended) return;
        const reason = signal.reason as { kind?: string } | undefined;
        child.cancel(reason?.kind === "disposed" ? { kind: "disposed" } : { kind: "parent" });
      };
      signal.addEventListener("abort", stopChild, { once: true });
      try {
        child.start();
      } catch (error) {
        // The child turn could not begin (its log could not be written): this call still completes.
        ended = true;
        signal.removeEventListener("abort", stopChild);
        if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
        return close("failed", "", `subagent failed: the child turn could not start: ${(error as Error).message}`);
      }
      let outcome;
      try {
        outcome = await child.ended();
      } finally {
        ended = true;
        signal.removeEventListener("abort", stopChild);
      }
      const { params, lastMessage } = outcome;
      if (params.terminal === "completed") return close("completed", lastMessage);
      if (params.terminal === "cancelled" && (params.cause?.kind === "parent" || (signal.aborted && params.cause?.kind === "disposed"))) {
        return close("cancelled", lastMessage, "subagent cancelled by its parent");
      }
      if (params.terminal === "cancelled") return close("failed", lastMessage, "subagent cancelled");
      return close("failed", lastMessage, `subagent failed: ${params.reason.replace(/^failed: /, "")}`);
    } finally {
      this.#children--;
    }
  }

  #newCallItem(turnId: string, call: ScriptedToolCall): ToolCallItem {
    return {
      itemId: uuidv7(),
      kind: "toolCall",
      turnId,
      revision: 1,
      status: "inProgress",
      recordedAt: isoNow(),
      tool: call.tool,
      callId: `call_${randomBytes(6).toString("hex")}`,
      args: JSON.stringify(call.args),
      visibleOutput: "",
      truncated: false,
    };
  }

  #skipCall(turnId: string, call: ScriptedToolCall): void {
    const item = this.#newCallItem(turnId, call);
    this.#out.emitItem("item/started", item);
    this.#out.emitItem("item/completed", {
      ...item,
      revision: 2,
      status: "cancelled",
      recordedAt: isoNow(),
      failureReason: TOOL_ABORTED_BEFORE_DISPATCH.failureReason,
      error: { ...TOOL_ABORTED_BEFORE_DISPATCH.error },
    });
  }

  /** Sets the item's approval state: logged (durably) as an approval record, then sent as `item/updated`. */
  #setApproval(item: ToolCallItem, state: ApprovalState, why: { reason?: string; invalid?: boolean } = {}, grant?: ApprovalGrant): ToolCallItem {
    const next: ToolCallItem = { ...item, approval: state, revision: item.revision + 1, recordedAt: isoNow() };
    if (grant !== undefined) next.grant = { ...grant };
    const named = grant === undefined ? {} : { grantId: grant.grantId };
    this.#out.append({ type: "approval", at: Date.now(), turnId: item.turnId, itemId: item.itemId, callId: item.callId, state, ...why, ...named });
    this.#out.changeItem(item, next);
    return next;
  }

  /**
   * Asks before the call runs. Returns the item (`approved`) when it may run, or `undefined` when
   * the call was closed here: denied (it completes `failed`, the turn goes on), or withdrawn by a
   * cancel while asking (it completes `cancelled` as never dispatched; the dispatch loop then gives
   * the step's later calls their synthetic results and ends the turn). An answer of `cancelled`
   * never gets here: it withdraws the connection that gave it, and the question waits on (see
   * {@link ApprovalGate}).
   */
  /** `signal` ends the question; `turnSignal` (the turn's own, when `signal` also carries a driver's withdrawal) says whether that was a stop. */
  async #approve(
    item: ToolCallItem,
    decisions: readonly ApprovalOffer[] | undefined,
    signal: AbortSignal,
    turnSignal: AbortSignal = signal,
  ): Promise<ToolCallItem | undefined> {
    const covering = this.#grants.covering(item.tool, item.args);
    if (covering !== undefined) {
      // A grant of this session covers the call exactly: approved without a question, naming the grant.
      const approved = this.#setApproval(item, "approved", {}, covering);
      if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
      return approved;
    }
    let asked = this.#setApproval(item, "pending");
    this.#out.settle(); // the pending item/updated goes out before the question
    // A question is asked only once its pending state is durable (the log failing shuts the host down).
    if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
    const params: ToolApproveParams = {
      sessionId: this.#sessionId,
      turnId: item.turnId,
      itemId: item.itemId,
      callId: item.callId,
      tool: item.tool,
      args: item.args,
    };
    // What this question offers: the script's narrower list, or all four; never `approveForSession` once the session's grants are full.
    const narrowed = (decisions ?? ALL_OFFERS).filter((d) => d !== "approveForSession" || !this.#grants.full);
    // A question always offers an answer that decides: a script offering only approveForSession, once the grants are full, gets approve and deny.
    const offered: ApprovalOffer[] = narrowed.length > 0 ? narrowed : ["approve", "deny"];
    params.decisions = offered;
    if (offered.includes("approveForSession")) params.grant = { tool: item.tool, args: item.args, match: "exact" };
    let answer: ApprovalAnswer | undefined;
    try {
      answer = await this.#ask(params, signal);
      signal.throwIfAborted();
    } catch (error) {
      if (!signal.aborted) throw error;
      if (turnSignal.aborted) this.#stoppedAsking = item.turnId;
      asked = this.#setApproval(asked, "cancelled", withdrawal(answer));
      this.#out.emitItem("item/completed", {
        ...asked,
        revision: asked.revision + 1,
        status: "cancelled",
        recordedAt: isoNow(),
        failureReason: TOOL_ABORTED_BEFORE_DISPATCH.failureReason,
        error: { ...TOOL_ABORTED_BEFORE_DISPATCH.error },
      });
      return undefined;
    }
    if (answer.decision === "approveForSession") {
      // The grant is durable before the call runs, and before the item that names it is sent.
      const grant: ApprovalGrant = { grantId: uuidv7(), tool: item.tool, args: item.args, match: "exact" };
      this.#out.append({ type: "grant", at: Date.now(), turnId: item.turnId, itemId: item.itemId, callId: item.callId, grant });
      this.#grants.add(grant);
      const approved = this.#setApproval(asked, "approved", reasonOf(answer), grant);
      if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
      return approved;
    }
    if (answer.decision === "approve") {
      const approved = this.#setApproval(asked, "approved", reasonOf(answer));
      // Runs only once its approval is durable (the log failing shuts the host down).
      if (this.#out.logFailure() !== undefined) throw this.#out.logFailure();
      return approved;
    }
    const denied = this.#setApproval(asked, "denied", reasonOf(answer));
    const final: ToolCallItem = {
      ...denied,
      revision: denied.revision + 1,
      status: "failed",
      recordedAt: isoNow(),
      failureReason: answer.invalid === undefined ? TOOL_DENIED_REASON : `denied: ${answer.invalid}`,
      error: { ...TOOL_DENIED_ERROR },
    };
    // The client's reason (or what was wrong with its answer), for the UI to show.
    const why = answer.invalid ?? answer.reason;
    if (why !== undefined) final.error = { ...TOOL_DENIED_ERROR, message: why };
    this.#out.emitItem("item/completed", final);
    if (answer.decision === "denyAndStop") {
      // The user's Stop, given in the dialog: the turn is cancelled (cause user) through the normal drain.
      this.#stoppedAsking = item.turnId;
      this.#out.stopTurn();
    }
    return undefined;
  }

  async #runCall(turnId: string, call: ScriptedToolCall, signal: AbortSignal): Promise<void> {
    let item = this.#newCallItem(turnId, call);
    this.#out.emitItem("item/started", item);
    if (call.approval === true) {
      const approved = await this.#approve(item, call.decisions, signal);
      if (approved === undefined) return;
      item = approved;
    }
    let done = false;
    let lastSent = 0;
    let timer: NodeJS.Timeout | undefined;
    let latest: { out: string; truncated: boolean } | undefined;
    const flush = () => {
      timer = undefined;
      if (done || latest === undefined || latest.out === item.visibleOutput) return;
      const previous = item;
      item = { ...item, visibleOutput: latest.out, truncated: latest.truncated, revision: item.revision + 1, recordedAt: isoNow() };
      lastSent = Date.now();
      this.#out.changeItem(previous, item); // new output is an append (an item/delta); a truncation, a patch
    };
    const onOutput = (out: string, truncated: boolean) => {
      latest = { out, truncated };
      if (timer !== undefined) return;
      const wait = TOOL_OUTPUT_THROTTLE_MS - (Date.now() - lastSent);
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    };
    let result: ToolResult;
    try {
      result = await this.#execute(call, { signal, onOutput });
    } finally {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
    }
    const final: ToolCallItem = {
      ...item,
      revision: item.revision + 1,
      status: result.status,
      recordedAt: isoNow(),
      visibleOutput: result.visibleOutput,
      truncated: result.truncated,
    };
    if (result.failureReason !== undefined) final.failureReason = result.failureReason;
    if (result.escaped === true) final.error = { ...TOOL_PROCESSES_ESCAPED };
    this.#out.emitItem("item/completed", final);
  }

  async #execute(call: ScriptedToolCall, exec: { signal: AbortSignal; onOutput: (out: string, truncated: boolean) => void }): Promise<ToolResult> {
    if (call.tool !== "shell") {
      return { status: "failed", visibleOutput: "", truncated: false, failureReason: `unknown tool ${call.tool}`, exitCode: null };
    }
    const command = call.args["command"];
    if (typeof command !== "string") {
      return { status: "failed", visibleOutput: "", truncated: false, failureReason: "invalid args: command must be a string", exitCode: null };
    }
    try {
      return await runShell(command, exec, this.#shell);
    } catch (error) {
      return { status: "failed", visibleOutput: "", truncated: false, failureReason: `tool error: ${(error as Error).message}`, exitCode: null };
    }
  }
}
