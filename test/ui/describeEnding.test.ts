import { describe, expect, it } from "vitest";
import { describeEnding } from "../../src/ui/index.js";

const usage = { inputTokens: 412, outputTokens: 36, reasoningTokens: 120 };

describe("describeEnding", () => {
  it("adds where the host cut the turn to a cause's sentence, then the usage", () => {
    expect(
      describeEnding({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "hook", reason: "turn time limit (1000 ms)" }, usage }),
    ).toBe("stopped by policy: turn time limit (1000 ms) (cancelled during tool execution); tokens 412 in, 36 out, 120 reasoning");
    expect(describeEnding({ terminal: "cancelled", reason: "cancelled during model stream", cause: { kind: "user" } })).toBe(
      "you stopped it (cancelled during model stream)",
    );
    expect(describeEnding({ terminal: "cancelled", reason: "cancelled during tool execution", cause: { kind: "disposed" } })).toBe(
      "the host shut down (cancelled during tool execution)",
    );
  });

  it("keeps a reason whose words happen to appear inside the sentence", () => {
    // "stop" is inside "you stopped it", yet it is the host's reason and must be shown.
    expect(describeEnding({ terminal: "cancelled", reason: "stop", cause: { kind: "user" } })).toBe("you stopped it (stop)");
    expect(describeEnding({ terminal: "cancelled", reason: "it", cause: { kind: "parent" } })).toBe("stopped because its parent turn stopped (it)");
  });

  it("does not repeat a reason the sentence was made from", () => {
    expect(describeEnding({ terminal: "failed", reason: "model unavailable" })).toBe("failed: model unavailable");
    expect(describeEnding({ terminal: "failed", reason: "host restarted" })).toBe("the host restarted");
    expect(describeEnding({ terminal: "cancelled", reason: "discarded from inbox" })).toBe("cancelled: discarded from inbox");
    expect(describeEnding({ terminal: "completed", reason: "completed", usage: { inputTokens: 1, outputTokens: 2, reasoningTokens: 0 } })).toBe(
      "completed; tokens 1 in, 2 out, 0 reasoning",
    );
    expect(describeEnding({ terminal: "completed", reason: "end of script" })).toBe("completed (end of script)");
  });
});
