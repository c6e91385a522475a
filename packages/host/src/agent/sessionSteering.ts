/** A session's steering: `turn/steer` accepted into the running turn's inbox, taken in at step boundaries, carried over or discarded when the turn stops. */
import type { TurnCompletedParams, TurnInput } from "@muse-code/protocol";
import type { SessionLog } from "../log/sessionLog.js";
import type { AgentLog } from "./agentLog.js";
import type { SessionWire } from "./sessionWire.js";
import type { SteerOutcome } from "./sessionAgentOptions.js";
import { closedSteeringItem, steeringItem, steeringText, SteeringInbox, type CarriedSteer, type PendingSteer } from "./steeringInbox.js";

/** What steering reads and writes of its session. */
export interface SessionSteeringOptions {
  wire: SessionWire;
  records: AgentLog;
  log: Pick<SessionLog, "afterDurable">;
  /** The terminal of turn `turnId`, when it has one. */
  terminal(turnId: string): TurnCompletedParams | undefined;
  /** The running turn, and whether its cancel was already accepted. */
  running(): { turnId: string | undefined; cancelling: boolean };
  /** Why the session's turns take no steering at all (its driver cannot), or `undefined`. */
  refuses?: () => string | undefined;
  /** Every accepted steerId, with its turnId (read back from the log). */
  steers?: Map<string, string>;
  carried?: CarriedSteer[];
  caps?: { maxSteers?: number; maxBytes?: number };
  /**
   * Hands accepted-to-be steering text to the agent running turn `turnId` (a bridge's
   * `TurnDriver.steer`) before anything is logged: resolves `undefined` once the agent took
   * it, or with the agent's refusal. Without it, the input waits in the inbox for the model.
   */
  admit?: (turnId: string, text: string) => Promise<string | undefined> | undefined;
}

/** One session's steering; see the module header. */
export class SessionSteering {
  readonly #options: SessionSteeringOptions;
  /** The running turn's pending steering, and what stopped turns carried over. */
  readonly #inbox: SteeringInbox;
  /** Every accepted steerId, with its turnId. */
  readonly #steers: Map<string, string>;
  /** Steers of the running turn that came before its `turn/started`: run again right after it. */
  #early: Array<() => void> = [];
  /** The steerIds the agent is being asked about now (a retry waits for that answer). */
  readonly #admitting = new Map<string, Array<(outcome: SteerOutcome, error?: Error) => void>>();

  constructor(options: SessionSteeringOptions) {
    this.#options = options;
    this.#steers = options.steers ?? new Map();
    this.#inbox = new SteeringInbox({ ...options.caps, carried: options.carried ?? [] });
  }

