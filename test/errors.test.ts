import { describe, expect, it } from "vitest";
import { MspError, MspErrorKinds, type AnyMspError, type CommandRejectedData, type RpcErrorData } from "../src/index.js";

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
    expect(new MspError("commandRejected", "", { commandId: "c", reason: "already_terminal" }).isAlreadyTerminal()).toBe(true);
    expect(new MspError("commandRejected", "", { commandId: "c", reason: "unknown_turn" }).isAlreadyTerminal()).toBe(false);
    expect(new MspError("rpcError", "", { code: -32000, message: "", data: null, reason: "already_terminal" } as RpcErrorData).isAlreadyTerminal()).toBe(false);
  });

  it("has exactly six kinds", () => {
    expect(Object.values(MspErrorKinds).sort()).toEqual(["aborted", "commandRejected", "connectionClosed", "protocol", "rpcError", "timeout"]);
  });

  // The `@ts-expect-error` lines are the type-level test: `tsc -p tsconfig.json` fails if they compile.
  it("narrows data by kind: after instanceof or MspError.is, checking kind types data", () => {
    const caught: unknown = new MspError("commandRejected", "turn/cancel rejected: unknown_turn", { commandId: "c", reason: "unknown_turn", turnId: "t" });
    const seen: unknown[] = [];
    if (caught instanceof MspError) {
      // @ts-expect-error `reason` is data of a commandRejected error only: check `kind` first.
      seen.push(caught.data.reason);
      if (caught.kind === "commandRejected") seen.push(caught.data.reason, caught.data.turnId);
      if (caught.kind === "connectionClosed") seen.push(caught.data.exitCode);
    }
    if (MspError.is(caught)) {
      // @ts-expect-error the same without narrowing, through MspError.is.
      seen.push(caught.data["reason"]);
      if (caught.kind === MspErrorKinds.commandRejected) {
        const data: CommandRejectedData = caught.data;
        seen.push(data.reason);
      }
    }
    expect(seen).toEqual(["unknown_turn", "unknown_turn", "t", "unknown_turn", "unknown_turn"]);
  });

  it("takes the data of its kind", () => {
    // @ts-expect-error a timeout's data is { timeoutMs, method?, commandId?, turnId? }.
    const wrong = new MspError("timeout", "", { reason: "late" });
    const errors: AnyMspError[] = [
      wrong,
      new MspError("timeout", "host/info timed out after 5 ms", { method: "host/info", timeoutMs: 5 }),
      new MspError("protocol", "protocol error: x", { problem: "x", message: null }),
    ];
    expect(errors.map((e) => (e.kind === "timeout" ? e.data.timeoutMs : e.kind === "protocol" ? e.data.problem : undefined))).toEqual([undefined, 5, "x"]);
  });
});
