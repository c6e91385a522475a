/** The per-session agent loop of seed 000: inbox, phase machine, checkpoints, salvage and tool drain. */
import { randomBytes } from "node:crypto";
import { setImmediate as nextTick } from "node:timers/promises";
import { v7 as uuidv7 } from "uuid";
import type {
  ApprovalState,
  CancelCause,
  Item,
  MessageItem,
  NotificationMethod,
  ReasoningItem,
  Terminal,
  ToolCallItem,
  TurnCompletedParams,
  TurnInput,
  ToolApproveParams,
} from "../protocol/index.js";
import type { ApprovalAnswer } from "./approvalGate.js";
import { PhaseMachine } from "./phaseMachine.js";
import { stepChunks, streamStep, type ModelChunk, type ScriptedModel, type ScriptedStep, type ScriptedToolCall } from "./scriptedModel.js";
import { LogUnavailableError, type SessionLog, type SessionLogRecord } from "./sessionLog.js";
import { runShell, TOOL_PROCESSES_ESCAPED, type ShellOptions, type ToolResult } from "./shellTool.js";
import { formatViewCursor } from "../protocol/cursor.js";
import { TOOL_ABORTED_BEFORE_DISPATCH, TOOL_DENIED_REASON, TurnReasons } from "../protocol/reasons.js";
import { traceMark, tracing } from "./traceMarks.js";

/** The `error` of a denied tool call; `message` is added when the client gave a reason. */
const TOOL_DENIED_ERROR = { name: "ToolDenied", code: "TOOL_DENIED" } as const;

/** Where a running turn was when its abort was observed. */
type CancelPoint = "promptAssembly" | "stepBoundary" | "modelStream" | "toolExecution" | "approval";

const reasonAt: Record<CancelPoint, string> = {
  promptAssembly: TurnReasons.cancelledDuringPromptAssembly,
  stepBoundary: TurnReasons.cancelledAtStepBoundary,
  modelStream: TurnReasons.cancelledDuringModelStream,
  toolExecution: TurnReasons.cancelledDuringToolExecution,
  approval: TurnReasons.cancelledAwaitingApproval,
};

/** Minimum gap between two `item/updated` of one tool call's output. @unit milliseconds */
const TOOL_OUTPUT_THROTTLE_MS = 50;

/**
 * A step that streams without pausing yields to the event loop after this many chunks, so its
 * batch's sync starts (and commands, e.g. a `turn/cancel`, are read) while it streams on.
 */
const STREAM_YIELD_EVERY = 64;

/**
 * How many of a session's records may be written and not yet durable before a streaming step
 * waits for them (group-commit backpressure: memory held for unsent notifications stays bounded).
 */
const STREAM_UNSYNCED_MAX = 1024;

/** A turn accepted into a session: running or waiting in the inbox. */
interface AcceptedTurn {
  turnId: string;
  input: TurnInput[];
  acceptedAt: number;
}

/**
 * What a session agent knows about one of its turns.
 *
 * @example
 * ```ts
 * function showTurn(agent: SessionAgent, turnId: string): void {
 *   const state: TurnState | undefined = agent.turnState(turnId);
 *   if (state?.state === "terminal") console.log(state.params.terminal);
 * }
 * ```
 */
export type TurnState = { state: "running" } | { state: "queued" } | { state: "terminal"; params: TurnCompletedParams };

/**
 * Everything a {@link SessionAgent} needs.
 *
 * @example
 * ```ts
 * const options: SessionAgentOptions = {
 *   sessionId,
 *   log: SessionLog.open(sessionLogPath("/var/muse", sessionId)),
 *   models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]),
 *   modelName: "default",
 *   publish: (method, params) => console.log(method, params),
 * };
 * ```
 */
