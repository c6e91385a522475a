/** muse reads MUSE_HOST_TOKEN as muse-host does (trimmed), so one variable gives both sides one token. */
import { describe, expect, it } from "vitest";
import { readToken } from "../../packages/host/src/cli/openedHost.js";

const target = { kind: "ws" as const, url: "ws://127.0.0.1:1/msp" };

describe("readToken", () => {
  it("trims MUSE_HOST_TOKEN as muse-host does; blank or unset means no token", () => {
    expect(readToken(target, { MUSE_HOST_TOKEN: "  s3cret-token \n" })).toBe("s3cret-token");
    expect(readToken(target, { MUSE_HOST_TOKEN: "a b" })).toBe("a b"); // inner spaces are the token's
    expect(readToken(target, { MUSE_HOST_TOKEN: " \t\n" })).toBeUndefined();
    expect(readToken(target, {})).toBeUndefined();
  });
});
