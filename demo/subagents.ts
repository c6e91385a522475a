/**
 * The page's subagents (issue 23): the child turns below the session's turns, folded from the
 * connection's own notification stream. The session layer shows the session's turns only (it
 * skips the notifications of the child sessions a connection also hears), so this listens to each
 * connection the session opens (`attach`, from the page's `connect`) and keeps, across its
 * reconnects:
 * - the tree, a `TurnTree` from `@muse-code/sdk/ui`: each child turn's parent, state and terminal,
 *   and a turn's progress for "stopping 3 of 5 subagents…";
 * - each child turn's items as they stream, whole (the client's ledger applies the deltas);
 * - what each delegating `task` call asked: the agent's name and its prompt;
 * - the host's `tool/approve` questions about a child turn's tool calls, until the page answers
 *   them or they close (withdrawn by a Stop, the turn ended, the connection went).
 *
 * A child's question: the session answers only its own session's questions (it denies any other
 * "not a question of this session"), so `attach` wraps the connection's `onApproval`: a question
 * about a turn the tree knows as a subagent's waits here for the page's answer; every other
 * question goes to the session's handler as before.
 */
import type { ApprovalDecision, ApprovalHandler, Item, MspClient, ToolApproveParams, ToolApproveResult } from "@muse-code/sdk";
import type { SessionApproval } from "@muse-code/sdk/session";
import { offeredDecisions, TurnTree, type TreeProgress, type TreeTurn } from "@muse-code/sdk/ui";

/** What a delegating call asked of its subagent (its `task` arguments). */
export interface SubagentTask {
  agent: string;
  prompt: string;
}

/** An open question about a subagent's tool call, as the approval dialog shows it. */
export interface SubagentQuestion extends SessionApproval {
  /** The child session that asks. */
  readonly sessionId: string;
  /** How many levels below the top-level turn the asking turn runs. @unit levels */
  readonly depth: number;
}

interface Open {
  question: SubagentQuestion;
  reply(result: ToolApproveResult): void;
}

/** The subagent trees a page's connections hear, and their open questions. */
export class Subagents {
  /** The fold of every notification heard: parents, states, terminals, progress. */
  readonly tree = new TurnTree();
  /** Each child turn's items, by turn, then by item, in the order they started. */
  readonly #items = new Map<string, Map<string, Item>>();
  /** What each child turn was asked, by its turn id (from its delegating call's `subagent` link and `args`). */
  readonly #tasks = new Map<string, SubagentTask>();
  readonly #questions = new Map<string, Open>();
  readonly #listeners = new Set<() => void>();
  readonly #onProblem: (message: string) => void;

  /** @param onProblem - Told of a notification the tree could not read (a malformed link). */
  constructor(onProblem: (message: string) => void) {
    this.#onProblem = onProblem;
  }

