/** The per-session agent loop of seed 000: inbox, phase machine, checkpoints, salvage and tool drain. */
import { setImmediate as nextTick } from "node:timers/promises";
import type { CancelCause, Item, NotificationMethod, Terminal, TurnCompletedParams, TurnInput, TurnUsage } from "@muse-code/protocol";
import { PhaseMachine } from "./phaseMachine.js";
import { streamModelStep } from "./modelStep.js";
import { addUsage, type ScriptedModel } from "../model/scriptedModel.js";
import { AgentLog } from "./agentLog.js";
import type { SessionLog } from "../log/sessionLog.js";
import type { SessionLogRecord } from "../log/sessionLogRecord.js";
import type { HostOrder } from "../log/hostOrder.js";
import type { NotificationRecord } from "../log/notificationEncoder.js";
import { ToolCallRunner } from "./toolCalls.js";
import type { ChildOutcome, ChildTurnSpec } from "./delegation.js";
import { ChildTurnWaits } from "./childTurnWaits.js";
import { SessionGrants } from "./sessionGrants.js";
import { itemChange } from "./itemChanges.js";
import { formatViewCursor } from "@muse-code/protocol/cursor.js";
import { TurnReasons } from "@muse-code/protocol/reasons.js";
import { traceMark, tracing } from "../server/traceMarks.js";
import { closedSteeringItem, steeringItem, steeringText, SteeringInbox, type PendingSteer } from "./steeringInbox.js";
import type { SessionAgentOptions, SteerOutcome, TurnState } from "./sessionAgentOptions.js";

/** The placeholder a scripted step's text may hold: replaced by the steering its turn has consumed so far. */
const HEARD_PLACEHOLDER = "{{steering}}";

/** Where a running turn was when its abort was observed. */
type CancelPoint = "promptAssembly" | "stepBoundary" | "modelStream" | "toolExecution" | "approval";

const reasonAt: Record<CancelPoint, string> = {
  promptAssembly: TurnReasons.cancelledDuringPromptAssembly,
  stepBoundary: TurnReasons.cancelledAtStepBoundary,
  modelStream: TurnReasons.cancelledDuringModelStream,
  toolExecution: TurnReasons.cancelledDuringToolExecution,
  approval: TurnReasons.cancelledAwaitingApproval,
};

/** A turn accepted into a session: running or waiting in the inbox. */
interface AcceptedTurn {
  turnId: string;
  input: TurnInput[];
  acceptedAt: number;
  /** Set on a child turn: its parent link, depth and agent script. */
  child?: ChildTurnSpec;
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
  readonly #machine = new PhaseMachine();
  readonly #terminals: Map<string, TurnCompletedParams>;
  readonly #accepted: Map<string, "started" | "queued">;
  /** The log's writes, which stop at the first failure. */
  readonly #records: AgentLog;
  /** Runs the turns' tool calls (and asks about them first when their script says so). */
  readonly #tools: ToolCallRunner;
  #inbox: AcceptedTurn[] = [];
  #running: AcceptedTurn | undefined;
  #modelName: string;
  #cursor: number;
  #startedTurns: number;
  #begunTurns = 0;
  #idleWaiters: Array<() => void> = [];
  readonly #turnTimeLimitMs: number | undefined;
  /** The running turn's steering, and what stopped turns carried over. */
  readonly #steering: SteeringInbox;
  /** Every accepted steerId, with its turnId. */
  readonly #steers: Map<string, string>;
  /** The turn whose default cancel already recorded its `inbox/cancelled` splice. */
  #splicedTurn: string | undefined;
  /** Steers of the running turn that came before its `turn/started`: run again right after it. */
  #early: Array<() => void> = [];
  /** Who waits for a child turn's terminal, and its last message. */
  readonly #childWaits = new ChildTurnWaits();
  /** The host-wide sequence stamped on each notification record. */
  readonly #hostOrder: HostOrder | undefined;

