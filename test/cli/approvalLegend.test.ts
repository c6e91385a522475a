/**
 * The keys `muse run --approve ask` lists for a host that offers more than y/N (MSP 2.1): the `a`
 * key states the grant's rule exactly, and says so when the host offers `approveForSession` but
 * states no rule (never "this exact call", which the host did not promise).
 */
import { describe, expect, it } from "vitest";
import type { ToolApproveParams } from "../../src/index.js";
import { ApprovalPrompt } from "../../packages/host/src/cli/approvalPrompt.js";
import type { SessionView } from "../../packages/host/src/cli/sessionView.js";

/** The question `muse` shows for `request` (with no stdin to read from, it then denies). */
async function questionFor(request: ToolApproveParams): Promise<string> {
  const shown: string[] = [];
  const view = { promptOpened: (text: string) => shown.push(text), promptClosed: () => {} } as unknown as SessionView;
  const prompt = new ApprovalPrompt({ policy: "ask", view, interrupt: () => {} });
  const answer = await prompt.handler(request, { signal: new AbortController().signal } as Parameters<ApprovalPrompt["handler"]>[1]);
  expect(answer).toMatchObject({ decision: "deny" });
  return shown[0] ?? "";
}

const base: ToolApproveParams = {
  sessionId: "s",
  turnId: "t",
  itemId: "i",
  callId: "c",
  tool: "shell",
  args: '{"command":"echo hello"}',
  decisions: ["approve", "approveForSession", "deny"],
};

describe("the approval prompt's legend", () => {
  it("says the rule is unstated when the host offers approveForSession with no grant", async () => {
    expect(await questionFor(base)).toBe("Run shell: echo hello? (y = once, a = always in this session, by a rule the host does not state, n = deny) [y/N]");
  });

  it("says 'this exact call' only for an exact rule of the call's own tool and args, and states any other rule", async () => {
    expect(await questionFor({ ...base, grant: { tool: "shell", args: base.args, match: "exact" } })).toContain("a = always this exact call in this session");
    expect(await questionFor({ ...base, grant: { tool: "shell", match: "anyArgs" } })).toContain("a = always in this session: anyArgs shell (any arguments)");
  });
});
