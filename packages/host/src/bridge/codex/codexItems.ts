/**
 * Codex's item notifications for one turn, mapped to bridge events (../bridgeEvents.ts), with no
 * I/O: feed each notification to {@link CodexTurnItems.accept} in wire order.
 * - `agentMessage` → a message; `item/agentMessage/delta` → text deltas.
 * - `reasoning` → reasoning; its summary and raw-text deltas → text deltas (a new summary part
 *   starts after a blank line).
 * - `commandExecution` → a `shell` toolCall, `args` `{"command": …}` as Codex reports the command;
 *   `item/commandExecution/outputDelta` → `visibleOutput` deltas. A short command sends no delta:
 *   the output it printed comes whole as `aggregatedOutput` in `item/completed`, and what was not
 *   streamed yet is sent as one last delta. Codex never streams a command's first chunk; once a
 *   later one was streamed, the first cannot be sent (a completion only extends what was
 *   streamed), and the call completes `truncated: true`. Exit code 0 → completed; otherwise failed (`exit code
 *   N`, as the reference host's shell tool says); `declined` → failed `denied by the user`.
 * - `fileChange` → an `apply_patch` toolCall, `args` `{"changes": [{path, kind}]}`.
 * - `userMessage`: the turn's first is its own input (already the host's), each later one is
 *   steering input Codex took (its item completes the steer).
 * - `thread/tokenUsage/updated` → the turn's usage: the sum of each model response's `last`
 *   counts. Codex's `outputTokens` include the reasoning tokens; MSP counts them apart, so
 *   `outputTokens` is Codex's minus `reasoningOutputTokens`.
 * Other item types (plans, web search, MCP and collab-agent calls) are not mapped here.
 */
import { TOOL_DENIED_REASON, type TurnUsage } from "@muse-code/protocol";
import type { ServerNotification } from "./generated/ServerNotification.js";
import type { ThreadItem } from "./generated/v2/ThreadItem.js";
import type { BridgeEvent } from "../bridgeEvents.js";

interface Open {
  field: "text" | "visibleOutput";
  /** What was sent of the growing field. */
  sent: string;
  /** The last reasoning summary part seen (a new one starts after a blank line). */
  summaryIndex?: number;
}

type Mapped = "message" | "reasoning" | "toolCall" | "userInput";

function kindOf(item: ThreadItem): Mapped | undefined {
  switch (item.type) {
    case "agentMessage":
      return "message";
    case "reasoning":
      return "reasoning";
    case "commandExecution":
    case "fileChange":
      return "toolCall";
    case "userMessage":
      return "userInput";
    default:
      return undefined;
  }
}

function userText(item: Extract<ThreadItem, { type: "userMessage" }>): string {
  return item.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}

/** The toolCall `tool`, `callId` and `args` of a Codex command or patch item. */
export function toolCallOf(item: Extract<ThreadItem, { type: "commandExecution" | "fileChange" }>): { tool: string; callId: string; args: string } {
  if (item.type === "commandExecution") return { tool: "shell", callId: item.id, args: JSON.stringify({ command: item.command }) };
  return { tool: "apply_patch", callId: item.id, args: JSON.stringify({ changes: item.changes.map((c) => ({ path: c.path, kind: c.kind })) }) };
}

/** The maps of one Codex turn's notifications to bridge events. */
export class CodexTurnItems {
  readonly #turnId: string;
  readonly #open = new Map<string, Open>();
  readonly #closed = new Set<string>();
  #inputSeen = false;
  #usage: TurnUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };

  constructor(turnId: string) {
    this.#turnId = turnId;
  }

