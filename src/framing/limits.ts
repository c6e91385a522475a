/**
 * Framing limits and the one-message well-formedness check every reader applies.
 */
import type { Message } from "vscode-jsonrpc";
import { isObject } from "@muse-code/protocol/guards.js";

/**
 * Default largest message a reader accepts, in bytes (16 MiB). A larger frame is a
 * `protocol` error and closes the connection; its bytes are never buffered.
 *
 * @unit bytes
 * @example
 * ```ts
 * connect(channel, { maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES / 4 });
 * ```
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * A framing-level problem; `fatal` ones mean the byte stream can no longer be trusted.
 *
 * @example
 * ```ts
 * const reader = new NdjsonMessageReader(channel);
 * reader.onProblem((p: FramingProblem) => console.warn(p.fatal ? "fatal:" : "skipped:", p.problem, p.text));
 * ```
 */
export interface FramingProblem {
  problem: string;
  /** The offending text, cut to at most 200 characters. */
  text?: string;
  fatal: boolean;
  /** The id of a malformed response, when it could be read: its command fails as `protocol`. */
  responseId?: number | string;
}

/** Cut `text` for inclusion in an error. */
export function excerpt(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function isValidId(id: unknown): boolean {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/**
 * What is wrong with a parsed JSON-RPC 2.0 message, or `undefined` when it is well-formed.
 * Checks the envelope only (version, id, method, result/error); MSP params are checked later.
 */
function problemWithMessage(value: unknown): string | undefined {
  if (!isObject(value)) return Array.isArray(value) ? "JSON-RPC batches are not part of MSP" : "a JSON-RPC message must be a JSON object";
  const m = value as Record<string, unknown>;
  if (m["jsonrpc"] !== "2.0") return `jsonrpc must be "2.0", got ${JSON.stringify(m["jsonrpc"])}`;
  const hasMethod = "method" in m;
  const hasId = "id" in m;
  if (hasMethod) {
    if (typeof m["method"] !== "string") return "method must be a string";
    if (hasId && !isValidId(m["id"])) return "a request id must be a string or a number";
    if (m["params"] !== undefined && (typeof m["params"] !== "object" || m["params"] === null)) return "params must be an object or an array";
    return undefined;
  }
  if (!hasId) return "a message needs a method or an id";
  if (m["id"] !== null && !isValidId(m["id"])) return "a response id must be a string, a number or null";
  const hasResult = "result" in m;
  const hasError = "error" in m;
  if (hasResult === hasError) return "a response must have exactly one of result and error";
  if (hasError) {
    const e = m["error"];
    if (!isObject(e) || typeof e["code"] !== "number" || typeof e["message"] !== "string") return "error must be {code: number, message: string}";
  }
  return undefined;
}

/** Parse one message's text; returns the message or a non-fatal problem. */
export function parseMessage(text: string): Message | FramingProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `malformed JSON: ${(error as Error).message}`, text: excerpt(text), fatal: false };
  }
  const problem = problemWithMessage(value);
  if (problem !== undefined) {
    const found: FramingProblem = { problem, text: excerpt(text), fatal: false };
    const id = isObject(value) && !("method" in value) ? value["id"] : undefined;
    if (typeof id === "number" || typeof id === "string") found.responseId = id;
    return found;
  }
  return value as Message;
}

/** True when `x` is a {@link FramingProblem} rather than a message. */
export function isFramingProblem(x: Message | FramingProblem): x is FramingProblem {
  return !("jsonrpc" in x);
}
