import { describe, expect, it } from "vitest";
import { describeUsage } from "../../src/ui/index.js";

describe("describeUsage", () => {
  it("names the three counts in the order input, output, reasoning", () => {
    expect(describeUsage({ inputTokens: 120, outputTokens: 8, reasoningTokens: 0 })).toBe("tokens 120 in, 8 out, 0 reasoning");
    expect(describeUsage({ inputTokens: 0, outputTokens: 0, reasoningTokens: 31 })).toBe("tokens 0 in, 0 out, 31 reasoning");
  });
});
