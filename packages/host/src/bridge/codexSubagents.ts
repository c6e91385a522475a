/**
 * Codex's subagents as MSP child sessions, for one parent turn. Codex 0.169.0 offers its model the
 * `multi_agent_v1` tools; a `spawn_agent` call starts a child thread in the same app-server, whose
 * first turn runs on its own while the parent's goes on. The bridge maps:
 * - the `collabAgentToolCall` item of tool `spawnAgent` → the parent's delegating `spawn_agent`
 *   toolCall (`args` `{"prompt": …}`), started with Codex's item;
 * - its `item/completed` naming the child thread (`receiverThreadIds`) → a child session (the
 *   host's delegation, as a reference-host `task` call makes one), the `subagent` patch durable and
 *   sent first, then the child turn, driven by ./codexChildTurnDriver.ts from the child thread's
 *   notifications;
 * - the child turn's end → the delegating call's end, by the reference host's rules: `completed`
 *   with the child's last message; `cancelled`, `subagent cancelled by its parent`, when the parent
 *   was stopped; `failed` otherwise.
 * The other collab calls (`wait_agent`, `send_input`, `close_agent`, `resume_agent`) are not
 * mapped: they are Codex's own bookkeeping of the tree the child sessions already show.
 * A child thread's approval requests are its child session's questions (see {@link CodexSubagents.ask}).
 * A stop of the parent stops the tree leaves first: the parent's Codex turn is interrupted (so it
 * spawns no more), each child turn is cancelled with cause `parent` and ends honestly, each
 * delegating call closes, and only then does the parent's own stop go on. A child thread the host
 * refused a session (a bound: its call fails with the bound's reason) still runs in Codex, unseen:
 * when the parent ends it is interrupted, and its processes are reaped with the parent's tree.
 */
import type { CancelCause, ToolCallItem } from "@muse-code/protocol";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { DelegationRefused, type ChildOutcome, type ChildTurn, type Delegate } from "../agent/delegation.js";
import { itemPatch } from "../agent/itemChanges.js";
import { isoNow } from "../agent/recordedAt.js";
import type { TurnContext } from "../agent/turnDriver.js";
import type { CodexAppServer } from "./codex/codexAppServer.js";
import type { BridgeTurnItems } from "./bridgeTurnItems.js";
import { CodexChildTurnDriver, threadOf } from "./codexChildTurnDriver.js";
import type { CodexApprovalRequest } from "./codex/codexApprovals.js";
import { CodexRpcError } from "./codex/codexErrors.js";
import type { ServerNotification } from "./codex/generated/ServerNotification.js";
import type { ThreadItem } from "./codex/generated/v2/ThreadItem.js";

type CollabCall = Extract<ThreadItem, { type: "collabAgentToolCall" }>;

/**
 * Options of {@link CodexSubagents}.
 *
 * @example
 * ```ts
 * const options: CodexSubagentsOptions = { server, turn, sessionId, threadId, delegate: (r) => registry.delegate(r), items: (t) => new BridgeTurnItems(t) };
 * ```
 */
export interface CodexSubagentsOptions {
  server: CodexAppServer;
  /** The parent turn. */
  turn: TurnContext;
  /** The parent turn's session. */
  sessionId: string;
  /** The parent session's Codex thread. */
  threadId: string;
  /** Creates the child sessions (the host's delegation). */
  delegate: Delegate;
  /** Makes a child turn's MSP items from its bridge events. */
  items: (turn: TurnContext) => BridgeTurnItems;
  /** SIGTERM → SIGKILL of a stopped child turn's tool processes. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  /** How long the parent's Codex turn gets to end after `turn/interrupt`. @unit milliseconds @defaultValue 5000 */
  agentStopGraceMs?: number;
}

/** The notifications of threads not claimed yet kept per thread, at most. */
const MAX_EARLY_PER_THREAD = 1000;

/**
 * The child sessions of one parent turn's Codex subagents.
 *
 * @example
 * ```ts
 * const subagents = new CodexSubagents({ server, turn, sessionId, threadId, delegate, items: (t) => new BridgeTurnItems(t) });
 * // … the turn runs; on a stop:
 * await subagents.stopTree(codexTurnId);
 * subagents.dispose();
 * ```
 */