  constructor(options: SessionAgentOptions) {
    this.sessionId = options.sessionId;
    this.#log = options.log;
    this.#models = options.models;
    this.#modelName = options.modelName;
    this.#publish = options.publish;
    this.#hostOrder = options.hostOrder;
    this.#cursor = options.lastCursor ?? 0;
    this.#startedTurns = options.startedTurns ?? 0;
    this.#terminals = options.terminals ?? new Map();
    this.#accepted = options.accepted ?? new Map();
    this.#turnTimeLimitMs = options.turnTimeLimitMs;
    this.#steers = options.steers ?? new Map();
    this.#steering = new SteeringInbox({ ...options.steeringCaps, carried: options.carriedSteers ?? [] });
    this.#records = new AgentLog(options.log, options.onLogFailure ?? (() => {}));
    this.#tools = new ToolCallRunner({
      sessionId: this.sessionId,
      out: {
        emitItem: (method, item) => this.#emitItem(method, item),
        changeItem: (previous, next) => {
          const change = itemChange(previous, next);
          this.#emit(change.method, change.body);
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
    return this.#cursor;
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

  /**
   * Adds steering input to turn `turnId`. Accepted: its `message` item (`author: "user"`,
   * `steerId`) is logged, and `done` is called once that is durable, right before the item's
   * `item/started` is sent (so an answer sent from `done` comes first), or with the log's error. A
   * steerId accepted before is accepted again and adds nothing. Steering a turn that is about to
   * start waits for its `turn/started` (its item belongs after it). Refused: `done` says why, and
   * nothing was logged.
   */
  steer(turnId: string, steerId: string, input: readonly TurnInput[], done: (outcome: SteerOutcome, error?: Error) => void): void {
    if (this.#steers.has(steerId)) return this.#log.afterDurable((error) => done({ kind: "accepted" }, error));
    const terminal = this.#terminals.get(turnId);
    if (terminal !== undefined) {
      this.#records.settle(); // the terminal is durable and sent before the rejection that names it
      return done({ kind: "terminal", params: terminal });
    }
    if (this.#running?.turnId !== turnId || this.#machine.cause !== undefined) {
      return done({ kind: "notRunning", cancelling: this.#running?.turnId === turnId });
    }
    if (this.#steering.turnId !== turnId) {
      this.#early.push(() => this.steer(turnId, steerId, input, done));
      return;
    }
    const text = steeringText(input);
    const refusal = this.#steering.check(turnId, text);
    if (refusal !== undefined) return done({ kind: "full", refusal });
    const item = steeringItem(turnId, steerId, text);
    let send: (() => void) | undefined;
    const sent = this.#emit("item/started", { item: { ...item } }, (publish) => (send = publish));
    if (sent === undefined) return done({ kind: "accepted" }, this.#records.failure ?? new Error("the session log failed"));
    this.#steers.set(steerId, turnId);
    this.#steering.add({ steerId, item });
    this.#log.afterDurable((error) => {
      done({ kind: "accepted" }, error);
      if (error === undefined) send?.();
    });
  }

  /** Runs the steers that waited for the running turn to start (or to end before it started). */
  #flushEarlySteers(): void {
    const early = this.#early;
    this.#early = [];
    for (const again of early) again();
  }

  /** The turn a `turn/steer` with this commandId was accepted for, if one was. */
  steeredTurn(steerId: string): string | undefined {
    return this.#steers.get(steerId);
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
      const steers = running === undefined ? [] : this.#steering.take();
      // One splice per stopped turn, before its terminal: the first default cancel records it
      // (lists possibly empty); a later one only when it discards something more.
      if (running !== undefined && (this.#splicedTurn !== running.turnId || steers.length > 0 || discarded.length > 0)) {
        this.#splicedTurn = running.turnId;
        this.#emit("inbox/cancelled", {
          turnId: running.turnId,
          discarded: { steerIds: steers.map((s) => s.steerId), turnIds: discarded.map((t) => t.turnId) },
        });
      }
      for (const steer of steers) this.#emitItem("item/completed", closedSteeringItem(steer.item, "discarded"));
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
  #emit(method: NotificationMethod, body: Record<string, unknown>, hold?: (publish: () => void) => void): Record<string, unknown> | undefined {
    if (this.#records.failure !== undefined) return undefined;
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
    // `hold` is handed the publishing instead: the caller sends it later, in order (a steer's answer goes first).
    const onDurable = hold === undefined ? publish : (json?: string) => hold(() => publish(json));
    const record: NotificationRecord =
      this.#hostOrder === undefined
        ? { type: "notification", at: emittedAtMs, n, method, params }
        : { type: "notification", at: emittedAtMs, n, h: this.#hostOrder.next(), method, params };
    if (!this.#records.write(record, onDurable)) return undefined;
    this.#cursor = n;
    return params;
  }

  #emitItem(method: "item/started" | "item/completed", item: Item): void {
    this.#emit(method, { item: { ...item } });
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
    const sent = this.#emit("turn/completed", body);
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

  /** Completes every pending steering input as consumed (`completed`); returns them. */
  #consumeSteering(): PendingSteer[] {
    const taken = this.#steering.take();
    for (const steer of taken) this.#emitItem("item/completed", closedSteeringItem(steer.item, "consumed"));
    return taken;
  }

  /** Completes every pending steering input `cancelled`, `carriedOver: true`, and keeps it for the session's next turn. */
  #carrySteering(): void {
    const taken = this.#steering.take();
    for (const steer of taken) this.#emitItem("item/completed", closedSteeringItem(steer.item, "carriedOver"));
    this.#steering.carry(taken.map((s) => ({ steerId: s.steerId, text: s.item.text })));
  }

  async #run(turn: AcceptedTurn, modelName: string, signal: AbortSignal): Promise<void> {
    let timeLimit: NodeJS.Timeout | undefined;
    try {
      if (signal.aborted) {
        this.#complete(turn.turnId, "cancelled", TurnReasons.cancelledBeforeStart, signal.reason as CancelCause, turn.acceptedAt);
        this.#flushEarlySteers(); // refused: the turn ended
        return;
      }
      const startedAt = Date.now();
      const index = this.#startedTurns++;
      const model = this.#models.get(modelName);
      this.#records.write({ type: "turnStarted", at: startedAt, turnId: turn.turnId, turn: index });
      const link = turn.child === undefined ? {} : { parent: { ...turn.child.parent }, depth: turn.child.depth };
      this.#emit("turn/started", { turnId: turn.turnId, model: modelName, ...link });
      this.#steering.beginTurn(turn.turnId);
      // Steering an earlier turn carried over: this turn begins with it, and takes it in its prompt.
      const heard: string[] = [];
      for (const carried of this.#steering.takeCarried()) {
        const item = steeringItem(turn.turnId, carried.steerId, carried.text);
        this.#emitItem("item/started", item);
        this.#emitItem("item/completed", closedSteeringItem(item, "consumed"));
        heard.push(carried.text);
      }
      this.#flushEarlySteers();
      let where: CancelPoint = "promptAssembly";
      // The turn's usage: the sum over the steps it ran (a step cut short counts in full), sent
      // only when the model declares usage at all (so a model without it sends no `usage`).
      let usage: TurnUsage | undefined = model?.declaresUsage === true ? { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 } : undefined;
      const limitMs = model?.turnTimeLimitMs ?? this.#turnTimeLimitMs;
      if (limitMs !== undefined) {
        timeLimit = setTimeout(() => this.#stopByHook(turn, `turn time limit (${limitMs} ms)`), limitMs);
      }
      try {
        if (model === undefined) throw new Error(`model ${modelName} is not loaded`);
        const script = turn.child?.script ?? model.turnFor?.(index, turn.input) ?? model.turnAt(index);
        // A directed turn (the msp-check model) declares usage per turn, not per model.
        if (usage === undefined && script.steps.some((step) => step.usage !== undefined)) usage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
        await nextTick(); // prompt assembly (the scripted model has none; yield like real I/O would)
        signal.throwIfAborted();
        for (const [s, step] of script.steps.entries()) {
          where = "stepBoundary";
          this.#machine.setStep(s);
          if (step.stopByHook !== undefined) this.#stopByHook(turn, step.stopByHook);
          signal.throwIfAborted();
          if (step.fail !== undefined) throw new Error(step.fail);
          if (usage !== undefined) usage = addUsage(usage, step.usage);
          if (step.consumesSteering === true) {
            await this.#steering.whenPending(step.awaitSteeringMs ?? 0, signal);
            signal.throwIfAborted();
            for (const steer of this.#consumeSteering()) heard.push(steer.item.text);
          }
          const played = step.text?.includes(HEARD_PLACEHOLDER) === true ? { ...step, text: step.text.replaceAll(HEARD_PLACEHOLDER, heard.join("; ")) } : step;
          where = "modelStream";
          const calls = await streamModelStep(turn.turnId, played, signal, {
            emit: (method, body) => {
              this.#noteMessage(method, body);
              return this.#emit(method, body);
            },
            log: this.#log,
          });
          where = "toolExecution";
          await this.#tools.dispatch({ turnId: turn.turnId, depth: turn.child?.depth ?? 0, modelName }, calls, signal);
        }
        this.#consumeSteering(); // the last step boundary: what is still pending is taken in
        this.#complete(turn.turnId, "completed", TurnReasons.completed, undefined, startedAt, usage);
      } catch (error) {
        this.#carrySteering(); // a stopped turn's steering (unless a default cancel discarded it) goes on to the next turn
        if (signal.aborted) {
          const point = this.#tools.stoppedWhileAsking(turn.turnId) ? "approval" : where;
          this.#complete(turn.turnId, "cancelled", reasonAt[point], signal.reason as CancelCause, startedAt, usage);
        } else {
          this.#complete(turn.turnId, "failed", `failed: ${(error as Error).message}`, undefined, startedAt, usage);
        }
      }
    } finally {
      if (timeLimit !== undefined) clearTimeout(timeLimit);
      this.#machine.toIdle();
      this.#running = undefined;
      this.#steering.endTurn();
      this.#flushEarlySteers();
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
