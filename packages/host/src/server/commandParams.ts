/** Parameter checks of MSP commands: the JSON-RPC errors a malformed or refused command gets. */
import { COMMAND_REJECTED_CODE, isObject, type RejectionReason, type TurnInput } from "@muse-code/protocol";
import { CommandError, JsonRpcErrorCodes } from "./jsonRpc.js";
import type { LogUnavailableError } from "../log/logFilePool.js";

/**
 * A command the host refuses: `-32001` with `data: { commandId, reason, …details }`.
 *
 * @example
 * ```ts
 * throw rejection(commandId, "already_terminal", "the turn already ended", { terminal: "completed" });
 * ```
 */
export function rejection(
  commandId: string,
  reason: RejectionReason | typeof STEERING_UNSUPPORTED,
  message: string,
  details: Record<string, unknown> = {},
): CommandError {
  return new CommandError(COMMAND_REJECTED_CODE, message, { commandId, reason, ...details });
}

/**
 * The rejection reason of a `turn/steer` in a session whose turns take no steering at all (a
 * bridged agent that cannot add input to a running turn; docs/protocol.md, "Rejection"). Its
 * `data` carries `turnId`. Kept out of the SDK's root `RejectionReasons` (its bytes are budgeted).
 *
 * @example
 * ```ts
 * if (error.data.reason === STEERING_UNSUPPORTED) console.log("this agent cannot be steered: Stop and send a new turn");
 * ```
 */
export const STEERING_UNSUPPORTED = "steering_unsupported";

/**
 * The answer to a command that needed a session log's descriptor when none was free: JSON-RPC
 * `-32603` (never remembered for idempotency, so a retry with the same `commandId` runs again),
 * with `data.errno` (`EMFILE` or `ENFILE`) and `data.retryable: true`. Nothing was written.
 */
export function descriptorsExhausted(error: LogUnavailableError): CommandError {
  return new CommandError(JsonRpcErrorCodes.internalError, `Internal error: ${error.message}; retry later`, { errno: error.code, retryable: true });
}

/** Invalid params (`-32602`), with `message`. */
export function invalid(message: string): CommandError {
  return new CommandError(JsonRpcErrorCodes.invalidParams, message);
}

/** `params[name]`, which must be a non-empty string. */
export function stringParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== "string" || value === "") throw invalid(`${name} must be a non-empty string`);
  return value;
}

/** `params[name]`, a string when present. */
export function optionalString(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw invalid(`${name} must be a string`);
  return value;
}

/** A `turn/start`'s `input`: text parts only. */
export function inputParam(params: Record<string, unknown>): TurnInput[] {
  const input = params["input"];
  if (!Array.isArray(input)) throw invalid("input must be an array");
  return input.map((part: unknown, i) => {
    if (!isObject(part) || part["type"] !== "text" || typeof part["text"] !== "string") {
      throw invalid(`input[${i}] must be {type: "text", text: string}`);
    }
    return { type: "text", text: part["text"] };
  });
}
