/**
 * The turn of a Codex subagent thread, run as an MSP child turn. Codex runs a child thread
 * (`spawn_agent`) inside the parent's app-server, so this driver starts nothing: it listens to the
 * parent's app-server from the moment the spawn completed, takes the child thread's first
 * `turn/started` as its turn, maps that turn's items as a session turn's are mapped
 * (./codex/codexItems.ts), and ends with Codex's `turn/completed` of it. A stop is honest, as a session
 * turn's: `turn/interrupt` of the child turn, its background terminals terminated, every tool
 * process below the app-server reaped (see ./codex/codexTurnStop.ts), the open items closed `cancelled`,
 * and only then does `run` throw.
 */
import { TurnStopFailedError, type TurnContext, type TurnDriver } from "../agent/turnDriver.js";
import { BRIDGE_STOPPED_REASON, type BridgeTurnItems } from "./bridgeTurnItems.js";
import { approvalOffers, approvalResult, type CodexApprovalRequest } from "./codex/codexApprovals.js";
import type { CodexAppServer } from "./codex/codexAppServer.js";
import { CodexTurnItems } from "./codex/codexItems.js";
import { stopCodexTurn } from "./codex/codexTurnStop.js";
import type { ServerNotification } from "./codex/generated/ServerNotification.js";
import type { Turn } from "./codex/generated/v2/Turn.js";

/**
 * Options of a {@link CodexChildTurnDriver}.
 *
 * @example
 * ```ts
 * const options: CodexChildTurnDriverOptions = { server, threadId: childThreadId, items: (turn) => new BridgeTurnItems(turn), killGraceMs: 2000 };
 * ```
 */
export interface CodexChildTurnDriverOptions {
  /** Makes the MSP items of a turn from its bridge events. */
  items: (turn: TurnContext) => BridgeTurnItems;
  /** The parent session's app-server, where the child thread runs. */
  server: CodexAppServer;
  /** The child thread's id (the spawn call's `receiverThreadIds[0]`). */
  threadId: string;
  /** The child thread's notifications that came before this driver listened, in wire order. */
  earlier?: readonly ServerNotification[];
  /** How long a stop waits for the child thread's first turn to begin, when it has not yet. @unit milliseconds @defaultValue 5000 */
  startGraceMs?: number;
  /** SIGTERM → SIGKILL of a stopped turn's tool processes. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
}

/**
 * The thread a notification is about, when it names one (`params.threadId`).
 *
 * @example
 * ```ts
 * server.onNotification((n) => {
 *   if (threadOf(n) === childThreadId) queue.push(n);
 * });
 * ```
 */
export function threadOf(n: ServerNotification): string | undefined {
  const params = n.params as { threadId?: unknown } | undefined;
  return typeof params?.threadId === "string" ? params.threadId : undefined;
}

/**
 * Runs the one turn of a Codex child thread as an MSP child turn.
 *
 * @example
 * ```ts
 * const driver = new CodexChildTurnDriver({ server, threadId: spawn.receiverThreadIds[0]!, items: (turn) => new BridgeTurnItems(turn) });
 * delegate({ parent, depth: 1, agent: "codex", prompt, modelName: "codex", running: 0, driver }).start();
 * ```
 */
export class CodexChildTurnDriver implements TurnDriver {
  readonly #options: CodexChildTurnDriverOptions;
  /** The child thread's notifications not yet taken by `run`. */
  readonly #queue: ServerNotification[];
  #wake: (() => void) | undefined;
  /** The running turn's answerer of the child thread's approval requests. */
  #asking: ((request: CodexApprovalRequest) => Promise<unknown>) | undefined;
  /** The questions open now: a stop answers them (`cancel`) before it interrupts Codex. */
  readonly #open = new Set<Promise<unknown>>();
  /** Resolves when `run` began (or the driver was disposed): a question that comes earlier waits for it. */
  readonly #began: Promise<void>;
  #begin!: () => void;
  #unsubscribe: (() => void) | undefined;
  #ran = false;

