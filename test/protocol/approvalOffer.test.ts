/** What a `tool/approve` question offers (MSP 2.1): its decisions, the 2.0 default, and the shape of its offer. */
import { describe, expect, it } from "vitest";
import { offeredDecisions, problemWithApprovalOffer, problemWithDecision } from "../../packages/protocol/src/approvalOffer.js";

const call = { tool: "shell", args: '{"command":"ls"}' };

describe("the offer of a tool/approve question", () => {
  it("a 2.0 question (no decisions) offers approve and deny; a 2.1 question what it lists", () => {
    expect(offeredDecisions({})).toEqual(["approve", "deny"]);
    expect(offeredDecisions({ decisions: ["approve", "approveForSession", "deny", "denyAndStop"] })).toEqual([
      "approve",
      "approveForSession",
      "deny",
      "denyAndStop",
    ]);
    expect(problemWithDecision("approveForSession", {})).toBe('decision "approveForSession" was not offered (approve, deny)');
    expect(problemWithDecision("denyAndStop", { decisions: ["approve", "deny"] })).toMatch(/not offered/);
    expect(problemWithDecision("cancelled", { decisions: ["approve"] })).toBeUndefined();
    expect(problemWithDecision("approveForSession", { decisions: ["approveForSession"] })).toBeUndefined();
  });

  it("checks decisions and grant", () => {
    expect(problemWithApprovalOffer({ ...call })).toBeUndefined();
    expect(problemWithApprovalOffer({ ...call, decisions: ["approve", "approveForSession"], grant: { ...call, match: "exact" } })).toBeUndefined();
    expect(problemWithApprovalOffer({ ...call, decisions: [] })).toMatch(/non-empty list/);
    expect(problemWithApprovalOffer({ ...call, decisions: ["approve", "cancelled"] })).toMatch(/non-empty list of distinct/);
    expect(problemWithApprovalOffer({ ...call, decisions: ["deny", "deny"] })).toMatch(/distinct/);
    expect(problemWithApprovalOffer({ ...call, decisions: ["approve"], grant: { ...call, match: "exact" } })).toMatch(/approveForSession is not offered/);
    expect(problemWithApprovalOffer({ ...call, decisions: ["approveForSession"], grant: { tool: "shell" } })).toMatch(/grant must be/);
    expect(problemWithApprovalOffer({ ...call, decisions: ["approveForSession"], grant: { tool: "shell", args: '{"command":"rm"}', match: "exact" } })).toMatch(
      /an exact grant must name the call's own tool and args/,
    );
    // A wider rule is stated, not checked against the call: the UI shows it.
    expect(problemWithApprovalOffer({ ...call, decisions: ["approveForSession"], grant: { tool: "shell", match: "anyArgs" } })).toBeUndefined();
  });
});
