/**
 * The MSP items of one bridged turn: what a bridge's mapping says ({@link BridgeEvent}s, named by
 * the agent's ids) turned into the session's `item/started`, `item/delta`, `item/completed` and
 * usage, through the turn's context. Every item started here gets exactly one `item/completed`:
 * by the agent, by the session (an approval it closed, then {@link BridgeTurnItems.forget}), or by
 * {@link BridgeTurnItems.closeOpen} at the turn's end. While {@link BridgeTurnItems.stopping}, a
 * tool call the agent ends is closed `cancelled` (the stop ended it), with its output.
 */
import type { Item, TurnUsage } from "@muse-code/protocol";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { itemDelta } from "../agent/itemChanges.js";
import { isoNow } from "../agent/recordedAt.js";
import type { TurnContext } from "../agent/turnDriver.js";
import type { BridgeEvent } from "./bridgeEvents.js";

/**
 * A stopped tool call's `failureReason`, as the reference host's shell tool says it.
 *
 * @example
 * ```ts
 * items.closeOpen("cancelled", BRIDGE_STOPPED_REASON);
 * ```
 */
export const BRIDGE_STOPPED_REASON = "turn cancelled";

/**
 * One bridged turn's items, keyed by the agent's item ids.
 *
 * @example
 * ```ts
 * const items = new BridgeTurnItems(turn);
 * items.take([{ type: "itemStarted", agentItemId: "m1", kind: "message" }, { type: "itemDelta", agentItemId: "m1", field: "text", append: "Hi" }]);
 * items.closeOpen("cancelled", BRIDGE_STOPPED_REASON);
 * ```
 */
export class BridgeTurnItems {
  readonly #turn: TurnContext;
  readonly #items = new Map<string, Item>();
  /** The usage so far (each usage event carries the running total). */
  #usage: TurnUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
  /** The turn is being stopped: a tool call that ends now ends `cancelled`. */
  stopping = false;

  readonly #onSteeringEcho: () => void;

  /** @param turn - The turn its items are sent for. @param onSteeringEcho - The agent took steering input into its conversation (Codex echoes it as a user message). */
  constructor(turn: TurnContext, onSteeringEcho: () => void = () => {}) {
    this.#turn = turn;
    this.#onSteeringEcho = onSteeringEcho;
  }

  /** The item the agent's id names, while it is open. */
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

  /** Whether a tool call is open. */
  toolOpen(): boolean {
    return [...this.#items.values()].some((i) => i.kind === "toolCall");
  }

  /** Sends what `events` say, in order. */
  take(events: readonly BridgeEvent[]): void {
    for (const event of events) this.#take(event);
  }

  #take(event: BridgeEvent): void {
    const turn = this.#turn;
    switch (event.type) {
      case "itemStarted": {
        if (this.#items.has(event.agentItemId)) return;
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
        if (event.incomplete === true && item.kind === "toolCall") done["truncated"] = true;
        const failureReason = stopped ? BRIDGE_STOPPED_REASON : event.failureReason;
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
        // The agent took steering input into its conversation: the session's steering item completes.
        this.#onSteeringEcho();
        return;
    }
  }

  #end(agentItemId: string, done: Record<string, unknown>): void {
    this.#items.delete(agentItemId);
    this.#turn.emit("item/completed", { item: done });
    // Where a stop found the turn stays its cancel point while the stop closes the items.
    if (!this.stopping && !this.toolOpen()) this.#turn.at("modelStream");
  }

  /** Closes every item still open `status`, with the output or text it showed; a tool call says why (`reason`). */
  closeOpen(status: "completed" | "cancelled" | "failed", reason: string): void {
    for (const [agentItemId, item] of [...this.#items]) {
      const done: Record<string, unknown> = { ...item, revision: item.revision + 1, status, recordedAt: isoNow() };
      if (item.kind === "toolCall") {
        if (status !== "completed") done["failureReason"] = reason;
      } else if (status !== "completed") done["interrupted"] = true;
      this.#end(agentItemId, done);
    }
  }
}
