/**
 * Codex's approval requests ↔ MSP's `tool/approve`, with no I/O.
 * - Offers, from a command request's `availableDecisions`: `accept` → approve, `acceptForSession`
 *   → approveForSession, `cancel` → denyAndStop (Codex's `cancel` declines the call and then
 *   interrupts the turn). `deny` is always offered: Codex takes `decline` even where it does not
 *   list it, and the turn goes on. The policy amendments (`acceptWithExecpolicyAmendment`,
 *   `applyNetworkPolicyAmendment`) are prefix and network rules, wider than MSP's exact grant, and
 *   are not offered. A file-change request lists no decisions; all four are offered.
 * - Answers: approve → `accept`, approveForSession → `acceptForSession`, deny → `decline`,
 *   denyAndStop → `cancel`, and `cancelled` (the question withdrawn by a stop) → `cancel`.
 * - `item/permissions/requestApproval` grants a permission profile and carries no decision:
 *   approve grants it for the turn, approveForSession for the session, anything else grants none.
 */
import type { ApprovalDecision, ApprovalOffer } from "@muse-code/protocol";
import type { ServerRequest } from "./generated/ServerRequest.js";
import type { CommandExecutionApprovalDecision } from "./generated/v2/CommandExecutionApprovalDecision.js";
import type { CommandExecutionRequestApprovalParams } from "./generated/v2/CommandExecutionRequestApprovalParams.js";
import type { CommandExecutionRequestApprovalResponse } from "./generated/v2/CommandExecutionRequestApprovalResponse.js";
import type { FileChangeApprovalDecision } from "./generated/v2/FileChangeApprovalDecision.js";
import type { FileChangeRequestApprovalResponse } from "./generated/v2/FileChangeRequestApprovalResponse.js";
import type { GrantedPermissionProfile } from "./generated/v2/GrantedPermissionProfile.js";
import type { PermissionsRequestApprovalParams } from "./generated/v2/PermissionsRequestApprovalParams.js";
import type { PermissionsRequestApprovalResponse } from "./generated/v2/PermissionsRequestApprovalResponse.js";

/** The approval requests the bridge answers through `tool/approve`. */
export type CodexApprovalRequest = Extract<
  ServerRequest,
  { method: "item/commandExecution/requestApproval" | "item/fileChange/requestApproval" | "item/permissions/requestApproval" }
>;

/** Whether a server request is one of the approvals the bridge answers. */
export function isApprovalRequest(request: ServerRequest): request is CodexApprovalRequest {
  return (
    request.method === "item/commandExecution/requestApproval" ||
    request.method === "item/fileChange/requestApproval" ||
    request.method === "item/permissions/requestApproval"
  );
}

const ALL_OFFERS: ApprovalOffer[] = ["approve", "approveForSession", "deny", "denyAndStop"];

/** The MSP decisions a Codex approval request offers, in MSP's order. */
export function approvalOffers(request: CodexApprovalRequest): ApprovalOffer[] {
  if (request.method !== "item/commandExecution/requestApproval") return [...ALL_OFFERS];
  const available: CommandExecutionRequestApprovalParams["availableDecisions"] = request.params.availableDecisions;
  const offered = new Set<ApprovalOffer>(["deny"]);
  for (const decision of available ?? ["accept", "acceptForSession", "decline", "cancel"]) {
    if (decision === "accept") offered.add("approve");
    else if (decision === "acceptForSession") offered.add("approveForSession");
    else if (decision === "cancel") offered.add("denyAndStop");
  }
  return ALL_OFFERS.filter((offer) => offered.has(offer));
}

const DECISIONS: Record<ApprovalDecision, FileChangeApprovalDecision & CommandExecutionApprovalDecision> = {
  approve: "accept",
  approveForSession: "acceptForSession",
  deny: "decline",
  denyAndStop: "cancel",
  cancelled: "cancel",
};

/** Codex's decision for an MSP answer to a command or file-change request. */
export function codexDecision(decision: ApprovalDecision): FileChangeApprovalDecision & CommandExecutionApprovalDecision {
  return DECISIONS[decision];
}

/** The `result` to send back to Codex for an MSP answer to `request`. */
export function approvalResult(
  request: CodexApprovalRequest,
  decision: ApprovalDecision,
): CommandExecutionRequestApprovalResponse | FileChangeRequestApprovalResponse | PermissionsRequestApprovalResponse {
  if (request.method !== "item/permissions/requestApproval") return { decision: codexDecision(decision) };
  if (decision !== "approve" && decision !== "approveForSession") return { permissions: {}, scope: "turn" };
  const requested: PermissionsRequestApprovalParams["permissions"] = request.params.permissions;
  const granted: GrantedPermissionProfile = {};
  if (requested.network !== null) granted.network = requested.network;
  if (requested.fileSystem !== null) granted.fileSystem = requested.fileSystem;
  return { permissions: granted, scope: decision === "approve" ? "turn" : "session" };
}
