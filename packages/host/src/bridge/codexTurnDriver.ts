/**
 * A session's turns run by Codex: one `codex app-server` (started at the session's first turn)
 * and one Codex thread per MSP session. A turn is a Codex `turn/start` with the MSP input; Codex's
 * notifications are mapped (./codex/codexItems.ts) to the session's items through `turn.emit`, so every
 * item/started gets exactly one item/completed before the terminal. A stop is honest
 * (./codex/codexTurnStop.ts): `turn/interrupt`, Codex's terminal, its background terminals, then the
 * process tree reaped; the items still open are closed `cancelled` with the output they showed,
 * and only then does `run` throw, so the session sends `cancelled` once no process of the turn
 * runs. When a process cannot be confirmed gone, `run` throws a {@link TurnStopFailedError}: the
 * session ends the turn `failed`, never `cancelled` over a live process.
 * Codex's approval requests are asked through the session (its grants and `tool/approve`).
 * Not bridged: steering (`turn/steer`), subagent threads, and resuming a thread after a host restart.
 */
import type { Item, TurnUsage } from "@muse-code/protocol";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { itemDelta } from "../agent/itemChanges.js";
import { isoNow } from "../agent/recordedAt.js";
import { TurnStopFailedError, type TurnContext, type TurnDriver } from "../agent/turnDriver.js";
import { ProcessTreeWatch } from "./processTree.js";
import type { BridgeEvent } from "./bridgeEvents.js";
import { CodexAppServer } from "./codex/codexAppServer.js";
import { approvalOffers, approvalResult, isApprovalRequest, type CodexApprovalRequest } from "./codex/codexApprovals.js";
import { CodexTurnItems } from "./codex/codexItems.js";
import { reapCodexTree, stopCodexTurn } from "./codex/codexTurnStop.js";
import type { ServerNotification } from "./codex/generated/ServerNotification.js";
import type { Turn } from "./codex/generated/v2/Turn.js";

/**
 * How a host runs its sessions' turns with Codex (`muse serve --agent codex`).
 *
 * @example
 * ```ts
 * const agent: CodexAgentOptions = { kind: "codex", bin: "/usr/local/bin/codex", codexHome: "/home/me/.codex", config: ['model="o4-mini"'] };
 * createHost({ models: codexModels(), defaultModel: CODEX_MODEL_NAME, agent });
 * ```
 */
export interface CodexAgentOptions {
  /** Which agent runs the turns: Codex's app-server. */
  kind: "codex";
  /** The Codex binary (`--agent-bin PATH`); default: the pinned `@openai/codex` package's native binary. */
  bin?: string;
  /** Codex's CODEX_HOME (its config.toml and auth). @defaultValue `$CODEX_HOME`, else `~/.codex` */
  codexHome?: string;
  /** Config overrides, each `key=value` as `codex -c` takes them (the value is TOML). */
  config?: readonly string[];
  /** The directory Codex works in (its commands run there). @defaultValue process.cwd() */
  cwd?: string;
  /** The environment Codex starts with (CODEX_HOME is set on top). @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
}

/** What a {@link CodexTurnDriver} is given besides the agent's options. */
export interface CodexTurnDriverOptions extends Omit<CodexAgentOptions, "kind"> {
  codexHome: string;
  /** SIGTERM → SIGKILL of a stopped turn's tool processes. @unit milliseconds @defaultValue 2000 */
  killGraceMs?: number;
  logger?: (line: string) => void;
}

/** A stopped tool call's `failureReason`, as the reference host's shell tool says it. */
const STOPPED_REASON = "turn cancelled";

/** Why a Codex turn ended without the user: it failed, or Codex stopped it by itself. */
function endedBy(turn: Turn): string {
  if (turn.status === "failed") return turn.error?.message ?? "codex failed the turn";
  return `codex ended the turn ${turn.status}`;
}

/** One session's Codex. */
export class CodexTurnDriver implements TurnDriver {
  readonly #options: CodexTurnDriverOptions;
  #server: Promise<{ server: CodexAppServer; threadId: string }> | undefined;
  /** The running turn's answerer of Codex's approval requests. */
  #asking: ((request: CodexApprovalRequest) => Promise<unknown>) | undefined;

  constructor(options: CodexTurnDriverOptions) {
    this.#options = options;
  }

