/** JSON-RPC 2.0 message shapes and error codes, as the host reads and writes them. */

/**
 * Standard JSON-RPC 2.0 error codes the host uses (MSP's own rejection code is
 * `COMMAND_REJECTED_CODE` from the protocol module).
 *
 * @example
 * ```ts
 * const reply: JsonRpcResponse = { jsonrpc: "2.0", id: null, error: { code: JsonRpcErrorCodes.parseError, message: "Parse error" } };
 * ```
 */
export const JsonRpcErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/**
 * A JSON-RPC id.
 *
 * @example
 * ```ts
 * const id: JsonRpcId = null; // the id of a response to an unparseable message
 * ```
 */
export type JsonRpcId = string | number | null;

/**
 * Whether `value` is an id the host accepts and can echo exactly: a string, `null`, or a number
 * that is a safe integer. A non-finite number (`1e400` parses as `Infinity`, which `JSON.stringify`
 * writes as `null`), a fraction, or an integer beyond 2^53 - 1 cannot be echoed as sent, so a
 * request carrying one is an Invalid Request (-32600), answered with `id: null` and not executed.
 *
 * @example
 * ```ts
 * isJsonRpcId(7); // true
 * isJsonRpcId(JSON.parse("1e400")); // false: Infinity
 * isJsonRpcId(1.5); // false
 * ```
 */
export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

/**
 * A JSON-RPC error object.
 *
 * @example
 * ```ts
 * const error: JsonRpcError = { code: -32601, message: "Method not found: x" };
 * ```
 */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * A JSON-RPC response: exactly one of `result` or `error`.
 *
 * @example
 * ```ts
 * const ok: JsonRpcResponse = { jsonrpc: "2.0", id: 1, result: { status: "accepted" } };
 * ```
 */
export type JsonRpcResponse = { jsonrpc: "2.0"; id: JsonRpcId; result: unknown } | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcError };

/**
 * A JSON-RPC notification.
 *
 * @example
 * ```ts
 * const n: JsonRpcNotification = { jsonrpc: "2.0", method: "turn/started", params: { turnId } };
 * ```
 */
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
 *
 * @example
 * ```ts
 * const transport = createStdioTransport(process.stdin, process.stdout);
 * transport.send(notificationMessage("turn/started", { sessionId, viewCursor: `v:${sessionId}:3`, emittedAtMs: Date.now(), turnId }));
 * ```
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
 *
 * @example
 * ```ts
 * const message = notificationMessage("turn/started", params);
 * for (const transport of transports) transport.send(withJson(message, JSON.stringify(message)));
 * ```
 */
export function withJson<T extends object>(message: T, text: string): T {
  (message as { [JSON_TEXT]?: string })[JSON_TEXT] = text;
  return message;
}

/**
 * The JSON text of a message to send: the text {@link withJson} attached, else
 * `JSON.stringify(message)`.
 *
 * @example
 * ```ts
 * socket.send(messageJson({ jsonrpc: "2.0", id: 1, result: {} })); // '{"jsonrpc":"2.0","id":1,"result":{}}'
 * ```
 */
export function messageJson(message: unknown): string {
  const text = typeof message === "object" && message !== null ? (message as { [JSON_TEXT]?: string })[JSON_TEXT] : undefined;
  return text ?? JSON.stringify(message);
}

/**
 * Builds an error response.
 *
 * @example
 * ```ts
 * errorResponse(null, JsonRpcErrorCodes.parseError, "Parse error");
 * ```
 */
export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcError = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}

/**
 * A command failure the host turns into a JSON-RPC error: a -32001 rejection or a standard code.
 *
 * @example
 * ```ts
 * throw new CommandError(JsonRpcErrorCodes.invalidParams, "sessionId must be a string");
 * ```
 */
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
