/** The per-session agent loop of seed 000: inbox, phase machine, checkpoints, salvage and tool drain. */
import type { CancelCause, Item, NotificationMethod, Terminal, TurnCompletedParams, TurnInput, TurnUsage } from "@muse-code/protocol";
import { PhaseMachine } from "./phaseMachine.js";
import { addUsage } from "../model/scriptedModel.js";
import { AgentLog } from "./agentLog.js";
import type { SessionLog } from "../log/sessionLog.js";
import type { SessionLogRecord } from "../log/sessionLogRecord.js";
import { ToolCallRunner } from "./toolCalls.js";
import type { ChildOutcome, ChildTurnSpec } from "./delegation.js";
import { ChildTurnWaits } from "./childTurnWaits.js";
import { SessionGrants } from "./sessionGrants.js";
import { itemChange } from "./itemChanges.js";
import { TurnReasons } from "@muse-code/protocol/reasons.js";
import { traceMark, tracing } from "../server/traceMarks.js";
import { SessionSteering } from "./sessionSteering.js";
import { SessionWire } from "./sessionWire.js";
import type { AcceptedTurn, SessionAgentOptions, SteerOutcome, TurnState } from "./sessionAgentOptions.js";
import { ScriptedTurns } from "./scriptedTurn.js";
import { cancelReasons, TurnStopFailedError, type CancelPoint, type TurnContext, type TurnDriver } from "./turnDriver.js";

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
  readonly #machine = new PhaseMachine();
  readonly #terminals: Map<string, TurnCompletedParams>;
  readonly #accepted: Map<string, "started" | "queued">;
  /** The log's writes, which stop at the first failure. */
  readonly #records: AgentLog;
  /** Runs the turns' tool calls (and asks about them first when their script says so). */
  readonly #tools: ToolCallRunner;
  /** Runs each turn's work: the scripted models' turns, or an agent's behind a bridge. */
  readonly #driver: TurnDriver & { turnTimeLimitMs?(modelName: string): number | undefined };
  #inbox: AcceptedTurn[] = [];
  #running: AcceptedTurn | undefined;
  #modelName: string;
  #startedTurns: number;
  #begunTurns = 0;
  #idleWaiters: Array<() => void> = [];
  readonly #turnTimeLimitMs: number | undefined;
  /** Numbers, logs and publishes this session's notifications. */
  readonly #wire: SessionWire;
  /** The running turn's steering, and what stopped turns carried over. */
  readonly #steering: SessionSteering;
  /** The turn whose default cancel already recorded its `inbox/cancelled` splice. */
  #splicedTurn: string | undefined;
  /** Who waits for a child turn's terminal, and its last message. */
  readonly #childWaits = new ChildTurnWaits();

  constructor(options: SessionAgentOptions) {
    this.sessionId = options.sessionId;
    this.#log = options.log;
    this.#modelName = options.modelName;
    this.#startedTurns = options.startedTurns ?? 0;
    this.#terminals = options.terminals ?? new Map();
    this.#accepted = options.accepted ?? new Map();
    this.#turnTimeLimitMs = options.turnTimeLimitMs;
    this.#records = new AgentLog(options.log, options.onLogFailure ?? (() => {}));
    this.#wire = new SessionWire({
      sessionId: this.sessionId,
      records: this.#records,
      publish: options.publish,
      hostOrder: options.hostOrder,
      cursor: options.lastCursor ?? 0,
    });
    this.#steering = new SessionSteering({
      wire: this.#wire,
      records: this.#records,
      log: options.log,
      terminal: (turnId) => this.#terminals.get(turnId),
      running: () => ({ turnId: this.#running?.turnId, cancelling: this.#machine.cause !== undefined }),
      refuses: () => this.#driver.refusesSteering,
      admit: (turnId, text) => this.#driver.steer?.(turnId, text),
      ...(options.steers === undefined ? {} : { steers: options.steers }),
      ...(options.carriedSteers === undefined ? {} : { carried: options.carriedSteers }),
      ...(options.steeringCaps === undefined ? {} : { caps: options.steeringCaps }),
    });
    this.#tools = new ToolCallRunner({
      sessionId: this.sessionId,
      out: {
        emitItem: (method, item) => this.#wire.emitItem(method, item),
        changeItem: (previous, next) => {
          const change = itemChange(previous, next);
          this.#wire.emit(change.method, change.body);
        },
        append: (record) => this.#records.append(record),
        settle: () => this.#records.settle(),
        logFailure: () => this.#records.failure,
        stopTurn: () => this.#cancel({ kind: "user" }, false),
      },
      grants: new SessionGrants(options.grants),
      ask: options.ask ?? (async () => ({ decision: "deny", invalid: "the host has no client to ask" })),
      shell: options.shell ?? {},
      ...(options.delegate === undefined ? {} : { delegate: options.delegate }),
    });
    this.#driver =
      options.driver ??
      new ScriptedTurns({
        models: options.models,
        dispatch: (turn, calls) => this.#tools.dispatch({ turnId: turn.turnId, depth: turn.child?.depth ?? 0, modelName: turn.modelName }, calls, turn.signal),
      });
  }

  /** The error of the session-log write that failed, if one did. */
  get logFailure(): Error | undefined {
    return this.#records.failure;
  }

  /** The disposition turn `turnId` was accepted with, or `undefined` when it never was. */
  acceptedTurn(turnId: string): "started" | "queued" | undefined {
    return this.#accepted.get(turnId);
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
    this.#records.settle(); // every notification up to it is durable and sent (a replay reads the log next)
    return this.#wire.cursor;
  }

  /** The session log's path. */
  get logPath(): string {
    return this.#log.path;
  }

  /** Switches the model from the next turn on; returns the previous model's name. */
  setModel(name: string): string {
    const previous = this.#modelName;
    this.#records.appendOrThrow({ type: "model", at: Date.now(), model: name, previousModel: previous });
    this.#modelName = name;
    return previous;
  }

  /** Where turn `turnId` is, or `undefined` when this session never accepted it. */
  turnState(turnId: string): TurnState | undefined {
    const params = this.#terminals.get(turnId);
    if (params !== undefined) {
      this.#records.settle(); // its terminal is durable and sent before any answer that says the turn is terminal
      return { state: "terminal", params };
    }
    if (this.#running?.turnId === turnId) return { state: "running" };
    if (this.#inbox.some((t) => t.turnId === turnId)) return { state: "queued" };
    return undefined;
  }

  /** Accepts a turn: it starts now when nothing is running, else it waits in the inbox. */
  startTurn(turnId: string, input: TurnInput[]): "started" | "queued" {
    return this.#accept({ turnId, input, acceptedAt: Date.now() });
  }

  /**
   * Accepts child turn `turnId`: it plays `child.script`, and its `turn/started` carries
   * `parent` and `depth`. A child session runs only this turn, so it starts at once.
   */
  startChildTurn(turnId: string, input: TurnInput[], child: ChildTurnSpec): "started" | "queued" {
    return this.#accept({ turnId, input, acceptedAt: Date.now(), child });
  }

  /** Logs the acceptance of `turn`, then begins it when nothing is running or queued, else queues it. */
  #accept(turn: AcceptedTurn): "started" | "queued" {
    const { turnId, input } = turn;
    const disposition = this.#running === undefined && this.#inbox.length === 0 ? "started" : "queued";
    this.#records.appendOrThrow({ type: "turnAccepted", at: turn.acceptedAt, turnId, input, disposition });
    this.#accepted.set(turnId, disposition);
    if (disposition === "started") this.#begin(turn);
    else this.#inbox.push(turn);
    return disposition;
  }

  /**
   * Resolves once turn `turnId` has ended and its terminal is durable and sent, with its last
   * message's text (a delegating call's output).
   */
  whenTurnEnds(turnId: string): Promise<ChildOutcome> {
    return this.#childWaits.wait(turnId, this.#terminals.get(turnId), () => this.#log.durable());
  }

  /** Adds steering input to turn `turnId`; see {@link SessionSteering.steer}. */
  steer(turnId: string, steerId: string, input: readonly TurnInput[], done: (outcome: SteerOutcome, error?: Error) => void): void {
    this.#steering.steer(turnId, steerId, input, done);
  }

  /** The turn a `turn/steer` with this commandId was accepted for, if one was. */
  steeredTurn(steerId: string): string | undefined {
    return this.#steering.steeredTurn(steerId);
  }

  /**
   * Cancels the active activity with `cause` (first cause wins; a no-op when idle). Unless
   * `keepInbox`, every queued turn is discarded, each closed with its own cancelled terminal.
   */
  cancel(cause: CancelCause, options: { keepInbox?: boolean } = {}): void {
    this.#cancel(cause, options.keepInbox === true);
    this.#records.settle(); // the discarded turns' terminals are durable (and sent) before the answer
  }

  /** Aborts (the tool's SIGTERM goes first), then writes the cancel's records; syncing them is the caller's. */
  #cancel(cause: CancelCause, keepInbox: boolean): void {
    const running = this.#running;
    // Only the winning cause is logged: a later cancel of the same activity changes nothing.
    if (this.#machine.cancel(cause) && running !== undefined) {
      this.#records.write({ type: "cancelRequested", at: Date.now(), turnId: running.turnId, cause, keepInbox });
    }
    if (!keepInbox) {
      const discarded = this.#inbox;
      this.#inbox = [];
      const steers = running === undefined ? [] : this.#steering.takeAll();
      // One splice per stopped turn, before its terminal: the first default cancel records it
      // (lists possibly empty); a later one only when it discards something more.
      if (running !== undefined && (this.#splicedTurn !== running.turnId || steers.length > 0 || discarded.length > 0)) {
        this.#splicedTurn = running.turnId;
        this.#wire.emit("inbox/cancelled", {
          turnId: running.turnId,
          discarded: { steerIds: steers.map((s) => s.steerId), turnIds: discarded.map((t) => t.turnId) },
        });
      }
      this.#steering.closeDiscarded(steers);
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
        this.#records.write({ type: "cancelRequested", at: Date.now(), turnId, cause, keepInbox });
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
      this.#records.settle();
      if (tracing) traceMark("cancel.logged", this.sessionId);
      return;
    }
    if (this.#records.failure !== undefined) return traced(this.#records.failure);
    this.#log.afterDurable(traced);
  }

  /**
   * True when nothing runs or waits in this session and everything it logged is durable and sent:
   * the host may {@link SessionAgent.unload} it and load it again from its log when it is next named.
   */
  get unloadable(): boolean {
    return this.#running === undefined && this.#inbox.length === 0 && this.#log.unsynced === 0 && this.#records.failure === undefined;
  }

  /** True when a turn of this session runs or waits in its inbox. */
  get busy(): boolean {
    return this.#running !== undefined || this.#inbox.length > 0;
  }

  /** Closes the log of an {@link SessionAgent.unloadable} session; this agent is not used again. */
  unload(): void {
    this.#log.close();
    void this.#driver.close?.();
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
    await this.#driver.close?.();
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

  /** A child turn's message item, sent whole: the text its delegating call returns (the last one wins). */
  #noteMessage(method: NotificationMethod, body: Record<string, unknown>): void {
    if (method !== "item/completed" || this.#running?.child === undefined) return;
    const item = body["item"] as Item | undefined;
    if (item?.kind === "message") this.#childWaits.message(item.turnId, item.text);
  }

  #complete(turnId: string, terminal: Terminal, reason: string, cause: CancelCause | undefined, since: number, usage?: TurnUsage): void {
    const body: Record<string, unknown> = { turnId, terminal, reason, durationMs: Date.now() - since };
    if (cause !== undefined) body["cause"] = { ...cause };
    if (usage !== undefined) body["usage"] = { ...usage };
    const sent = this.#wire.emit("turn/completed", body);
    // A child turn's delegating call completes after this terminal is durable and sent (leaves first).
    const params = (sent ?? { sessionId: this.sessionId, ...body }) as unknown as TurnCompletedParams;
    this.#childWaits.ended(turnId, params, () => this.#log.durable());
    if (sent === undefined) return; // not durable, so not sent: a restart closes it ("host restarted")
    this.#terminals.set(turnId, sent as unknown as TurnCompletedParams);
    const at = Date.now();
    const record: SessionLogRecord = { type: "turnCompleted", at, turnId, terminal, reason };
    if (cause !== undefined) record.cause = cause;
    if (usage !== undefined) record.usage = { ...usage };
    this.#records.write(record);
  }

  /**
   * A policy stop of the running turn `turn`: cancelled with `cause: {kind: "hook", reason}`
   * through the same drain as a user's Stop. Queued turns are kept (the policy stops this turn
   * only). A no-op once the turn has ended or an earlier cause won.
   */
  #stopByHook(turn: AcceptedTurn, reason: string): void {
    if (this.#running !== turn) return;
    this.cancel({ kind: "hook", reason }, { keepInbox: true });
  }

  async #run(turn: AcceptedTurn, modelName: string, signal: AbortSignal): Promise<void> {
    let timeLimit: NodeJS.Timeout | undefined;
    try {
      if (signal.aborted) {
        this.#complete(turn.turnId, "cancelled", TurnReasons.cancelledBeforeStart, signal.reason as CancelCause, turn.acceptedAt);
        this.#steering.flushEarly(); // refused: the turn ended
        return;
      }
      const startedAt = Date.now();
      const index = this.#startedTurns++;
      this.#records.write({ type: "turnStarted", at: startedAt, turnId: turn.turnId, turn: index });
      const link = turn.child === undefined ? {} : { parent: { ...turn.child.parent }, depth: turn.child.depth };
      this.#wire.emit("turn/started", { turnId: turn.turnId, model: modelName, ...link });
      // Steering an earlier turn carried over: this turn begins with it, and takes it in its prompt.
      const heard = this.#steering.begin(turn.turnId);
      // Where the turn is (for a cancel's reason), and its usage: the sum over the steps it ran (a
      // step cut short counts in full), sent only when the driver declares usage at all.
      const progress: { where: CancelPoint; usage: TurnUsage | undefined } = { where: "promptAssembly", usage: undefined };
      const limitMs = this.#driver.turnTimeLimitMs?.(modelName) ?? this.#turnTimeLimitMs;
      if (limitMs !== undefined) {
        timeLimit = setTimeout(() => this.#stopByHook(turn, `turn time limit (${limitMs} ms)`), limitMs);
      }
      const context: TurnContext = {
        turnId: turn.turnId,
        input: turn.input,
        index,
        modelName,
        child: turn.child,
        signal,
        log: this.#log,
        heard,
        emit: (method, body) => {
          this.#noteMessage(method, body);
          return this.#wire.emit(method, body);
        },
        approve: (item, decisions, withdraw) => this.#tools.approve(item, decisions, signal, withdraw),
        at: (point) => void (progress.where = point),
        step: (s) => this.#machine.setStep(s),
        declareUsage: () => void (progress.usage ??= { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 }),
        addUsage: (usage) => void (progress.usage &&= addUsage(progress.usage, usage)),
        stopByHook: (reason) => this.#stopByHook(turn, reason),
        whenSteering: (ms) => this.#steering.whenPending(ms, signal),
        takeSteering: () => {
          const texts = this.#steering.consume().map((steer) => steer.item.text);
          heard.push(...texts);
          return texts;
        },
      };
      try {
        const outcome = await this.#driver.run(context);
        this.#steering.consume(); // the last step boundary: what is still pending is taken in
        this.#complete(turn.turnId, "completed", outcome?.reason ?? TurnReasons.completed, undefined, startedAt, progress.usage);
      } catch (error) {
        this.#steering.carry(); // a stopped turn's steering (unless a default cancel discarded it) goes on to the next turn
        if (signal.aborted && !(error instanceof TurnStopFailedError)) {
          const point = this.#tools.stoppedWhileAsking(turn.turnId) ? "approval" : progress.where;
          this.#complete(turn.turnId, "cancelled", cancelReasons[point], signal.reason as CancelCause, startedAt, progress.usage);
        } else {
          this.#complete(turn.turnId, "failed", `failed: ${(error as Error).message}`, undefined, startedAt, progress.usage);
        }
      }
    } finally {
      if (timeLimit !== undefined) clearTimeout(timeLimit);
      this.#machine.toIdle();
      this.#running = undefined;
      this.#steering.end();
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
}
