import { describe, expect, it } from "vitest";
import { MspError, MspErrorKinds } from "../src/index.js";

describe("MspError", () => {
  it("carries kind, data and cause, and is recognised across copies of the class", () => {
    const cause = new Error("why");
    const e = new MspError("aborted", "stopped", { method: "turn/cancel" }, { cause });
    expect([e.name, e.kind, e.data["method"], e.cause]).toEqual(["MspError", "aborted", "turn/cancel", cause]);
    // A structurally separate copy (another bundle) made with the same brand.
    const foreign = Object.assign(Object.create(Error.prototype), { kind: "timeout" });
    Object.defineProperty(foreign, Symbol.for("@muse-code/sdk/MspError"), { value: true });
    expect(MspError.is(foreign)).toBe(true);
    expect(foreign instanceof MspError).toBe(true);
    expect(MspError.is(new Error("x"))).toBe(false);
    expect(MspError.is(null)).toBe(false);
  });

  it("isAlreadyTerminal is true only for the already_terminal rejection", () => {
    expect(new MspError("commandRejected", "", { reason: "already_terminal" }).isAlreadyTerminal()).toBe(true);
    expect(new MspError("commandRejected", "", { reason: "unknown_turn" }).isAlreadyTerminal()).toBe(false);
    expect(new MspError("rpcError", "", { reason: "already_terminal" }).isAlreadyTerminal()).toBe(false);
  });

  it("has exactly six kinds", () => {
    expect(Object.values(MspErrorKinds).sort()).toEqual(["aborted", "commandRejected", "connectionClosed", "protocol", "rpcError", "timeout"]);
  });
});