  /** The turn's usage so far. */
  get usage(): TurnUsage {
    return { ...this.#usage };
  }

  /** The agent item ids started and not yet completed (what a stop must close). */
  get openItems(): string[] {
    return [...this.#open.keys()];
  }

  /** What was streamed of an open item's growing field (a tool call's output, for closing it `cancelled`). */
  sentOf(agentItemId: string): string | undefined {
    return this.#open.get(agentItemId)?.sent;
  }

  /** The bridge events notification `n` means for this turn (none for another turn's, or an unmapped one). */
  accept(n: ServerNotification): BridgeEvent[] {
    switch (n.method) {
      case "item/started":
        return n.params.turnId === this.#turnId ? this.#started(n.params.item) : [];
      case "item/completed":
        return n.params.turnId === this.#turnId ? this.#completed(n.params.item) : [];
      case "item/agentMessage/delta":
      case "item/commandExecution/outputDelta":
      case "item/reasoning/textDelta":
        return n.params.turnId === this.#turnId ? this.#append(n.params.itemId, n.params.delta) : [];
      case "item/reasoning/summaryTextDelta":
        return n.params.turnId === this.#turnId ? this.#append(n.params.itemId, n.params.delta, n.params.summaryIndex) : [];
      case "thread/tokenUsage/updated": {
        if (n.params.turnId !== this.#turnId) return [];
        const last = n.params.tokenUsage.last;
        this.#usage = {
          inputTokens: this.#usage.inputTokens + last.inputTokens,
          outputTokens: this.#usage.outputTokens + Math.max(0, last.outputTokens - last.reasoningOutputTokens),
          reasoningTokens: this.#usage.reasoningTokens + last.reasoningOutputTokens,
        };
        return [{ type: "usage", usage: this.usage }];
      }
      default:
        return [];
    }
  }

  #started(item: ThreadItem): BridgeEvent[] {
    const kind = kindOf(item);
    if (kind === undefined || kind === "userInput" || this.#open.has(item.id) || this.#closed.has(item.id)) return [];
    if (item.type === "commandExecution" || item.type === "fileChange") {
      this.#open.set(item.id, { field: "visibleOutput", sent: "" });
      return [{ type: "itemStarted", agentItemId: item.id, kind: "toolCall", ...toolCallOf(item) }];
    }
    this.#open.set(item.id, { field: "text", sent: "" });
    return [{ type: "itemStarted", agentItemId: item.id, kind: kind as "message" | "reasoning" }];
  }

  #append(agentItemId: string, delta: string, summaryIndex?: number): BridgeEvent[] {
    const open = this.#open.get(agentItemId);
    if (open === undefined) return [];
    let append = delta;
    if (summaryIndex !== undefined) {
      if (open.summaryIndex !== undefined && summaryIndex !== open.summaryIndex && open.sent !== "") append = `\n\n${delta}`;
      open.summaryIndex = summaryIndex;
    }
    if (append === "") return [];
    open.sent += append;
    return [{ type: "itemDelta", agentItemId, field: open.field, append }];
  }

  #completed(item: ThreadItem): BridgeEvent[] {
    const kind = kindOf(item);
    if (kind === undefined || this.#closed.has(item.id)) return [];
    if (item.type === "userMessage") {
      this.#closed.add(item.id);
      if (!this.#inputSeen) {
        this.#inputSeen = true;
        return [];
      }
      return [{ type: "userInput", agentItemId: item.id, text: userText(item) }];
    }
    const events = this.#open.has(item.id) ? [] : this.#started(item);
    const open = this.#open.get(item.id)!;
    const final = finalOf(item);
    let incomplete = false;
    if (final.text !== undefined && final.text !== open.sent) {
      // A completion only extends what was streamed (MSP invariant B): what follows the streamed
      // part is sent; what Codex never streamed before it (a command's first chunk) cannot be,
      // so the call says its output is incomplete.
      const at = final.text.indexOf(open.sent);
      if (at >= 0) events.push(...this.#append(item.id, final.text.slice(at + open.sent.length)));
      incomplete = at !== 0;
    }
    this.#open.delete(item.id);
    this.#closed.add(item.id);
    events.push({ type: "itemCompleted", agentItemId: item.id, ...final.end, ...(incomplete ? { incomplete: true as const } : {}) });
    return events;
  }
}

/** What an item's `item/completed` says: its final text or output, and how it ended. */
function finalOf(item: ThreadItem): { text: string | undefined; end: { status: "completed" | "failed"; failureReason?: string } } {
  switch (item.type) {
    case "agentMessage":
      return { text: item.text, end: { status: "completed" } };
    case "reasoning":
      return { text: [...item.summary, ...item.content].join("\n\n"), end: { status: "completed" } };
    case "commandExecution": {
      const text = item.aggregatedOutput ?? undefined;
      if (item.status === "declined") return { text, end: { status: "failed", failureReason: TOOL_DENIED_REASON } };
      if (item.exitCode === 0 && item.status === "completed") return { text, end: { status: "completed" } };
      const reason = item.exitCode === null ? `ended ${item.status}` : `exit code ${item.exitCode}`;
      return { text, end: { status: "failed", failureReason: reason } };
    }
    case "fileChange":
      if (item.status === "declined") return { text: undefined, end: { status: "failed", failureReason: TOOL_DENIED_REASON } };
      return { text: undefined, end: item.status === "completed" ? { status: "completed" } : { status: "failed", failureReason: `patch ${item.status}` } };
    default:
      return { text: undefined, end: { status: "completed" } };
  }
}