  /** Listen to `client` (a connection of the session), before the session attaches to it. */
  attach(client: MspClient): MspClient {
    const { events } = client;
    const put = ({ sessionId, viewCursor, item }: { sessionId: string; viewCursor: string; item: Item }) => {
      // A link goes into the tree at once: these run before the session's own listeners, so the
      // page never renders a linked call whose subagent the tree does not know yet.
      if (item.kind === "toolCall" && item.subagent !== undefined) this.#observe({ method: "item/updated", params: { sessionId, viewCursor, item } });
      this.#put(item);
    };
    events.on("item/started", put);
    events.on("item/updated", put);
    events.on("item/delta", put);
    events.on("item/completed", put);
    events.on("itemSynthesized", (item) => this.#put(item));
    events.on("notification", (notification) => this.#observe(notification));
    // The session installs its handler after this: a subagent's question is routed here instead.
    const install = client.onApproval.bind(client);
    client.onApproval = (handler: ApprovalHandler | undefined) =>
      install(
        handler === undefined
          ? undefined
          : (request, context) => (this.isSubagent(request.turnId) ? this.#ask(request, context.signal) : handler(request, context)),
      );
    return client;
  }

  /** Call `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** True when `turnId` is a child turn (it has a parent in the tree). */
  isSubagent(turnId: string): boolean {
    return this.tree.turn(turnId)?.parent !== undefined;
  }

  /** The child turn as the tree knows it. */
  turn(turnId: string): TreeTurn | undefined {
    return this.tree.turn(turnId);
  }

  /** A turn's descendants: how many started, how many ended. */
  progressOf(turnId: string): TreeProgress {
    return this.tree.progressOf(turnId);
  }

  /** A child turn's items, in the order they started. */
  itemsOf(turnId: string): Item[] {
    return [...(this.#items.get(turnId)?.values() ?? [])];
  }

  /** What the child turn's delegating call asked (agent and prompt), once the call was heard. */
  taskOf(turnId: string): SubagentTask | undefined {
    return this.#tasks.get(turnId);
  }

  /** The top-level turn above `turnId` (itself when it has no parent). */
  rootOf(turnId: string): string {
    let at = turnId;
    for (let hops = 0; hops <= this.tree.size; hops++) {
      const up = this.tree.turn(at)?.parent?.turnId;
      if (up === undefined) return at;
      at = up;
    }
    return at;
  }

  /** The open questions about subagents' tool calls, oldest first. */
  questions(): SubagentQuestion[] {
    return [...this.#questions.values()].map((open) => open.question);
  }

  /** Answer the open question about `itemId`; false when it is not one of the subagents' (or no longer open). */
  answer(itemId: string, decision: ApprovalDecision, reason?: string): boolean {
    const open = this.#questions.get(itemId);
    if (open === undefined) return false;
    this.#questions.delete(itemId);
    open.reply(reason === undefined ? { decision } : { decision, reason });
    this.#changed();
    return true;
  }

  /** A question about a subagent's call: it waits for the page's answer, or closes (the SDK then answers `cancelled`). */
  #ask(request: ToolApproveParams, signal: AbortSignal): Promise<ToolApproveResult> {
    return new Promise((resolve) => {
      const question: SubagentQuestion = {
        sessionId: request.sessionId,
        turnId: request.turnId,
        itemId: request.itemId,
        callId: request.callId,
        tool: request.tool,
        args: request.args,
        decisions: offeredDecisions(request),
        ...(request.grant === undefined ? {} : { grant: request.grant }),
        live: true,
        depth: this.tree.turn(request.turnId)?.depth ?? 1,
      };
      const open: Open = { question, reply: resolve };
      this.#questions.set(request.itemId, open);
      signal.addEventListener(
        "abort",
        () => {
          if (this.#questions.get(request.itemId) === open) this.#questions.delete(request.itemId);
          resolve({ decision: "cancelled" });
          this.#changed();
        },
        { once: true },
      );
      this.#changed();
    });
  }

  /** Fold a notification into the tree; one it cannot read is reported, and changes nothing. */
  #observe(notification: { method: string; params?: unknown }): void {
    try {
      if (this.tree.observe(notification)) this.#changed();
    } catch (error) {
      this.#onProblem(error instanceof Error ? error.message : String(error));
    }
  }

  #put(item: Item): void {
    let changed = false;
    if (item.kind === "toolCall" && item.subagent !== undefined && !this.#tasks.has(item.subagent.turnId)) {
      this.#tasks.set(item.subagent.turnId, taskOf(item.args));
      changed = true;
    }
    if (this.isSubagent(item.turnId)) {
      let items = this.#items.get(item.turnId);
      if (items === undefined) this.#items.set(item.turnId, (items = new Map()));
      if (items.get(item.itemId) !== item) {
        items.set(item.itemId, item);
        changed = true;
      }
    }
    // Forget what the tree forgot (it is bounded): the items of turns it no longer holds.
    if (item.status !== "inProgress") {
      for (const turnId of this.#items.keys()) {
        if (this.tree.turn(turnId) !== undefined) continue;
        this.#items.delete(turnId);
        this.#tasks.delete(turnId);
      }
    }
    if (changed) this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** A `task` call's agent and prompt, from its arguments (JSON text). */
function taskOf(args: string): SubagentTask {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "object" && parsed !== null) {
      const { agent, prompt } = parsed as Record<string, unknown>;
      return { agent: typeof agent === "string" ? agent : "subagent", prompt: typeof prompt === "string" ? prompt : "" };
    }
  } catch {
    // not JSON: nothing to name it by
  }
  return { agent: "subagent", prompt: "" };
}
