/**
 * How an ACP prompt turn's `stopReason` (the answer to `session/prompt`, the turn's terminal)
 * ends the MSP turn: `end_turn` → completed; `max_tokens`, `max_turn_requests` and `refusal` →
 * completed, the stopReason kept as `turn/completed.reason`; `cancelled` → cancelled when the
 * bridge's `session/cancel` asked for it (the session gives the cause). An agent that cancels on
 * its own (codex-acp does, when a permission is answered `reject_once`) ends the turn completed,
 * reason {@link AGENT_CANCELLED_REASON}: no one asked for a stop, so no cause can be named.
 */
import type { StopReason } from "@agentclientprotocol/sdk";

/**
 * The `turn/completed.reason` of a turn the agent cancelled by itself.
 *
 * @example
 * ```ts
 * if (params.reason === AGENT_CANCELLED_REASON) console.log("the agent stopped on its own");
 * ```
 */
export const AGENT_CANCELLED_REASON = "cancelled by the agent";

/**
 * What the bridge does with an ACP turn's end: the MSP terminal, and the reason a completed or failed one gives.
 *
 * @example
 * ```ts
 * const end: AcpTurnEnd = { terminal: "completed", reason: "max_tokens" };
 * ```
 */
export type AcpTurnEnd = { terminal: "completed"; reason?: string } | { terminal: "cancelled" } | { terminal: "failed"; reason: string };

/**
 * The MSP end of a prompt turn that answered `stopReason`; `cancelling` says whether the bridge
 * had sent `session/cancel` for it.
 *
 * @example
 * ```ts
 * turnEndOf("max_tokens", false); // { terminal: "completed", reason: "max_tokens" }
 * turnEndOf("cancelled", true); // { terminal: "cancelled" }
 * turnEndOf("cancelled", false); // { terminal: "completed", reason: "cancelled by the agent" }
 * ```
 */
export function turnEndOf(stopReason: StopReason, cancelling: boolean): AcpTurnEnd {
  switch (stopReason) {
    case "end_turn":
      return { terminal: "completed" };
    case "max_tokens":
    case "max_turn_requests":
    case "refusal":
      return { terminal: "completed", reason: stopReason };
    case "cancelled":
      return cancelling ? { terminal: "cancelled" } : { terminal: "completed", reason: AGENT_CANCELLED_REASON };
    default:
      return { terminal: "failed", reason: `the ACP agent ended the turn with an unknown stopReason ${JSON.stringify(stopReason)}` };
  }
}
