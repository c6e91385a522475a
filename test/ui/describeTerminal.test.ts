import { describe, expect, it } from "vitest";
import { HOST_RESTARTED_REASON, TurnReasons, type CancelCause, type Terminal, type TurnCompletedParams } from "../../src/index.js";
import { describeTerminal } from "../../src/ui/index.js";

function terminal(kind: Terminal, reason: string, cause?: CancelCause): TurnCompletedParams {
  const params: TurnCompletedParams = { sessionId: "s", viewCursor: "v:s:9", turnId: "t", terminal: kind, reason, durationMs: 1200 };
  if (cause !== undefined) params.cause = cause;
  return params;
}

describe("describeTerminal", () => {
  it("says who or what stopped a cancelled turn, by its cause", () => {
    const at = TurnReasons.cancelledDuringToolExecution;
    expect(describeTerminal(terminal("cancelled", at, { kind: "user" }))).toBe("you stopped it");
    expect(describeTerminal(terminal("cancelled", at, { kind: "hook", reason: "turn time limit (120000 ms)" }))).toBe(
      "stopped by policy: turn time limit (120000 ms)",
    );
    expect(describeTerminal(terminal("cancelled", at, { kind: "hook" }))).toBe("stopped by policy");
    expect(describeTerminal(terminal("cancelled", at, { kind: "disposed" }))).toBe("the host shut down");
    expect(describeTerminal(terminal("cancelled", at, { kind: "parent" }))).toBe("stopped because its parent turn stopped");
    expect(describeTerminal(terminal("cancelled", at))).toBe("cancelled: cancelled during tool execution");
  });

  it("a user's Stop, a policy stop and a shutdown at the same point never read alike", () => {
    const causes: CancelCause[] = [{ kind: "user" }, { kind: "hook", reason: "budget" }, { kind: "disposed" }, { kind: "parent" }];
    const sentences = causes.map((cause) => describeTerminal(terminal("cancelled", TurnReasons.cancelledDuringToolExecution, cause)));
    expect(new Set(sentences).size).toBe(causes.length);
  });

  it("says completed, the host restarted, or failed with the reason", () => {
    expect(describeTerminal(terminal("completed", TurnReasons.completed))).toBe("completed");
    expect(describeTerminal(terminal("failed", HOST_RESTARTED_REASON))).toBe("the host restarted");
    expect(describeTerminal(terminal("failed", "failed: model default is not loaded"))).toBe("failed: model default is not loaded");
    expect(describeTerminal(terminal("failed", "the model timed out"))).toBe("failed: the model timed out");
  });
});
