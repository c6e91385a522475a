/** JSON-RPC 2.0 message shapes and error codes, as the host reads and writes them. */

/**
 * Standard JSON-RPC 2.0 error codes the host uses (MSP's own rejection code is
 * `COMMAND_REJECTED_CODE` from the protocol module).
 */
export const JsonRpcErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** A JSON-RPC id. */
export type JsonRpcId = string | number | null;

/**
 * Whether `value` is an id the host accepts and can echo exactly: a string, `null`, or a number
 * that is a safe integer. A non-finite number (`1e400` parses as `Infinity`, which `JSON.stringify`
 * writes as `null`), a fraction, or an integer beyond 2^53 - 1 cannot be echoed as sent, so a
 * request carrying one is an Invalid Request (-32600), answered with `id: null` and not executed.
 */
export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

/** A JSON-RPC error object. */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC response: exactly one of `result` or `error`. */
export type JsonRpcResponse = { jsonrpc: "2.0"; id: JsonRpcId; result: unknown } | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcError };

/** A JSON-RPC notification. */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params: unknown;
  /** MSP: when the host emitted it, on the envelope beside `params` (as the seed's wire shows). @unit milliseconds since the Unix epoch */
  emittedAtMs?: number;
}

/**
 * The wire form of an MSP notification: `emittedAtMs` moves from the logged params to the
 * envelope, beside `params`, as MSP puts it.
 */
export function notificationMessage(method: string, params: Record<string, unknown>): JsonRpcNotification {
  const { emittedAtMs, ...rest } = params;
  return typeof emittedAtMs === "number" ? { jsonrpc: "2.0", method, params: rest, emittedAtMs } : { jsonrpc: "2.0", method, params: rest };
}

/** Where {@link withJson} keeps a message's JSON text: a symbol key, which `JSON.stringify` skips. */
const JSON_TEXT = Symbol("json text");

/**
 * Attaches `text`, the JSON of `message`, to it, so every transport that sends it
 * ({@link messageJson}) reuses the text instead of serializing the message again: a notification
 * sent to several connections is serialized once. `text` must be exactly `JSON.stringify(message)`,
 * and the message must not change afterwards. Returns `message`.
 */
export function withJson<T extends object>(message: T, text: string): T {
  (message as { [JSON_TEXT]?: string })[JSON_TEXT] = text;
  return message;
}

/**
 * The JSON text of a message to send: the text {@link withJson} attached, else
 * `JSON.stringify(message)`.
 */
export function messageJson(message: unknown): string {
  const text = typeof message === "object" && message !== null ? (message as { [JSON_TEXT]?: string })[JSON_TEXT] : undefined;
  return text ?? JSON.stringify(message);
}

/** Builds an error response. */
export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcError = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

/** A command failure the host turns into a JSON-RPC error: a -32001 rejection or a standard code. */
export class CommandError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "CommandError";
    this.code = code;
    this.data = data;
  }
}
