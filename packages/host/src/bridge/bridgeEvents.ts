/**
 * What a bridge's mapping says happened in an agent's turn, in MSP's terms but before the host
 * gives it MSP ids: an item started, text or output appended, an item ended, the turn's usage so
 * far, the agent echoing steering input. A turn driver turns these into the session's
 * `item/started`, `item/delta`, `item/completed` and `usage`; the agent's item id names the item
 * until then.
 */
import type { TurnUsage } from "@muse-code/protocol";

/** An item the agent started. A tool call carries what MSP's toolCall item shows of it. */
export type BridgeItemStarted =
  | { type: "itemStarted"; agentItemId: string; kind: "message" | "reasoning" }
  | { type: "itemStarted"; agentItemId: string; kind: "toolCall"; tool: string; callId: string; args: string };

/** Text (a message, reasoning) or output (a tool call) appended to an item. */
export interface BridgeItemDelta {
  type: "itemDelta";
  agentItemId: string;
  field: "text" | "visibleOutput";
  /** Non-empty. */
  append: string;
}

/** An item the agent ended. */
export interface BridgeItemCompleted {
  type: "itemCompleted";
  agentItemId: string;
  status: "completed" | "failed";
  failureReason?: string;
  /** The item's whole text when the agent's final text does not extend what was streamed (a patch, not a delta). */
  replaceText?: string;
  /**
   * The agent's final output holds text the stream never carried, ahead of what was streamed:
   * it cannot be added without rewriting what the client was sent (MSP invariant B), so the
   * tool call completes `truncated: true`, saying that its `visibleOutput` is not all of it.
   */
  incomplete?: true;
}

/** The turn's token counts so far (each notification carries the running total). */
export interface BridgeUsage {
  type: "usage";
  usage: TurnUsage;
}

/** The agent took steering input: it echoes it as a user message of the turn. */
export interface BridgeUserInput {
  type: "userInput";
  agentItemId: string;
  text: string;
}

/** One thing a bridge's mapping says happened. */
export type BridgeEvent = BridgeItemStarted | BridgeItemDelta | BridgeItemCompleted | BridgeUsage | BridgeUserInput;