export class CodexSubagents {
  readonly #o: CodexSubagentsOptions;
  readonly #unsubscribe: () => void;
  /** The open delegating calls, by Codex's item id. */
  readonly #calls = new Map<string, ToolCallItem>();
  /** Each child: its turn, and its delegating call's end. */
  readonly #children: Array<{ child: ChildTurn | undefined; closed: Promise<void> }> = [];
  /** Notifications of other threads, kept until a spawn names their thread. */
  readonly #early = new Map<string, ServerNotification[]>();
  /** Each other thread's running Codex turn, by thread id. */
  readonly #running = new Map<string, string>();
  /** The child threads the host refused a session (a bound): they run unseen, and are interrupted when the parent ends. */
  readonly #refused = new Set<string>();
  #stopping = false;
  /** The parent turn is ending (stopped, or Codex ended it): refused children are interrupted as they begin. */
  #ending = false;
  /** The child threads' drivers, by thread id. */
  readonly #drivers = new Map<string, CodexChildTurnDriver>();

  constructor(options: CodexSubagentsOptions) {
    this.#o = options;
    this.#unsubscribe = options.server.onNotification((n) => this.#accept(n));
  }

  /** Whether the turn spawned any child. */
  get any(): boolean {
    return this.#children.length > 0 || this.#calls.size > 0;
  }

  /**
   * Resolves once every child turn has ended and its delegating call has closed (a turn's end
   * waits for it: leaves first); a spawn call Codex never completed closes `failed`.
   */
  async settled(): Promise<void> {
    this.#ending = true;
    await this.#interruptRefused();
    await this.#childrenClosed();
    this.#closeUnspawned("failed", "codex ended the turn without completing it");
  }

  async #childrenClosed(): Promise<void> {
    for (let seen = 0; seen < this.#children.length; seen++) await this.#children[seen]!.closed;
  }

  #closeUnspawned(status: "failed" | "cancelled", reason: string): void {
    for (const item of this.#calls.values()) this.#close(item, status, "", reason);
    this.#calls.clear();
  }

  /**
   * Stops the tree below the parent turn: interrupts the parent's Codex turn `codexTurnId`
   * (bounded), cancels every child turn with cause `parent`, and resolves once each has ended and
   * its delegating call closed. The parent's own honest stop comes after.
   */
  async stopTree(codexTurnId: string): Promise<void> {
    this.#stopping = true;
    if (!this.any) return;
    const { server, threadId } = this.#o;
    const graceMs = this.#o.agentStopGraceMs ?? 5000;
    const ended = server.waitForNotification((n) => n.method === "turn/completed" && n.params.turn.id === codexTurnId, graceMs, "the parent's turn/completed");
    ended.catch(() => {});
    try {
      await server.request("turn/interrupt", { threadId, turnId: codexTurnId }, graceMs);
      await ended.catch(() => {});
    } catch (error) {
      if (!(error instanceof CodexRpcError)) throw error;
    }
    const cause = this.#childCause();
    for (const { child } of this.#children) child?.cancel(cause);
    this.#ending = true;
    await this.#interruptRefused();
    await this.#childrenClosed();
    this.#closeUnspawned("cancelled", "subagent cancelled by its parent");
  }

  /**
   * Interrupts the running turn of each refused child thread (bounded), so that it starts nothing
   * after the parent's end; what it left running is reaped with the parent's tree.
   */
  async #interruptRefused(): Promise<void> {
    const { server } = this.#o;
    const graceMs = this.#o.agentStopGraceMs ?? 5000;
    for (const threadId of this.#refused) {
      const turnId = this.#running.get(threadId);
      if (turnId === undefined) continue;
      const ended = server.waitForNotification((n) => n.method === "turn/completed" && n.params.turn.id === turnId, graceMs, `turn/completed of ${threadId}`);
      ended.catch(() => {});
      try {
        await server.request("turn/interrupt", { threadId, turnId }, graceMs);
        await ended.catch(() => {});
      } catch (error) {
        if (!(error instanceof CodexRpcError)) throw error;
      }
    }
  }

  /** Answers an approval request of a child thread through its child session; `undefined` when it is no child's (the parent's own). */
  ask(request: CodexApprovalRequest): Promise<unknown> | undefined {
    return this.#drivers.get(request.params.threadId)?.ask(request);
  }