  /**
   * Adds steering input to turn `turnId`. Accepted: its `message` item (`author: "user"`,
   * `steerId`) is logged, and `done` is called once that is durable, right before the item's
   * `item/started` is sent (so an answer sent from `done` comes first), or with the log's error. A
   * steerId accepted before is accepted again and adds nothing. Steering a turn that is about to
   * start waits for its `turn/started` (its item belongs after it). Refused: `done` says why, and
   * nothing was logged (a session whose driver takes no steering refuses every steer of its running turn `unsupported`).
   */
  steer(turnId: string, steerId: string, input: readonly TurnInput[], done: (outcome: SteerOutcome, error?: Error) => void): void {
    const { log, records } = this.#options;
    if (this.#steers.has(steerId)) return log.afterDurable((error) => done({ kind: "accepted" }, error));
    const terminal = this.#options.terminal(turnId);
    if (terminal !== undefined) {
      records.settle(); // the terminal is durable and sent before the rejection that names it
      return done({ kind: "terminal", params: terminal });
    }
    const running = this.#options.running();
    if (running.turnId !== turnId || running.cancelling) return done({ kind: "notRunning", cancelling: running.turnId === turnId });
    const refused = this.#options.refuses?.();
    if (refused !== undefined) return done({ kind: "unsupported", message: refused });
    if (this.#inbox.turnId !== turnId) {
      this.#early.push(() => this.steer(turnId, steerId, input, done));
      return;
    }
    const text = steeringText(input);
    const refusal = this.#inbox.check(turnId, text);
    if (refusal !== undefined) return done({ kind: "full", refusal });
    const waiting = this.#admitting.get(steerId);
    if (waiting !== undefined) return void waiting.push(done);
    const admitted = this.#options.admit?.(turnId, text);
    if (admitted === undefined) return this.#accept(turnId, steerId, text, done);
    const answers = [done];
    this.#admitting.set(steerId, answers);
    const answer = (outcome: SteerOutcome, error?: Error): void => {
      this.#admitting.delete(steerId);
      for (const d of answers) d(outcome, error);
    };
    void admitted.then(
      (agentRefusal) => {
        if (agentRefusal !== undefined) return answer({ kind: "notRunning", cancelling: false, agentRefusal });
        // The agent has it: the turn's item is logged even if the turn ended meanwhile (its text reached the agent).
        this.#accept(turnId, steerId, text, answer, true);
      },
      (error: unknown) => answer({ kind: "notRunning", cancelling: false, agentRefusal: (error as Error).message }),
    );
  }

  /** Logs an accepted steer's item and adds it to the inbox (see {@link SessionSteering.steer}); `taken`: the agent has the text already. */
  #accept(turnId: string, steerId: string, text: string, done: (outcome: SteerOutcome, error?: Error) => void, taken = false): void {
    const { log, records, wire } = this.#options;
    if (taken && this.#inbox.turnId !== turnId) {
      // The turn ended while the agent was asked: no item of an ended turn can be logged.
      const terminal = this.#options.terminal(turnId);
      if (terminal !== undefined) return done({ kind: "terminal", params: terminal });
      return done({ kind: "notRunning", cancelling: false, agentRefusal: "the turn ended while the agent was handed the input" });
    }
    const item = steeringItem(turnId, steerId, text);
    let send: (() => void) | undefined;
    const sent = wire.emit("item/started", { item: { ...item } }, (publish) => (send = publish));
    if (sent === undefined) return done({ kind: "accepted" }, records.failure ?? new Error("the session log failed"));
    this.#steers.set(steerId, turnId);
    this.#inbox.add({ steerId, item });
    log.afterDurable((error) => {
      done({ kind: "accepted" }, error);
      if (error === undefined) send?.();
    });
  }

  /** The turn a `turn/steer` with this commandId was accepted for, if one was. */
  steeredTurn(steerId: string): string | undefined {
    return this.#steers.get(steerId);
  }

  /** Runs the steers that waited for the running turn to start (or to end before it started). */
  flushEarly(): void {
    const early = this.#early;
    this.#early = [];
    for (const again of early) again();
  }

  /** Turn `turnId` starts: steering carried over from earlier turns is its first input (each item started and consumed). Returns their texts. */
  begin(turnId: string): string[] {
    this.#inbox.beginTurn(turnId);
    const heard: string[] = [];
    for (const carried of this.#inbox.takeCarried()) {
      const item = steeringItem(turnId, carried.steerId, carried.text);
      this.#options.wire.emitItem("item/started", item);
      this.#options.wire.emitItem("item/completed", closedSteeringItem(item, "consumed"));
      heard.push(carried.text);
    }
    this.flushEarly();
    return heard;
  }

  /** The running turn ended: steers that waited for it are refused now. */
  end(): void {
    this.#inbox.endTurn();
    this.flushEarly();
  }

  /** Resolves once steering is pending (at once if it is), after `ms`, or when `signal` aborts. */
  whenPending(ms: number, signal: AbortSignal): Promise<void> {
    return this.#inbox.whenPending(ms, signal);
  }

  /** Completes every pending steering input as consumed (`completed`); returns them. */
  consume(): PendingSteer[] {
    const taken = this.#inbox.take();
    for (const steer of taken) this.#options.wire.emitItem("item/completed", closedSteeringItem(steer.item, "consumed"));
    return taken;
  }

  /** Completes every pending steering input `cancelled`, `carriedOver: true`, and keeps it for the session's next turn. */
  carry(): void {
    const taken = this.#inbox.take();
    for (const steer of taken) this.#options.wire.emitItem("item/completed", closedSteeringItem(steer.item, "carriedOver"));
    this.#inbox.carry(taken.map((s) => ({ steerId: s.steerId, text: s.item.text })));
  }

  /** Takes every pending steering input out, for a default cancel to discard. */
  takeAll(): PendingSteer[] {
    return this.#inbox.take();
  }

  /** Completes inputs {@link SessionSteering.takeAll} took as discarded (after the splice that names them). */
  closeDiscarded(steers: readonly PendingSteer[]): void {
    for (const steer of steers) this.#options.wire.emitItem("item/completed", closedSteeringItem(steer.item, "discarded"));
  }
}
