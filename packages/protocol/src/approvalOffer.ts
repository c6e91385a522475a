/**
 * What a `tool/approve` question offers (MSP 2.1): its `decisions` (or, from a 2.0 host that lists
 * none, `approve` and `deny`) and the grant rule an `approveForSession` answer would create.
 * Kept out of the root entry (its bytes are budgeted): the session layer, the UI helpers, the CLI,
 * the testing kit and the reference host use it.
 */
import { isObject } from "./guards.js";
import type { ApprovalDecision, ApprovalOffer, ToolApproveParams } from "./types.js";

/** The offers a 2.0 host makes (it lists none). */
const OFFERED_BY_2_0: readonly ApprovalOffer[] = ["approve", "deny"];
/** Every decision a host may offer. */
const OFFERS: ReadonlySet<string> = new Set<ApprovalOffer>(["approve", "approveForSession", "deny", "denyAndStop"]);

/**
 * The decisions `question` offers, in its order: its `decisions` when it lists them (MSP 2.1),
 * else `["approve", "deny"]` (a 2.0 host). `cancelled` is always allowed besides, and never listed.
 *
 * @example
 * ```ts
 * client.events.on("approvalAsked", (question) => {
 *   console.log(`answers: ${offeredDecisions(question.request).join(" / ")}`); // "approve / approveForSession / deny / denyAndStop"
 * });
 * ```
 */
export function offeredDecisions(question: Pick<ToolApproveParams, "decisions">): readonly ApprovalOffer[] {
  const listed = question.decisions;
  return Array.isArray(listed) ? listed.filter((d) => OFFERS.has(d)) : OFFERED_BY_2_0;
}

/**
 * Why `decision` may not answer `question`, or `undefined` when it may: `cancelled` always may;
 * any other decision only when the question offers it ({@link offeredDecisions}).
 *
 * @example
 * ```ts
 * problemWithDecision("approveForSession", { decisions: ["approve", "deny"] }); // 'decision "approveForSession" was not offered (approve, deny)'
 * problemWithDecision("cancelled", { decisions: ["approve"] }); // undefined
 * ```
 */
export function problemWithDecision(decision: ApprovalDecision, question: Pick<ToolApproveParams, "decisions">): string | undefined {
  const offered = offeredDecisions(question);
  return decision === "cancelled" || offered.includes(decision) ? undefined : `decision "${decision}" was not offered (${offered.join(", ")})`;
}

/**
 * What is wrong with the MSP 2.1 fields of a `tool/approve` question, or `undefined` when they are
 * well-formed: `decisions`, when present, a non-empty list of distinct offers (`approve`,
 * `approveForSession`, `deny`, `denyAndStop`); `grant`, when present, `{tool, args?, match}` with
 * string fields, and only beside an offered `approveForSession`.
 */
export function problemWithApprovalOffer(params: Record<string, unknown>): string | undefined {
  const listed = params["decisions"];
  const grant = params["grant"];
  if (
    listed !== undefined &&
    !(Array.isArray(listed) && listed.length > 0 && listed.every((d) => OFFERS.has(d as string)) && new Set(listed).size === listed.length)
  ) {
    return `decisions must be a non-empty list of distinct ${[...OFFERS].join(", ")}`;
  }
  if (grant === undefined) return undefined;
  if (!isObject(grant) || typeof grant["tool"] !== "string" || typeof grant["match"] !== "string" || !["string", "undefined"].includes(typeof grant["args"])) {
    return "grant must be {tool: string, args?: string, match: string}";
  }
  if (!Array.isArray(listed) || !listed.includes("approveForSession")) return "grant is stated but approveForSession is not offered";
  if (grant["match"] === "exact" && (grant["tool"] !== params["tool"] || grant["args"] !== params["args"])) {
    return "an exact grant must name the call's own tool and args";
  }
  return undefined;
}
