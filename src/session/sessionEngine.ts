/**
 * SessionEngine, the MspSession: one MSP session that outlives its connections. It keeps the turns (items at their
 * latest revision, phases, terminals, open questions) across drops, reloads and host restarts;
 * reconnects with backoff; resumes from the last cursor; re-attaches unfinished turns by retrying
 * their `turn/start` commandId; and sends a Stop pressed while disconnected once it is back.
 * Only the host ends a turn: a terminal comes only from the turn's own `turn/completed`.
 */
import type { MspClient } from "../client/mspClient.js";
import { MspError } from "../errors.js";
import type { WaitOptions } from "../types/waitOptions.js";
import { RejectionReasons, uuidv7, type ApprovalDecision, type CommandResult, type Item, type TurnInput } from "@muse-code/protocol";
import type { CloseInfo } from "../types/closeInfo.js";
import type { MspEvents, MspNotification } from "../turns/mspEvents.js";
import type { ApprovalQuestion } from "../turns/approvals.js";
import type { SessionCloseReason, SessionConnection, SessionSnapshot, SessionTurn } from "./sessionSnapshot.js";
import type { MspSession, SessionTurnHandle } from "./mspSession.js";
import { touch, type SessionTurns } from "./sessionTurns.js";
import { SessionQuestions } from "./sessionQuestions.js";
import { ResumedItems } from "./resumedItems.js";
import { TurnCommands } from "./turnCommands.js";
import { TurnWaits, closedWait } from "./turnWaits.js";
import { describeClose, describeFailure } from "./sessionCloseReason.js";
import { ResumeReplay } from "./resumeReplay.js";
import { sendResume, type ResumeFrom } from "./resumeCommand.js";
import type { TreeChange } from "./sessionTree.js";
import type { SessionParts } from "./sessionParts.js";
import { SessionRetries } from "./sessionRetries.js";
import { SessionWrites } from "./sessionWrites.js";

/** The {@link MspSession} `openSession` makes: the connection loop, the resume and re-attach, the Stops, the store. */
export class SessionEngine implements MspSession {
  readonly #parts: SessionParts;
  readonly #listeners = new Set<() => void>();
  readonly #waits = new TurnWaits();
  readonly #questions: SessionQuestions;
  readonly #resumed: ResumedItems;
  readonly #commands: TurnCommands;
  readonly #retries: SessionRetries;
  readonly #writes: SessionWrites;
  #sessionId: string | undefined;
  #cursor: string | undefined;
  #connection: SessionConnection = Object.freeze({ state: "connecting", attempt: 0 });
  #snapshot: SessionSnapshot | undefined;
  #client: MspClient | undefined;
  #detach: (() => void) | undefined;
  #closed = false;
  #firstAttempt: Promise<void> | undefined;
  #warnedListener = false;
  /** The replay of the resume under way on the current client: the session opens once it is heard. */
  #replay: ResumeReplay | undefined;