  /** The app-server and the session's thread, started once. */
  #ready(): Promise<{ server: CodexAppServer; threadId: string }> {
    this.#server ??= (async () => {
      const o = this.#options;
      const server = await CodexAppServer.start({
        codexHome: o.codexHome,
        ...(o.bin === undefined ? {} : { binary: o.bin }),
        ...(o.config === undefined ? {} : { config: o.config }),
        ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
        ...(o.env === undefined ? {} : { env: o.env }),
        ...(o.logger === undefined ? {} : { logger: o.logger }),
        onServerRequest: (request) => {
          if (!isApprovalRequest(request)) throw new Error(`${request.method} is not bridged`);
          // Between turns there is no one to ask: declined, and Codex goes on without the call.
          return this.#asking?.(request) ?? Promise.resolve(approvalResult(request, "deny"));
        },
      });
      try {
        const { thread } = await server.request("thread/start", { cwd: o.cwd ?? process.cwd() });
        return { server, threadId: thread.id };
      } catch (error) {
        await server.close();
        throw error;
      }
    })();
    // A start that failed is tried again at the next turn.
    this.#server.catch(() => (this.#server = undefined));
    return this.#server;
  }

  /** Stops the app-server (and with it whatever it still runs). */
  async close(): Promise<void> {
    const started = this.#server;
    this.#server = undefined;
    if (started === undefined) return;
    try {
      const { server } = await started;
      await server.close();
    } catch {
      // never started: nothing to stop
    }
  }

  async run(turn: TurnContext): Promise<void> {
    const { signal } = turn;
    signal.throwIfAborted();
    turn.at("promptAssembly");
    const { server, threadId } = await this.#ready();
    signal.throwIfAborted();
    turn.declareUsage();
    const out = new TurnItems(turn);
    // Notifications that come before turn/start's answer are held until the turn's id is known.
    let mapper: CodexTurnItems | undefined;
    const early: ServerNotification[] = [];
    let terminal!: (turn: Turn) => void;
    const ended = new Promise<Turn>((resolve) => (terminal = resolve));
    let codexTurnId: string | undefined;
    const feed = (n: ServerNotification): void => {
      if (mapper === undefined) return void early.push(n);
      out.take(mapper.accept(n));
      if (n.method === "turn/completed" && n.params.turn.id === codexTurnId) terminal(n.params.turn);
    };
    const unsubscribe = server.onNotification(feed);
    const watch = new ProcessTreeWatch(server.pid, 100);
    watch.start();
    // The questions open now: a stop answers them (`cancel`) before it interrupts Codex.
    const asking = new Set<Promise<unknown>>();
    this.#asking = (request) => {
      const answer = this.#approve(turn, out, request);
      asking.add(answer);
      void answer.finally(() => asking.delete(answer)).catch(() => {});
      return answer;
    };
    try {
      turn.at("modelStream");
      const text = turn.input.map((i) => i.text).join("\n");
      const started = await server.request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] });
      codexTurnId = started.turn.id;
      mapper = new CodexTurnItems(codexTurnId);
      for (const n of early.splice(0)) feed(n);
      const aborted = new Promise<"aborted">((resolve) => {
        if (signal.aborted) resolve("aborted");
        signal.addEventListener("abort", () => resolve("aborted"), { once: true });
      });
      const outcome = await Promise.race([ended, aborted, server.closed]);
      if (outcome === "aborted") {
        // From here a tool call Codex ends (its terminal terminated by the stop) ends `cancelled`, with its output.
        out.stopping = true;
        await Promise.allSettled([...asking]);
        try {
          await stopCodexTurn(server, { threadId, turnId: codexTurnId, watch, ...this.#grace() });
        } catch (error) {
          out.closeOpen("failed", `the stop failed: ${(error as Error).message}`);
          throw new TurnStopFailedError(`the stop could not be confirmed: ${(error as Error).message}`, { cause: error });
        }
        out.closeOpen("cancelled", STOPPED_REASON);
        signal.throwIfAborted();
        return;
      }
      if (!("status" in outcome)) {
        // The app-server died: its tree is reaped before the turn fails.
        await reapCodexTree(server, { watch, ...this.#grace() }).catch(() => {});
        out.closeOpen("failed", outcome.message);
        throw new Error(`codex app-server: ${outcome.message}`);
      }
      // Codex's own terminal: what its commands left behind is reaped first.
      await reapCodexTree(server, { watch, ...this.#grace() });
      out.closeOpen("failed", "codex ended the turn without completing it");
      if (outcome.status !== "completed") throw new Error(endedBy(outcome));
    } finally {
      this.#asking = undefined;
      watch.stop();
      // What Codex sends after the turn's end (the stopped command's late item/completed) is absorbed.
      unsubscribe();
    }
  }

  /**
   * A Codex approval request, asked through the session (its grants, `tool/approve`) about the
   * toolCall item it names. Approved → `accept` (the host's own grants cover the later calls, so
   * Codex is never told `acceptForSession`); denied → `decline`; withdrawn by a stop → `cancel`,
   * before the stop goes on. A request about no open tool call is declined.
   */
  async #approve(turn: TurnContext, out: TurnItems, request: CodexApprovalRequest): Promise<unknown> {
    const agentItemId = request.params.itemId;
    const item = out.itemOf(agentItemId);
    if (item?.kind !== "toolCall" || out.stopping) return approvalResult(request, out.stopping ? "cancelled" : "deny");
    const approved = await turn.approve(item, approvalOffers(request));
    if (approved !== undefined) {
      out.replace(agentItemId, approved);
      return approvalResult(request, "approve");
    }
    // The session completed the item (denied or withdrawn); what Codex says of it later is absorbed.
    out.forget(agentItemId);
    return approvalResult(request, turn.signal.aborted ? "cancelled" : "deny");
  }

  #grace(): { killGraceMs?: number } {
    return this.#options.killGraceMs === undefined ? {} : { killGraceMs: this.#options.killGraceMs };
  }
}

/** The MSP items of one turn, keyed by Codex's item ids, and what has been sent of each. */
class TurnItems {
  readonly #turn: TurnContext;
  readonly #items = new Map<string, Item>();
  #usage: TurnUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  /** The turn is being stopped: a tool call that ends now ends `cancelled` (Codex says `failed`, exit code -1). */
  stopping = false;

  constructor(turn: TurnContext) {
    this.#turn = turn;
  }

  itemOf(agentItemId: string): Item | undefined {
    return this.#items.get(agentItemId);
  }

  /** The item's state as the session changed it (an approval). */
  replace(agentItemId: string, item: Item): void {
    this.#items.set(agentItemId, item);
  }

  /** The session completed the item itself. */
  forget(agentItemId: string): void {
    this.#items.delete(agentItemId);
  }

  toolOpen(): boolean {
    return [...this.#items.values()].some((i) => i.kind === "toolCall");
  }

  take(events: readonly BridgeEvent[]): void {
    for (const event of events) this.#take(event);
  }

  #take(event: BridgeEvent): void {
    const turn = this.#turn;
    switch (event.type) {
      case "itemStarted": {
        const base = { itemId: uuidv7(), turnId: turn.turnId, revision: 1, status: "inProgress" as const, recordedAt: isoNow() };
        const item: Item =
          event.kind === "toolCall"
            ? { ...base, kind: "toolCall", tool: event.tool, callId: event.callId, args: event.args, visibleOutput: "", truncated: false }
            : { ...base, kind: event.kind, text: "" };
        this.#items.set(event.agentItemId, item);
        turn.emit("item/started", { item: { ...item } });
        if (item.kind === "toolCall" && !this.stopping) turn.at("toolExecution");
        return;
      }
      case "itemDelta": {
        const item = this.#items.get(event.agentItemId);
        if (item === undefined) return;
        const next = {
          ...item,
          [event.field]: (item as unknown as Record<string, string>)[event.field] + event.append,
          revision: item.revision + 1,
          recordedAt: isoNow(),
        } as Item;
        this.#items.set(event.agentItemId, next);
        const delta = itemDelta(next, event.append);
        turn.emit(delta.method, delta.body);
        return;
      }
      case "itemCompleted": {
        const item = this.#items.get(event.agentItemId);
        if (item === undefined) return;
        const stopped = this.stopping && item.kind === "toolCall";
        const done = { ...item, revision: item.revision + 1, status: stopped ? "cancelled" : event.status, recordedAt: isoNow() } as Record<string, unknown>;
        if (event.replaceText !== undefined) done[item.kind === "toolCall" ? "visibleOutput" : "text"] = event.replaceText;
        const failureReason = stopped ? STOPPED_REASON : event.failureReason;
        if (failureReason !== undefined && item.kind === "toolCall") done["failureReason"] = failureReason;
        this.#end(event.agentItemId, done);
        return;
      }
      case "usage": {
        const total = event.usage;
        const step: TurnUsage = {
          inputTokens: total.inputTokens - this.#usage.inputTokens,
          outputTokens: total.outputTokens - this.#usage.outputTokens,
          reasoningTokens: total.reasoningTokens - this.#usage.reasoningTokens,
        };
        this.#usage = { ...total };
        turn.addUsage(step);
        return;
      }
      case "userInput":
        // Steering is not bridged: Codex echoes only input the session gave it.
        return;
    }
  }

  #end(agentItemId: string, done: Record<string, unknown>): void {
    this.#items.delete(agentItemId);
    this.#turn.emit("item/completed", { item: done });
    // Where a stop found the turn stays its cancel point while the stop closes the items.
    if (!this.stopping && !this.toolOpen()) this.#turn.at("modelStream");
  }

  /** Closes every item still open `status`, with the output or text it showed; a tool call says why. */
  closeOpen(status: "cancelled" | "failed", reason: string): void {
    for (const [agentItemId, item] of [...this.#items]) {
      const done: Record<string, unknown> = { ...item, revision: item.revision + 1, status, recordedAt: isoNow() };
      if (item.kind === "toolCall") done["failureReason"] = reason;
      else done["interrupted"] = true;
      this.#end(agentItemId, done);
    }
  }
}