export interface SessionAgentOptions {
  sessionId: string;
  log: SessionLog;
  models: ReadonlyMap<string, ScriptedModel>;
  modelName: string;
  /** The last cursor sequence already used (0 for a new session). */
  lastCursor?: number;
  /** Turns already started in earlier runs (picks the next script turn). */
  startedTurns?: number;
  /** Terminals of turns completed in earlier runs (the logged params, with their cursors). */
  terminals?: Map<string, TurnCompletedParams>;
  /** Every turn accepted in earlier runs, with its disposition (a retried turn/start answers it). */
  accepted?: Map<string, "started" | "queued">;
  /**
   * Called once, synchronously, when a session-log write fails. From then on the session logs and
   * publishes nothing more (a notification is never sent unless it is durable); the host is expected
   * to shut down.
   */
  onLogFailure?: (error: Error) => void;
  /**
   * Sends a notification (already logged) to the clients. `json`, when given, is exactly
   * `JSON.stringify(notificationMessage(method, params))`, already made while logging it.
   */
  publish: (method: NotificationMethod, params: Record<string, unknown>, json?: string) => void;
  shell?: ShellOptions;
  /**
   * Asks the client about a tool call whose script says `approval: true` (the host's
   * {@link ApprovalGate}). Rejects with `signal.reason` when the turn is cancelled first. Without
   * it, every such call is denied: no client can be asked.
   */
  ask?: (params: ToolApproveParams, signal: AbortSignal) => Promise<ApprovalAnswer>;
}

type TextItem = MessageItem | ReasoningItem;

/** The client's reason, or why its answer could not be read, for an approval record. */
function reasonOf(answer: ApprovalAnswer): { reason?: string; invalid?: boolean } {
  if (answer.invalid !== undefined) return { reason: answer.invalid, invalid: true };
  return answer.reason === undefined ? {} : { reason: answer.reason };
}

/** Why a question was withdrawn, for its approval record: a cancel (no answer), or an answer that came after the cancel. */
function withdrawal(answer: ApprovalAnswer | undefined): { reason?: string } {
  return answer === undefined ? {} : { reason: `answered ${answer.decision} after the turn was cancelled` };
}

let isoMs = Number.NaN;
let isoText = "";

/**
 * `new Date().toISOString()`, made once a millisecond: a streaming turn stamps every update's
 * `recordedAt`, many of them in the same millisecond, and formatting costs more than the rest of
 * the update's bookkeeping.
 */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

function newTextItem(kind: "message" | "reasoning", turnId: string): TextItem {
  const base = { itemId: uuidv7(), turnId, revision: 1, status: "inProgress" as const, recordedAt: isoNow(), text: "" };
  return kind === "message" ? { ...base, kind } : { ...base, kind };
}

/**
 * One session's agent. Turns run one at a time; later turns wait in the inbox. Every notification
 * is appended to the session log (durably) before it is published.
 *
 * @example
 * ```ts
 * const log = SessionLog.open(sessionLogPath("/var/muse", sessionId));
 * const models = new Map([["default", loadScriptedModel("models/hello.json", "default")]]);
 * const agent = new SessionAgent({ sessionId, log, models, modelName: "default", publish: (method, params) => console.log(method, params) });
 * agent.startTurn(turnId, [{ type: "text", text: "hi" }]); // "started"
 * agent.cancelTurn(turnId, { kind: "user" }, false);
 * await agent.whenIdle();
 * ```
 */
export class SessionAgent {
  readonly sessionId: string;
  readonly #log: SessionLog;
  readonly #models: ReadonlyMap<string, ScriptedModel>;
  readonly #publish: SessionAgentOptions["publish"];
  readonly #shell: ShellOptions;
  readonly #machine = new PhaseMachine();
  readonly #terminals: Map<string, TurnCompletedParams>;
  readonly #accepted: Map<string, "started" | "queued">;
  readonly #onLogFailure: (error: Error) => void;
  readonly #ask: NonNullable<SessionAgentOptions["ask"]>;
  #logFailure: Error | undefined;
  /** The running turn's abort was observed while its tool call awaited approval. */
  #abortedWhileAsking = false;
  #inbox: AcceptedTurn[] = [];
  #running: AcceptedTurn | undefined;
  #modelName: string;
  #cursor: number;
  #startedTurns: number;
  #begunTurns = 0;
  #idleWaiters: Array<() => void> = [];