  constructor(options: CodexChildTurnDriverOptions) {
    this.#options = options;
    this.#queue = [...(options.earlier ?? [])];
    this.#began = new Promise((resolve) => (this.#begin = resolve));
    this.#unsubscribe = options.server.onNotification((n) => {
      if (threadOf(n) !== options.threadId) return;
      this.#queue.push(n);
      this.#wake?.();
    });
  }

  /**
   * Answers a Codex approval request of the child thread through the child session (its grants,
   * `tool/approve`), as a session turn's are answered; `undefined` when the request is another
   * thread's. A request while no child turn runs, or about no open tool call, is declined.
   */
  ask(request: CodexApprovalRequest): Promise<unknown> | undefined {
    if (request.params.threadId !== this.#options.threadId) return undefined;
    const answer = this.#began.then(() => this.#asking?.(request) ?? approvalResult(request, "deny"));
    this.#open.add(answer);
    void answer.finally(() => this.#open.delete(answer)).catch(() => {});
    return answer;
  }

  async #approve(turn: TurnContext, out: BridgeTurnItems, request: CodexApprovalRequest): Promise<unknown> {
    const agentItemId = request.params.itemId;
    const item = out.itemOf(agentItemId);
    if (item?.kind !== "toolCall" || out.stopping) return approvalResult(request, out.stopping ? "cancelled" : "deny");
    const approved = await turn.approve(item, approvalOffers(request));
    if (approved !== undefined) {
      out.replace(agentItemId, approved);
      return approvalResult(request, "approve");
    }
    out.forget(agentItemId);
    return approvalResult(request, turn.signal.aborted ? "cancelled" : "deny");
  }

  /** Stops listening (after the turn, or when the child session was never made). */
  dispose(): void {
    this.#begin();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#queue.length = 0;
  }

  async run(turn: TurnContext): Promise<void> {
    const { server, threadId } = this.#options;
    const { signal } = turn;
    if (this.#ran) throw new Error("a Codex subagent session runs only the turn its thread was spawned with");
    this.#ran = true;
    turn.at("promptAssembly");
    turn.declareUsage();
    const out = this.#options.items(turn);
    let codexTurnId: string | undefined;
    let mapper: CodexTurnItems | undefined;
    let ended: Turn | undefined;
    const take = (n: ServerNotification): void => {
      if (codexTurnId === undefined && n.method === "turn/started") {
        codexTurnId = n.params.turn.id;
        mapper = new CodexTurnItems(codexTurnId);
        turn.at("modelStream");
        return;
      }
      if (mapper === undefined) return;
      out.take(mapper.accept(n));
      if (n.method === "turn/completed" && n.params.turn.id === codexTurnId) ended = n.params.turn;
    };
    // Up to the turn's end; once stopping, what Codex says after it too (the stopped command's item/completed).
    const drain = (): void => {
      while ((ended === undefined || out.stopping) && this.#queue.length > 0) take(this.#queue.shift()!);
    };
    // A question is about an item Codex started before it asked: what came is mapped first.
    this.#asking = (request) => {
      drain();
      return this.#approve(turn, out, request);
    };
    this.#begin();
    // The app-server's end, seen once for the whole turn (not a listener per wait).
    let closed = false;
    void server.closed.then(() => {
      closed = true;
      this.#wake?.();
    });
    // Resolves when a notification came, the turn was stopped, or the app-server went away.
    const next = (): Promise<"next" | "aborted" | "closed"> =>
      new Promise((resolve) => {
        const now = (): "next" | "aborted" | "closed" | undefined =>
          signal.aborted ? "aborted" : this.#queue.length > 0 ? "next" : closed ? "closed" : undefined;
        const ready = now();
        if (ready !== undefined) return resolve(ready);
        const wake = (): void => {
          const why = now();
          if (why === undefined) return;
          this.#wake = undefined;
          signal.removeEventListener("abort", wake);
          resolve(why);
        };
        this.#wake = wake;
        signal.addEventListener("abort", wake, { once: true });
      });
    try {
      for (;;) {
        drain();
        if (ended !== undefined) break;
        const why = await next();
        if (why === "aborted") return await this.#stop(turn, out, () => codexTurnId, drain);
        if (why === "closed") {
          out.closeOpen("failed", "codex app-server ended");
          throw new Error(`codex app-server: ${(await server.closed).message}`);
        }
      }
      const finished: Turn = ended;
      // What the child's commands left behind is ended through Codex's own listing; the parent's
      // end reaps the app-server's whole tree before the parent's terminal.
      for (const t of await server.backgroundTerminals(threadId)) {
        await server.request("thread/backgroundTerminals/terminate", { threadId, processId: t.processId });
      }
      out.closeOpen("failed", "codex ended the turn without completing it");
      if (finished.status !== "completed") {
        throw new Error(finished.status === "failed" ? (finished.error?.message ?? "codex failed the turn") : `codex ended the turn ${finished.status}`);
      }
    } finally {
      this.#asking = undefined;
      this.dispose();
    }
  }

  /** The honest stop of the child turn; throws once it is done (the session then sends `cancelled`). */
  async #stop(turn: TurnContext, out: BridgeTurnItems, turnId: () => string | undefined, drain: () => void): Promise<void> {
    const { server, threadId } = this.#options;
    out.stopping = true;
    await Promise.allSettled([...this.#open]);
    // A stop before Codex began the child's turn waits (bounded) for it, so there is a turn to interrupt.
    const deadline = Date.now() + (this.#options.startGraceMs ?? 5000);
    while (turnId() === undefined && Date.now() < deadline) {
      drain();
      if (turnId() !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const codexTurnId = turnId();
    // Codex's answers to the stop (the interrupted command's item/completed) are mapped while it runs.
    const feeding = server.onNotification((n) => {
      if (threadOf(n) === threadId) drain();
    });
    try {
      await stopCodexTurn(server, {
        threadId,
        turnId: codexTurnId ?? "",
        ...(this.#options.killGraceMs === undefined ? {} : { killGraceMs: this.#options.killGraceMs }),
      });
      drain();
    } catch (error) {
      out.closeOpen("failed", `the stop failed: ${(error as Error).message}`);
      throw new TurnStopFailedError(`the stop could not be confirmed: ${(error as Error).message}`, { cause: error });
    } finally {
      feeding();
    }
    out.closeOpen("cancelled", BRIDGE_STOPPED_REASON);
    turn.signal.throwIfAborted();
  }
}