  /** @internal Made by `openSession`. */
  constructor(parts: SessionParts, kept: { sessionId?: string; cursor?: string }) {
    this.#parts = parts;
    const { turns, tree, onWarning } = parts;
    const changed = () => this.#changed();
    this.#questions = new SessionQuestions({
      turns,
      tree,
      onWarning,
      changed,
      sessionId: () => this.#sessionId,
      isCurrent: (client) => this.#client === client,
      sendCancel: (client, turn) => void this.#commands.cancel(client, turn),
    });
    this.#commands = new TurnCommands({
      turns,
      onWarning,
      commandTimeoutMs: parts.commandTimeoutMs,
      sessionId: () => this.#sessionId,
      isCurrent: (client) => this.#client === client,
      isClosed: () => this.#closed,
      changed: (now) => this.#changed(now),
      notify: () => this.#notify(),
    });
    this.#retries = new SessionRetries(
      {
        policy: parts.reconnect,
        connection: () => this.#connection,
        setConnection: (connection) => this.#setConnection(connection),
        changed,
        giveUp: (reason) => this.#giveUp(reason),
        isClosed: () => this.#closed,
      },
      () => this.#runAttempt(),
    );
    this.#writes = new SessionWrites({
      keeper: parts.keeper,
      turns,
      tree,
      model: parts.model,
      position: () => ({ sessionId: this.#sessionId, cursor: this.#cursor }),
      isClosed: () => this.#closed,
      fellBackToMemory: () => this.#notify(), // the snapshot's storage is now memory
    });
    this.#resumed = new ResumedItems({ turns, tree, onWarning, changed, treeChanged: (change) => this.#treeChanged(change) });
    this.#sessionId = parts.sessionId ?? kept.sessionId;
    // A cursor belongs to the session it was seen in.
    if (parts.sessionId === undefined || parts.sessionId === kept.sessionId) this.#cursor = kept.cursor;
  }

  /** @internal The first attempt; `openSession` waits for it. */
  start(): Promise<void> {
    this.#firstAttempt ??= this.#retries.attempt();
    return this.#firstAttempt;
  }

  /** The current snapshot: immutable, the same object until something changes. */
  getSnapshot = (): SessionSnapshot => {
    if (this.#snapshot !== undefined) return this.#snapshot;
    const state = this.#connection.state;
    this.#snapshot = Object.freeze({
      sessionId: this.#sessionId,
      connection: this.#connection,
      turns: Object.freeze(this.#parts.turns.all().map((turn) => this.#parts.turns.view(turn, state))),
      storage: this.#parts.keeper.persistent ? "persistent" : "memory",
      model: this.#parts.model.view(),
    });
    return this.#snapshot;
  };

  /** Call `listener` after every change; returns the unsubscribe function. */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  /** True once `close()` was called. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /** See {@link MspSession.startTurn}. */
  startTurn(input: string | readonly TurnInput[]): SessionTurnHandle {
    if (this.#closed) throw new MspError("aborted", "startTurn: the session is closed", { method: "turn/start" });
    const parts = typeof input === "string" ? [{ type: "text" as const, text: input }] : [...input];
    if (parts.length === 0) throw new TypeError("startTurn: input must be a prompt or at least one input part");
    const turnId = uuidv7();
    this.#parts.turns.ensure(turnId, parts);
    this.#changed();
    if (this.#client !== undefined && this.#connection.state === "open") void this.#commands.start(this.#client, this.#parts.turns.ensure(turnId));
    return this.#handle(turnId);
  }

  /** The handle of a turn the session shows (after a reload, a turn it restored), or undefined. */
  turn(turnId: string): SessionTurnHandle | undefined {
    return this.#parts.turns.get(turnId) === undefined ? undefined : this.#handle(turnId);
  }

  /** See {@link MspSession.stop}. */
  stop(turnId: string): void {
    const turn = this.#parts.turns.get(turnId);
    if (turn === undefined || turn.phase === "ended" || turn.phase === "unknown" || turn.stopRequested) return;
    turn.stopRequested = true;
    turn.cancelCommandId = uuidv7();
    // A Stop is final: every question of the turn is answered `cancelled`, now when live, else when the host asks again.
    this.#questions.stopped(turn);
    touch(turn);
    // Sent before the change is shown, so an online Stop never reads `kept`. A turn/start still in flight on this
    // connection sends the cancel once it is acked (a cancel before it would be unknown_turn).
    const client = this.#client;
    if (client !== undefined && this.#connection.state === "open" && turn.startPendingOn !== client) void this.#commands.cancel(client, turn);
    this.#changed(true);
  }

  /** See {@link MspSession.answerApproval}. */
  answerApproval(itemId: string, decision: ApprovalDecision, reason?: string): ApprovalDecision {
    return this.#questions.answer(itemId, decision, reason, this.#connection.state === "open");
  }

  /** See {@link MspSession.setModel}. */
  setModel(model: string): void {
    if (this.#closed) throw new MspError("aborted", "setModel: the session is closed", { method: "session/setModel" });
    this.#parts.model.request(model);
    this.#changed(true);
    if (this.#client !== undefined && this.#connection.state === "open") void this.#sendModel(this.#client);
  }

  /** See {@link MspSession.retryNow}. */
  retryNow(): Promise<void> {
    const under = this.#retries.attempting;
    if (under !== undefined) return under;
    if (this.#closed || this.#connection.state === "open" || this.#connection.state === "connecting") return Promise.resolve();
    const attempt = this.#retries.now();
    this.#notify();
    return attempt;
  }

  /** See {@link MspSession.close}. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#retries.cancel();
    this.#writes.now();
    const client = this.#client;
    this.#detachClient();
    this.#setConnection({ state: "closed", attempt: 0, reason: { kind: "closed", message: "the session was closed" } });
    this.#notify();
    this.#waits.rejectAll();
    await client?.close("the session was closed");
  }

  /** `await using session = await openSession(…)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---- connections

  async #runAttempt(): Promise<void> {
    if (this.#closed) return;
    let client: MspClient;
    try {
      client = await this.#parts.connect();
    } catch (error) {
      return this.#retries.failed(describeFailure(error));
    }
    if (this.#closed) return void client.close("the session was closed");
    this.#attach(client);
    try {
      await this.#open(client);
    } catch (error) {
      // Closed meanwhile: the close handler already scheduled the retry (or the session was closed).
      if (this.#client !== client) return void client.close("the session could not open");
      this.#detachClient();
      void client.close("the session could not open");
      return this.#retries.failed(describeFailure(error));
    }
  }

  /** Resume (or create) the session on `client`, then re-attach unfinished turns and send pending Stops. */
  async #open(client: MspClient): Promise<void> {
    const timeoutMs = this.#parts.commandTimeoutMs;
    let sessionId = this.#sessionId;
    if (sessionId !== undefined) {
      try {
        const childCursors = this.#parts.tree.childCursors();
        const from: ResumeFrom = { sessionId, ...(this.#cursor === undefined ? {} : { afterCursor: this.#cursor }) };
        if (Object.keys(childCursors).length > 0) from.childCursors = childCursors;
        // The replay is counted from the resume's write: nothing of this session precedes its answer on a new connection.
        const result = await sendResume(client, from, timeoutMs, {
          sending: () => (this.#replay = new ResumeReplay()),
          cursorsRefused: () => {
            this.#cursor = undefined;
            this.#parts.tree.dropCursors();
          },
        });
        const replay = this.#replay;
        if (this.#closed || this.#client !== client || replay === undefined) return;
        this.#resumed.drop();
        for (const item of result.items ?? []) this.#resumed.put(sessionId, item);
        this.#sessionId = sessionId;
        this.#commands.keptStops(client);
        replay.expect(result.replayed, timeoutMs);
        const late = await replay.done;
        if (this.#replay === replay) this.#replay = undefined;
        if (this.#closed || this.#client !== client) return;
        if (late !== undefined) this.#parts.onWarning(late);
      } catch (error) {
        if (!(MspError.is(error) && error.kind === "commandRejected" && error.data["reason"] === RejectionReasons.unknownSession)) throw error;
        this.#replay = undefined;
        // The host no longer knows the session (restarted without its data): what its turns did is not known.
        this.#parts.turns.markUnknown(`the host no longer knows session ${sessionId}`);
        // Its subagents, their cursors and turns went with it: none is sent as childCursors of the new session, none shows running.
        this.#parts.tree.reset();
        sessionId = undefined;
        this.#cursor = undefined;
      }
    }
    if (sessionId === undefined) {
      const created = await client.command<"session/create">("session/create", this.#parts.model.createParams(), { timeoutMs });
      if (this.#closed || this.#client !== client) return;
      sessionId = created.sessionId;
      this.#parts.model.created(created.model);
      this.#cursor = undefined;
    }
    this.#sessionId = sessionId;
    this.#setConnection({ state: "open", attempt: 0 });
    this.#changed(true);
    this.#commands.reattach(client);
    if (this.#parts.model.pending) void this.#sendModel(client);
  }

  /** The pending `session/setModel` on `client`; the snapshot shows what the host said. */
  async #sendModel(client: MspClient): Promise<void> {
    const sessionId = this.#sessionId;
    if (sessionId === undefined) return;
    if (await this.#parts.model.send(client, sessionId, this.#parts.commandTimeoutMs)) this.#changed(true);
  }

  /** The tree changed below one of the session's turns: that turn shows again. */
  #treeChanged(change: TreeChange): void {
    if (change.changed === false) return;
    const turn = typeof change.changed === "string" ? this.#parts.turns.get(change.changed) : undefined;
    if (turn !== undefined) touch(turn);
    else for (const each of this.#parts.turns.all()) touch(each);
    this.#changed();
  }

  /** Listen to `client` before anything is sent on it. */
  #attach(client: MspClient): void {
    this.#client = client;
    const events = client.events;
    // Only the current client's events count (a late one from a client being replaced does not).
    const mine = (sessionId: unknown) => this.#client === client && sessionId === this.#sessionId;
    const put = ({ sessionId, item }: { sessionId: string; item: Item }) => {
      if (!mine(sessionId)) return;
      const changed = this.#parts.turns.putItem(item);
      // A question kept from before a reload leaves once the host moved its call off pending.
      if (this.#parts.turns.dropSettledQuestion(item) || changed) this.#changed();
    };
    const onNotification = (notification: MspNotification) => {
      if (this.#client !== client) return;
      this.#replay?.heard();
      const p = notification.params as { sessionId?: unknown; viewCursor?: unknown; turnId?: unknown; item?: { turnId?: unknown } } | undefined;
      if (p !== undefined && mine(p.sessionId) && typeof p.viewCursor === "string") {
        this.#cursor = p.viewCursor;
        this.#writes.soon();
      }
      // The subagent tree: links, child turns and their terminals, each descendant session's cursor.
      const change = this.#parts.tree.observe(this.#sessionId, notification);
      if (change.child) this.#writes.soon();
      this.#treeChanged(change);
      // After the tree heard it: a replayed turn/started of a subagent places its turn's resumed items in the tree.
      if (p !== undefined && this.#resumed.waiting) this.#resumed.place(p.sessionId, p.turnId ?? p.item?.turnId, this.#sessionId);
    };
    const onStarted = ({ sessionId, turnId }: { sessionId: string; turnId: string }) => {
      if (!mine(sessionId)) return;
      if (this.#parts.turns.advance(turnId, "running")) this.#changed();
      const turn = this.#parts.turns.get(turnId);
      if (turn?.stopRequested === true) void this.#commands.cancel(client, turn); // running: the Stop need not wait for the ack
    };
    const onDelta = (event: { sessionId: string; item: Item }) => put(event);
    const onCompleted = (terminal: Parameters<SessionTurns["end"]>[0] & { sessionId: string }) => {
      if (!mine(terminal.sessionId) || !this.#parts.turns.end(terminal)) return;
      this.#changed(true);
    };
    const onAnswered = (question: ApprovalQuestion, answer: { decision: string; reason?: string }) => {
      // The connection went (the SDK withdraws its questions as it closes): the question stays shown until it is asked again.
      if (this.#client !== client || client.isClosed || (answer.decision === "cancelled" && answer.reason === "connection closed")) return;
      this.#questions.answered(question);
    };
    // A notification the client refused (a repeat, a bad cursor) still counts toward a resume's replay.
    const onProtocolError = (error: MspError) => {
      const message = (error.data as { message?: unknown }).message;
      if (this.#client === client && typeof message === "object" && message !== null && "method" in message && !("id" in message)) this.#replay?.heard();
    };
    const onClose = (info: CloseInfo) => {
      if (this.#client !== client) return;
      this.#detachClient();
      if (!this.#closed) this.#retries.later(1, describeClose(info));
    };
    // Each listener is added here and removed by #detach, from one list.
    const offs: Array<() => void> = [];
    const listen = <E extends keyof MspEvents>(event: E, listener: (...args: MspEvents[E]) => void) => {
      events.on(event, listener);
      offs.push(() => events.off(event, listener));
    };
    listen("notification", onNotification);
    listen("turn/started", onStarted);
    listen("item/started", put);
    listen("item/updated", put);
    listen("item/completed", put);
    listen("item/delta", onDelta);
    listen("turn/completed", onCompleted);
    listen("approvalAnswered", onAnswered);
    listen("protocolError", onProtocolError);
    listen("close", onClose);
    // Questions wait for the app's answer (session.answerApproval); without a handler the client would deny them.
    client.onApproval((request, { signal }) => this.#questions.asked(client, request, signal));
    this.#detach = () => {
      for (const off of offs) off();
    };
  }

  #detachClient(): void {
    this.#detach?.();
    this.#detach = undefined;
    this.#client = undefined;
    this.#replay?.end();
    this.#replay = undefined;
    this.#questions.offline();
  }

  /** Stop trying: unended turns become `unknown` (never `failed`: the host may still be running them). */
  #giveUp(reason: SessionCloseReason): void {
    this.#writes.now();
    this.#setConnection({ state: "closed", attempt: this.#connection.attempt, reason });
    this.#parts.turns.markUnknown(`the session stopped reconnecting: ${reason.message}`);
    this.#changed();
  }

  #setConnection(connection: SessionConnection): void {
    this.#connection = Object.freeze(connection);
    this.#snapshot = undefined;
  }

  // ---- changes, storage, waits

  /** Something shown changed: a new snapshot for the listeners; `now` writes to storage at once (a Stop, a terminal). */
  #changed(now = false): void {
    if (now) this.#writes.now();
    else this.#writes.soon();
    this.#notify();
  }

  /** A new snapshot for the listeners, and the waits of turns that are over settle. */
  #notify(): void {
    this.#snapshot = undefined;
    this.#waits.settle((turnId) => {
      const turn = this.#parts.turns.get(turnId);
      return turn !== undefined && (turn.phase === "ended" || turn.phase === "unknown") ? this.#parts.turns.view(turn, this.#connection.state) : undefined;
    });
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (error) {
        if (!this.#warnedListener) this.#parts.onWarning(`a session listener threw: ${error instanceof Error ? error.message : String(error)}`);
        this.#warnedListener = true;
      }
    }
  }

  /** See {@link MspSession.steer}. */
  async steer(turnId: string, input: string | readonly TurnInput[], options: WaitOptions = {}): Promise<CommandResult<"turn/steer">> {
    if (this.#closed) throw new MspError("aborted", "steer: the session is closed", { method: "turn/steer", turnId });
    return this.#commands.steer(this.#connection.state === "open" ? this.#client : undefined, this.#connection.state, turnId, input, options);
  }

  #handle(turnId: string): SessionTurnHandle {
    return {
      turnId,
      stop: () => this.stop(turnId),
      steer: (input, options) => this.steer(turnId, input, options),
      settled: (options = {}) => this.#settled(turnId, options),
    };
  }

  #settled(turnId: string, options: WaitOptions): Promise<SessionTurn> {
    const turn = this.#parts.turns.get(turnId);
    if (turn !== undefined && (turn.phase === "ended" || turn.phase === "unknown"))
      return Promise.resolve(this.#parts.turns.view(turn, this.#connection.state));
    return this.#closed ? Promise.reject(closedWait(turnId)) : this.#waits.wait(turnId, options);
  }
}