  constructor(options: SessionAgentOptions) {
    this.sessionId = options.sessionId;
    this.#log = options.log;
    this.#models = options.models;
    this.#modelName = options.modelName;
    this.#publish = options.publish;
    this.#shell = options.shell ?? {};
    this.#cursor = options.lastCursor ?? 0;
    this.#startedTurns = options.startedTurns ?? 0;
    this.#terminals = options.terminals ?? new Map();
    this.#accepted = options.accepted ?? new Map();
    this.#onLogFailure = options.onLogFailure ?? (() => {});
    this.#ask = options.ask ?? (async () => ({ decision: "deny", invalid: "the host has no client to ask" }));
    this.#log.onFailure((error) => this.#fail(error));
  }

  /** The error of the session-log write that failed, if one did. */
  get logFailure(): Error | undefined {
    return this.#logFailure;
  }

  /** The disposition turn `turnId` was accepted with, or `undefined` when it never was. */
  acceptedTurn(turnId: string): "started" | "queued" | undefined {
    return this.#accepted.get(turnId);
  }

  /** Appends durably; on failure records it, reports it once, and returns false. */
  #append(record: SessionLogRecord): boolean {
    if (this.#logFailure !== undefined) return false;
    try {
      this.#log.append(record);
      return true;
    } catch (error) {
      this.#fail(error);
      return false;
    }
  }

  /**
   * Writes now and runs `onDurable` once the record is synced (group commit: one fdatasync for
   * every record written in the same event-loop turn). On a failed write, records it, reports it
   * once, and returns false; a failed sync is reported through the log's failure listener.
   */
  #write(record: SessionLogRecord, onDurable?: (wireJson?: string) => void): boolean {
    if (this.#logFailure !== undefined) return false;
    try {
      this.#log.write(record, onDurable);
      return true;
    } catch (error) {
      this.#fail(error);
      return false;
    }
  }

  /**
   * Makes everything written durable now and sends what waited on it, so whatever the caller does
   * next (answer a command, ask a question) comes after it on the wire.
   */
  #settle(): void {
    if (this.#logFailure !== undefined) return;
    try {
      this.#log.settle();
    } catch (error) {
      this.#fail(error);
    }
  }

  #fail(error: unknown): void {
    if (this.#logFailure !== undefined) return;
    this.#logFailure = error instanceof Error ? error : new Error(String(error));
    this.#onLogFailure(this.#logFailure);
  }