  /** How a stop of the parent reaches its children: `disposed` at a host shutdown, else `parent`. */
  #childCause(): CancelCause {
    const reason = this.#o.turn.signal.reason as { kind?: string } | undefined;
    return reason?.kind === "disposed" ? { kind: "disposed" } : { kind: "parent" };
  }

  /** Stops listening. */
  dispose(): void {
    this.#unsubscribe();
    this.#early.clear();
  }

  #accept(n: ServerNotification): void {
    const thread = threadOf(n);
    if (thread === undefined) return;
    if (thread !== this.#o.threadId) {
      if (n.method === "turn/started") {
        this.#running.set(thread, n.params.turn.id);
        // A refused child whose turn begins once the parent is ending is interrupted at once.
        if (this.#ending && this.#refused.has(thread)) void this.#interruptRefused().catch(() => {});
      }
      if (n.method === "turn/completed" && this.#running.get(thread) === n.params.turn.id) this.#running.delete(thread);
      if (this.#refused.has(thread)) return;
      const kept = this.#early.get(thread) ?? [];
      if (kept.length < MAX_EARLY_PER_THREAD) kept.push(n);
      this.#early.set(thread, kept);
      return;
    }
    if (n.method !== "item/started" && n.method !== "item/completed") return;
    const item = n.params.item;
    if (item.type !== "collabAgentToolCall" || item.tool !== "spawnAgent") return;
    if (n.method === "item/started") this.#started(item);
    else this.#completed(item);
  }

  #started(call: CollabCall): void {
    if (this.#calls.has(call.id)) return;
    const { turn } = this.#o;
    const item: ToolCallItem = {
      itemId: uuidv7(),
      kind: "toolCall",
      turnId: turn.turnId,
      revision: 1,
      status: "inProgress",
      recordedAt: isoNow(),
      tool: "spawn_agent",
      callId: call.id,
      args: JSON.stringify({ prompt: call.prompt ?? "" }),
      visibleOutput: "",
      truncated: false,
    };
    this.#calls.set(call.id, item);
    turn.emit("item/started", { item: { ...item } });
    turn.at("toolExecution");
  }

  #completed(call: CollabCall): void {
    this.#started(call);
    const item = this.#calls.get(call.id);
    if (item === undefined) return;
    this.#calls.delete(call.id);
    const childThread = call.receiverThreadIds[0];
    if (call.status !== "completed" || childThread === undefined) {
      this.#children.push({ child: undefined, closed: Promise.resolve(this.#close(item, "failed", "", "subagent failed: codex did not spawn it")) });
      return;
    }
    const { turn, server } = this.#o;
    const earlier = this.#early.get(childThread) ?? [];
    this.#early.delete(childThread);
    const driver = new CodexChildTurnDriver({
      server,
      threadId: childThread,
      earlier,
      items: this.#o.items,
      ...(this.#o.killGraceMs === undefined ? {} : { killGraceMs: this.#o.killGraceMs }),
    });
    let child: ChildTurn;
    try {
      child = this.#o.delegate({
        parent: { sessionId: this.#o.sessionId, turnId: turn.turnId, itemId: item.itemId },
        depth: (turn.child?.depth ?? 0) + 1,
        agent: "codex",
        prompt: call.prompt ?? "",
        modelName: turn.modelName,
        running: this.#children.filter((c) => c.child !== undefined).length,
        driver,
      });
    } catch (error) {
      driver.dispose();
      this.#refused.add(childThread);
      this.#early.delete(childThread);
      const reason = error instanceof DelegationRefused ? error.message : `subagent failed: ${(error as Error).message}`;
      this.#children.push({ child: undefined, closed: Promise.resolve(this.#close(item, "failed", "", reason)) });
      return;
    }
    this.#drivers.set(childThread, driver);
    this.#children.push({ child, closed: this.#run(item, child) });
  }

  /** Links the call to its child session (durable and sent first), runs the child turn, and closes the call after its terminal. */
  async #run(item: ToolCallItem, child: ChildTurn): Promise<void> {
    const { turn } = this.#o;
    const linked: ToolCallItem = { ...item, subagent: { sessionId: child.sessionId, turnId: child.turnId }, revision: item.revision + 1, recordedAt: isoNow() };
    const patch = itemPatch(item, linked);
    turn.emit(patch.method, patch.body);
    await turn.log.durable();
    let outcome: ChildOutcome;
    try {
      child.start();
      if (this.#stopping) child.cancel(this.#childCause());
      outcome = await child.ended();
    } catch (error) {
      return this.#close(linked, "failed", "", `subagent failed: the child turn could not start: ${(error as Error).message}`);
    }
    const { params, lastMessage } = outcome;
    if (params.terminal === "completed") return this.#close(linked, "completed", lastMessage);
    if (params.terminal === "cancelled" && params.cause?.kind === "parent")
      return this.#close(linked, "cancelled", lastMessage, "subagent cancelled by its parent");
    if (params.terminal === "cancelled") return this.#close(linked, "failed", lastMessage, "subagent cancelled");
    return this.#close(linked, "failed", lastMessage, `subagent failed: ${params.reason.replace(/^failed: /, "")}`);
  }

  #close(item: ToolCallItem, status: "completed" | "failed" | "cancelled", visibleOutput: string, failureReason?: string): void {
    const done: ToolCallItem = { ...item, revision: item.revision + 1, status, recordedAt: isoNow(), visibleOutput, truncated: false };
    if (failureReason !== undefined) done.failureReason = failureReason;
    this.#o.turn.emit("item/completed", { item: done });
  }
}
