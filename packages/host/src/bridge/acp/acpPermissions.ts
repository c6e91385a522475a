/**
 * ACP's `session/request_permission` ↔ MSP's `tool/approve`. The question offers the MSP
 * decisions whose ACP option the agent offered: `allow_once` → `approve`, `allow_always` →
 * `approveForSession`, `reject_once` → `deny`, `reject_always` → `denyAndStop`. The answers:
 * - approved (once, or for the session) → the agent's `allow_once` option (`allow_always` only
 *   when it is the one allow the agent offers). A session grant is kept
 *   by the host, exact as MSP's grants are, and answers the agent's next identical question
 *   without asking the client; the agent's own `allow_always` rule (codex-acp's is a command
 *   prefix) could allow calls the user's grant does not cover, so it is never chosen;
 * - denied → `reject_once`;
 * - `denyAndStop` and a Stop while asking → `cancelled`: the prompt turn is being cancelled, and
 *   ACP requires every pending permission request of a cancelled turn to be answered `cancelled`.
 */
import type { PermissionOption, PermissionOptionKind, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { ApprovalOffer } from "@muse-code/protocol";

/** The MSP decision each ACP option kind offers. */
const OFFER_OF: Readonly<Record<PermissionOptionKind, ApprovalOffer>> = {
  allow_once: "approve",
  allow_always: "approveForSession",
  reject_once: "deny",
  reject_always: "denyAndStop",
};

/**
 * The MSP decisions an ACP permission request offers, in MSP's order; `undefined` (the host's
 * default offers) when it lists no option MSP knows.
 *
 * @example
 * ```ts
 * offersOf([{ optionId: "approved", name: "Yes", kind: "allow_once" }, { optionId: "abort", name: "No", kind: "reject_once" }]); // ["approve", "deny"]
 * ```
 */
export function offersOf(options: readonly PermissionOption[]): ApprovalOffer[] {
  const offered = new Set(options.map((o) => OFFER_OF[o.kind]).filter((o) => o !== undefined));
  return (["approve", "approveForSession", "deny", "denyAndStop"] as const).filter((d) => offered.has(d));
}

/**
 * How the session decided a question, as the bridge answers the agent.
 *
 * @example
 * ```ts
 * const answer: AcpPermissionAnswer = approved === undefined ? "denied" : "approved";
 * ```
 */
export type AcpPermissionAnswer = "approved" | "denied" | "cancelled";

/**
 * The `session/request_permission` answer for `answer`: the offered option it maps to
 * (approved: `allow_once`, or `allow_always` when it is the only allow offered; denied:
 * `reject_once`, else `reject_always`), or `cancelled` (a stop, or no such option offered).
 *
 * @example
 * ```ts
 * permissionResponse([{ optionId: "approved", name: "Yes", kind: "allow_once" }], "approved"); // { outcome: { outcome: "selected", optionId: "approved" } }
 * permissionResponse([{ optionId: "approved", name: "Yes", kind: "allow_once" }], "cancelled"); // { outcome: { outcome: "cancelled" } }
 * ```
 */
export function permissionResponse(options: readonly PermissionOption[], answer: AcpPermissionAnswer): RequestPermissionResponse {
  const kinds: readonly PermissionOptionKind[] =
    answer === "approved" ? ["allow_once", "allow_always"] : answer === "denied" ? ["reject_once", "reject_always"] : [];
  for (const kind of kinds) {
    const option = options.find((o) => o.kind === kind);
    if (option !== undefined) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}
