/** Reading one incoming JSON-RPC text: a command to run, a response to a host request, or the error it is answered with. */
import { Commands, isObject } from "@muse-code/protocol";
import { errorResponse, isJsonRpcId, JsonRpcErrorCodes, type JsonRpcId, type JsonRpcResponse } from "./jsonRpc.js";

const knownMethods: ReadonlySet<string> = new Set(Object.values(Commands));

/**
 * What one incoming text is: a malformed message (`invalid`, with the answer it gets), a client
 * notification (MSP defines none), a response to a request the host sent (`loose` when it lacks
 * `jsonrpc: "2.0"`), or a command with a known method, object params and a valid `commandId` if
 * one was given.
 */
export type Incoming =
  | { kind: "invalid"; answer: JsonRpcResponse }
  | { kind: "notification" }
  | { kind: "response"; id: JsonRpcId; message: Record<string, unknown>; loose: boolean }
  | { kind: "command"; id: JsonRpcId; method: string; params: Record<string, unknown>; commandId: string | undefined };

function invalid(answer: JsonRpcResponse): Incoming {
  return { kind: "invalid", answer };
}

/** Reads one incoming JSON-RPC text (see {@link Incoming}). */
export function readIncoming(text: string): Incoming {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return invalid(errorResponse(null, JsonRpcErrorCodes.parseError, "Parse error"));
  }
  if (Array.isArray(message)) {
    return invalid(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Batches are not supported"));
  }
  if (!isObject(message)) {
    return invalid(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request"));
  }
  const rawId = message["id"];
  const hasId = "id" in message;
  // An id the answer could not carry exactly (Infinity, a fraction, beyond 2^53 - 1) is answered with id null.
  const id: JsonRpcId = isJsonRpcId(rawId) ? rawId : null;
  if (hasId && !isJsonRpcId(rawId)) {
    return invalid(errorResponse(null, JsonRpcErrorCodes.invalidRequest, "Invalid Request: id must be a string, an integer within ±(2^53 - 1), or null"));
  }
  // A response to a request this host sent (tool/approve): routed by id, never answered.
  if (!("method" in message) && hasId && ("result" in message || "error" in message)) {
    return { kind: "response", id, message, loose: message["jsonrpc"] !== "2.0" };
  }
  if (message["jsonrpc"] !== "2.0" || typeof message["method"] !== "string") {
    return invalid(errorResponse(id, JsonRpcErrorCodes.invalidRequest, "Invalid Request"));
  }
  if (!hasId) return { kind: "notification" }; // MSP defines none
  const method = message["method"];
  if (!knownMethods.has(method)) {
    return invalid(errorResponse(id, JsonRpcErrorCodes.methodNotFound, `Method not found: ${method}`));
  }
  const params = "params" in message ? message["params"] : {};
  if (!isObject(params)) {
    return invalid(errorResponse(id, JsonRpcErrorCodes.invalidParams, "params must be an object"));
  }
  const given = params["commandId"];
  if (given !== undefined && (typeof given !== "string" || given === "")) {
    return invalid(errorResponse(id, JsonRpcErrorCodes.invalidParams, "commandId must be a non-empty string"));
  }
  return { kind: "command", id, method, params, commandId: given };
}
