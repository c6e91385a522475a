import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BEARER_SUBPROTOCOL_PREFIX, MSP_SUBPROTOCOL, bearerSubprotocol, bearerTokenOf } from "../../packages/protocol/src/index.js";

/** RFC 7230 `token`: what a Sec-WebSocket-Protocol entry may hold. */
const RFC7230_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

describe("WebSocket subprotocols", () => {
  it("are the documented names", () => {
    expect(MSP_SUBPROTOCOL).toBe("msp.v1");
    expect(BEARER_SUBPROTOCOL_PREFIX).toBe("bearer.msp.");
    // base64url("s3cret/+?") without padding
    expect(bearerSubprotocol("s3cret/+?")).toBe("bearer.msp.czNjcmV0Lys_");
  });

  it("round-trip any non-empty token, and the entry is always a valid subprotocol token", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: "grapheme" }), (token) => {
        const entry = bearerSubprotocol(token);
        expect(entry).toMatch(RFC7230_TOKEN);
        expect(entry).not.toContain("=");
        expect(bearerTokenOf([MSP_SUBPROTOCOL, entry])).toBe(token);
      }),
    );
  });

  it("refuse an empty or non-string token", () => {
    expect(() => bearerSubprotocol("")).toThrow(TypeError);
    expect(() => bearerSubprotocol(42 as unknown as string)).toThrow(TypeError);
  });

  it("bearerTokenOf reads nothing from no entry, two entries, or a malformed one", () => {
    expect(bearerTokenOf([MSP_SUBPROTOCOL])).toBeUndefined();
    expect(bearerTokenOf([bearerSubprotocol("a"), bearerSubprotocol("b")])).toBeUndefined();
    expect(bearerTokenOf(["bearer.msp."])).toBeUndefined();
    expect(bearerTokenOf(["bearer.msp.abc="])).toBeUndefined();
    expect(bearerTokenOf(["bearer.msp.a"])).toBeUndefined();
    expect(bearerTokenOf(["bearer.msp.__8"])).toBeUndefined(); // bytes ff ff: not UTF-8
  });
});