  /**
   * Appends durably for a command. When no descriptor was free to open the log
   * ({@link LogUnavailableError}), nothing was written: the error is thrown as it is, the command
   * fails, and the session goes on. Any other failure fails the session's log.
   */
  #appendOrThrow(record: SessionLogRecord): void {
    if (this.#logFailure === undefined) {
      try {
        this.#log.append(record);
        return;
      } catch (error) {
        if (error instanceof LogUnavailableError) throw error;
        this.#fail(error);
      }
    }
    throw new Error(`session log ${this.#log.path} failed: ${this.#logFailure?.message ?? "unknown error"}`);
  }

  /** The model the next turn will use. */
  get modelName(): string {
    return this.#modelName;
  }

  /** The phase machine (read-only use: inspect `phase`). */
  get machine(): PhaseMachine {
    return this.#machine;
  }

  /** The sequence number of the last notification this session logged and sent (0 before the first). */
  get lastCursor(): number {
    this.#settle(); // every notification up to it is durable and sent (a replay reads the log next)
    return this.#cursor;
  }

  /** The session log's path. */
  get logPath(): string {
    return this.#log.path;
  }

  /** Switches the model from the next turn on; returns the previous model's name. */
  setModel(name: string): string {
    const previous = this.#modelName;
    this.#appendOrThrow({ type: "model", at: Date.now(), model: name, previousModel: previous });
    this.#modelName = name;
    return previous;
  }

  /** Where turn `turnId` is, or `undefined` when this session never accepted it. */
  turnState(turnId: string): TurnState | undefined {
    const params = this.#terminals.get(turnId);
    if (params !== undefined) {
      this.#settle(); // its terminal is durable and sent before any answer that says the turn is terminal
      return { state: "terminal", params };
    }
    if (this.#running?.turnId === turnId) return { state: "running" };
    if (this.#inbox.some((t) => t.turnId === turnId)) return { state: "queued" };
    return undefined;
  }

  /** Accepts a turn: it starts now when nothing is running, else it waits in the inbox. */
  startTurn(turnId: string, input: TurnInput[]): "started" | "queued" {
    const turn: AcceptedTurn = { turnId, input, acceptedAt: Date.now() };
    const disposition = this.#running === undefined && this.#inbox.length === 0 ? "started" : "queued";
    this.#appendOrThrow({ type: "turnAccepted", at: turn.acceptedAt, turnId, input, disposition });
    this.#accepted.set(turnId, disposition);
    if (disposition === "started") this.#begin(turn);
    else this.#inbox.push(turn);
    return disposition;
  }

  /**
   * Cancels the active activity with `cause` (first cause wins; a no-op when idle). Unless
   * `keepInbox`, every queued turn is discarded, each closed with its own cancelled terminal.
   */
  cancel(cause: CancelCause, options: { keepInbox?: boolean } = {}): void {
    this.#cancel(cause, options.keepInbox === true);
    this.#settle(); // the discarded turns' terminals are durable (and sent) before the answer
  }

  /** Aborts (the tool's SIGTERM goes first), then writes the cancel's records; syncing them is the caller's. */
  #cancel(cause: CancelCause, keepInbox: boolean): void {
    const running = this.#running;
    // Only the winning cause is logged: a later cancel of the same activity changes nothing.
    if (this.#machine.cancel(cause) && running !== undefined) {
      this.#write({ type: "cancelRequested", at: Date.now(), turnId: running.turnId, cause, keepInbox });
    }
    if (!keepInbox) {
      const discarded = this.#inbox;
      this.#inbox = [];
      for (const turn of discarded) this.#complete(turn.turnId, "cancelled", TurnReasons.discardedFromInbox, cause, turn.acceptedAt);
    }
  }

  /**
   * Cancels one turn: the running one through {@link SessionAgent.cancel}, a queued one by closing
   * it alone ("cancelled before start"). Terminal or unknown turns are the caller's to reject.
   *
   * Without `onDurable`, its records (`cancelRequested`, and the terminals of the turns it closed)
   * are durable and sent when it returns. With it, it returns as soon as they are written (the
   * running tool was signalled first) and `onDurable` is called once they are durable, in order
   * with the notifications (so an answer sent from it follows the terminals it caused), or with
   * the log's error: the host answers `turn/cancel` from there, and never blocks its event loop
   * on the sync.
   */
  cancelTurn(turnId: string, cause: CancelCause, keepInbox: boolean, onDurable?: (error?: Error) => void): void {
    if (tracing) traceMark("cancel.received", this.sessionId);
    if (this.#running?.turnId === turnId) {
      this.#cancel(cause, keepInbox);
    } else {
      const at = this.#inbox.findIndex((t) => t.turnId === turnId);
      const turn = this.#inbox[at];
      if (turn !== undefined) {
        this.#inbox.splice(at, 1);
        this.#write({ type: "cancelRequested", at: Date.now(), turnId, cause, keepInbox });
        this.#complete(turnId, "cancelled", TurnReasons.cancelledBeforeStart, cause, turn.acceptedAt);
      }
    }
    const traced =
      tracing && onDurable !== undefined
        ? (error?: Error) => {
            traceMark("cancel.logged", this.sessionId);
            onDurable(error);
          }
        : onDurable;
    if (traced === undefined) {
      this.#settle();
      if (tracing) traceMark("cancel.logged", this.sessionId);
      return;
    }
    if (this.#logFailure !== undefined) return traced(this.#logFailure);
    this.#log.afterDurable(traced);
  }

  /**
   * True when nothing runs or waits in this session and everything it logged is durable and sent:
   * the host may {@link SessionAgent.unload} it and load it again from its log when it is next named.
   */
  get unloadable(): boolean {
    return this.#running === undefined && this.#inbox.length === 0 && this.#log.unsynced === 0 && this.#logFailure === undefined;
  }

  /** Closes the log of an {@link SessionAgent.unloadable} session; this agent is not used again. */
  unload(): void {
    this.#log.close();
  }

  /** Resolves once no turn is running or queued and everything logged is durable and sent (at once if so already). */
  whenIdle(): Promise<void> {
    if (this.#running === undefined && this.#inbox.length === 0) return this.#log.durable();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Cancels everything with cause `disposed`, drains, and closes the log. */
  async dispose(): Promise<void> {
    this.cancel({ kind: "disposed" });
    await this.whenIdle();
    try {
      this.#log.close();
    } catch {
      // closing a log whose device failed; nothing more to write anyway
    }
  }

  #begin(turn: AcceptedTurn): void {
    // From the first turn until the session is idle again, its log stays open outside the
    // descriptor cache: a running turn never has to reopen it (so never meets EMFILE).
    this.#log.hold();
    this.#running = turn;
    const signal = this.#machine.enterRunning(turn.turnId, this.#begunTurns++);
    const modelName = this.#modelName; // a later setModel affects the next turn, not this one
    // Run after the turn/start response has been written.
    setImmediate(() => void this.#run(turn, modelName, signal));
  }

  /**
   * Logs one notification and publishes it once its record is durable (group commit); returns its
   * params, or `undefined` when it could not be logged (then nothing is ever sent).
   */
  #emit(method: NotificationMethod, body: Record<string, unknown>): Record<string, unknown> | undefined {
    if (this.#logFailure !== undefined) return undefined;
    const n = this.#cursor + 1;
    const emittedAtMs = Date.now();
    const params = { sessionId: this.sessionId, viewCursor: formatViewCursor(this.sessionId, n), emittedAtMs, ...body };
    const traced = tracing && (method === "item/completed" || method === "turn/completed");
    if (traced) traceMark(`${method}.write`, this.sessionId);
    const publish = traced
      ? (json?: string) => {
          traceMark(`${method}.durable`, this.sessionId);
          this.#publish(method, params, json);
          traceMark(`${method}.sent`, this.sessionId);
        }
      : (json?: string) => this.#publish(method, params, json);
    if (!this.#write({ type: "notification", at: emittedAtMs, n, method, params }, publish)) return undefined;
    this.#cursor = n;
    return params;
  }

  #emitItem(method: "item/started" | "item/updated" | "item/completed", item: Item): void {
    this.#emit(method, { item: { ...item } });
  }

  #complete(turnId: string, terminal: Terminal, reason: string, cause: CancelCause | undefined, since: number): void {
    const body: Record<string, unknown> = { turnId, terminal, reason, durationMs: Date.now() - since };
    if (cause !== undefined) body["cause"] = { ...cause };
    const sent = this.#emit("turn/completed", body);
    if (sent === undefined) return; // not durable, so not sent: a restart closes it ("host restarted")
    this.#terminals.set(turnId, sent as unknown as TurnCompletedParams);
    const at = Date.now();
    this.#write(cause === undefined ? { type: "turnCompleted", at, turnId, terminal, reason } : { type: "turnCompleted", at, turnId, terminal, reason, cause });
  }

  async #run(turn: AcceptedTurn, modelName: string, signal: AbortSignal): Promise<void> {
    try {
      if (signal.aborted) {
        this.#complete(turn.turnId, "cancelled", TurnReasons.cancelledBeforeStart, signal.reason as CancelCause, turn.acceptedAt);
        return;
      }
      const startedAt = Date.now();
      const index = this.#startedTurns++;
      const model = this.#models.get(modelName);
      this.#write({ type: "turnStarted", at: startedAt, turnId: turn.turnId, turn: index });
      this.#emit("turn/started", { turnId: turn.turnId, model: modelName });
      let where: CancelPoint = "promptAssembly";
      this.#abortedWhileAsking = false;
      try {
        if (model === undefined) throw new Error(`model ${modelName} is not loaded`);
        const script = model.turnFor?.(index, turn.input) ?? model.turnAt(index);
        await nextTick(); // prompt assembly (the scripted model has none; yield like real I/O would)
        signal.throwIfAborted();
        for (const [s, step] of script.steps.entries()) {
          where = "stepBoundary";
          this.#machine.setStep(s);
          signal.throwIfAborted();
          where = "modelStream";
          const calls = await this.#streamStep(turn.turnId, step, signal);
          where = "toolExecution";
          await this.#dispatch(turn.turnId, calls, signal);
        }
        this.#complete(turn.turnId, "completed", TurnReasons.completed, undefined, startedAt);
      } catch (error) {
        if (signal.aborted) {
          const point = this.#abortedWhileAsking ? "approval" : where;
          this.#complete(turn.turnId, "cancelled", reasonAt[point], signal.reason as CancelCause, startedAt);
        } else {
          this.#complete(turn.turnId, "failed", `failed: ${(error as Error).message}`, undefined, startedAt);
        }
      }
    } finally {
      this.#machine.toIdle();
      this.#running = undefined;
      const next = this.#inbox.shift();
      if (next !== undefined) {
        this.#begin(next);
      } else {
        this.#log.release();
        const waiters = this.#idleWaiters;
        this.#idleWaiters = [];
        // Idle once the turn's last records (its terminal) are durable and sent.
        void this.#log.durable().then(() => {
          for (const w of waiters) w();
        });
      }
    }
  }

  /** Streams one step's text items; returns its tool calls (dropped if the stream is interrupted). */
  async #streamStep(turnId: string, step: ScriptedStep, signal: AbortSignal): Promise<ScriptedToolCall[]> {
    const calls: ScriptedToolCall[] = [];
    // The open item. It is announced (item/started) only once its text has non-whitespace
    // content, so an interrupted stream never salvages a whitespace-only item.
    let open: TextItem | undefined;
    let announced = false;
    let chunks = 0;
    const announce = (item: TextItem) => {
      this.#emitItem("item/started", { ...item, text: "", revision: 1 });
      announced = true;
    };
    const close = (status: "completed" | "cancelled" | "failed") => {
      if (open === undefined) return;
      const item = open;
      open = undefined;
      if (!announced) {
        if (status !== "completed" || item.text === "") return; // nothing worth salvaging
        announce(item);
        item.revision = 1;
      }
      const done: TextItem = { ...item, revision: item.revision + 1, status, recordedAt: isoNow() };
      if (status !== "completed") done.interrupted = true;
      this.#emitItem("item/completed", done);
    };
    /** Takes one chunk; returns what to wait for before the next one, if anything. */
    const take = (chunk: ModelChunk): Promise<unknown> | undefined => {
      signal.throwIfAborted(); // on every chunk
      if (chunk.kind === "toolCall") {
        close("completed");
        calls.push(chunk.call);
        return undefined;
      }
      const kind = chunk.kind === "text" ? "message" : "reasoning";
      if (open !== undefined && open.kind !== kind) close("completed");
      let current: TextItem;
      if (open === undefined) {
        current = newTextItem(kind, turnId);
        announced = false;
      } else {
        current = open;
      }
      const text = current.text + chunk.delta;
      if (!announced) {
        open = { ...current, text };
        if (text.trim() === "") return undefined;
        announce(current);
        current = { ...current, revision: 1 };
      }
      current = { ...current, text, revision: current.revision + 1, recordedAt: isoNow() };
      open = current;
      this.#emit("item/updated", { item: current }); // a new object every update, never changed after: no copy
      // A step that streams without pausing: yield now and then, and wait when too much is unsent.
      if (this.#log.unsynced >= STREAM_UNSYNCED_MAX) return this.#log.durable();
      if (++chunks % STREAM_YIELD_EVERY === 0) return nextTick();
      return undefined;
    };
    signal.throwIfAborted(); // before iterating the stream
    try {
      if (step.chunkDelayMs > 0) {
        for await (const chunk of streamStep(step, signal)) await take(chunk);
      } else {
        // No pauses: the chunks are taken in a plain loop, with no promise a chunk; the event loop
        // still gets its turn every STREAM_YIELD_EVERY chunks (a turn/cancel is read there).
        for (const chunk of stepChunks(step)) {
          const wait = take(chunk);
          if (wait !== undefined) await wait;
        }
      }
      close("completed");
      return calls;
    } catch (error) {
      // Salvage the prefix: the open item keeps its text, marked interrupted. Tool calls are dropped.
      close(signal.aborted ? "cancelled" : "failed");
      throw error;
    }
  }

  /** Dispatches tool calls in order. On abort, in-flight calls are drained and the rest get synthetic results. */
  async #dispatch(turnId: string, calls: ScriptedToolCall[], signal: AbortSignal): Promise<void> {
    for (const [i, call] of calls.entries()) {
      if (signal.aborted) {
        for (const skipped of calls.slice(i)) this.#skipCall(turnId, skipped);
        signal.throwIfAborted();
      }
      await this.#runCall(turnId, call, signal);
    }
    signal.throwIfAborted();
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
    this.#emitItem("item/started", item);
    this.#emitItem("item/completed", {
      ...item,
      revision: 2,
      status: "cancelled",
      recordedAt: isoNow(),
      failureReason: TOOL_ABORTED_BEFORE_DISPATCH.failureReason,
      error: { ...TOOL_ABORTED_BEFORE_DISPATCH.error },
    });
  }

  /** Sets the item's approval state: logged (durably) as an approval record, then sent as `item/updated`. */
  #setApproval(item: ToolCallItem, state: ApprovalState, why: { reason?: string; invalid?: boolean } = {}): ToolCallItem {
    const next: ToolCallItem = { ...item, approval: state, revision: item.revision + 1, recordedAt: isoNow() };
    this.#append({ type: "approval", at: Date.now(), turnId: item.turnId, itemId: item.itemId, callId: item.callId, state, ...why });
    this.#emitItem("item/updated", next);
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
  async #approve(item: ToolCallItem, signal: AbortSignal): Promise<ToolCallItem | undefined> {
    let asked = this.#setApproval(item, "pending");
    this.#settle(); // the pending item/updated goes out before the question
    // A question is asked only once its pending state is durable (the log failing shuts the host down).
    if (this.#logFailure !== undefined) throw this.#logFailure;
    const params: ToolApproveParams = {
      sessionId: this.sessionId,
      turnId: item.turnId,
      itemId: item.itemId,
      callId: item.callId,
      tool: item.tool,
      args: item.args,
    };
    let answer: ApprovalAnswer | undefined;
    try {
      answer = await this.#ask(params, signal);
      signal.throwIfAborted();
    } catch (error) {
      if (!signal.aborted) throw error;
      this.#abortedWhileAsking = true;
      asked = this.#setApproval(asked, "cancelled", withdrawal(answer));
      this.#emitItem("item/completed", {
        ...asked,
        revision: asked.revision + 1,
        status: "cancelled",
        recordedAt: isoNow(),
        failureReason: TOOL_ABORTED_BEFORE_DISPATCH.failureReason,
        error: { ...TOOL_ABORTED_BEFORE_DISPATCH.error },
      });
      return undefined;
    }
    if (answer.decision === "approve") {
      const approved = this.#setApproval(asked, "approved", reasonOf(answer));
      // Runs only once its approval is durable (the log failing shuts the host down).
      if (this.#logFailure !== undefined) throw this.#logFailure;
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
    this.#emitItem("item/completed", final);
    return undefined;
  }

  async #runCall(turnId: string, call: ScriptedToolCall, signal: AbortSignal): Promise<void> {
    let item = this.#newCallItem(turnId, call);
    this.#emitItem("item/started", item);
    if (call.approval === true) {
      const approved = await this.#approve(item, signal);
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
      item = { ...item, visibleOutput: latest.out, truncated: latest.truncated, revision: item.revision + 1, recordedAt: isoNow() };
      lastSent = Date.now();
      this.#emitItem("item/updated", item);
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
    this.#emitItem("item/completed", final);
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
