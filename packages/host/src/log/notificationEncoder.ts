/**
 * Encodes each notification of a session once for the two places it goes: its session-log line
 * (an `item/updated` that extends its item's last logged text becomes a delta) and the JSON text
 * of its wire message. Both are built from one serialization of the item, and the item's growing
 * text (`text`, or a tool call's `visibleOutput`) is JSON-escaped once per chunk, not once per
 * update, so a streamed answer does not cost two full serializations of its text so far for
 * every chunk.
 */
import { growingField } from "@muse-code/protocol/itemFold.js";
import { notificationMessage } from "../server/jsonRpc.js";
import type { SessionLogRecord } from "./sessionLogRecord.js";

/** A `notification` record of a session log, as its writer hands it over (whole params, no delta). */
export type NotificationRecord = Extract<SessionLogRecord, { type: "notification" }>;

/**
 * A notification encoded by {@link NotificationEncoder.encode}: both texts are exactly what
 * `JSON.stringify` makes of the log record (with its delta, if any) and of
 * `notificationMessage(method, params)`, without a trailing newline.
 */
export interface EncodedNotification {
  /** The session-log line. */
  line: string;
  /** The JSON text of the wire message. */
  wire: string;
}

/** The item of a notification's params, when it has one (an object with a string `itemId`). */
export function itemOf(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const item = params["item"];
  return typeof item === "object" && item !== null && typeof (item as { itemId?: unknown }).itemId === "string" ? (item as Record<string, unknown>) : undefined;
}

/** `JSON.stringify(text)` without its quotes. */
function escaped(text: string): string {
  const json = JSON.stringify(text);
  return json.slice(1, json.length - 1);
}

/**
 * `text`, flattened in place. A string built by `+` is a rope, and the escaped text of an item grows
 * by one chunk an update: left as ropes they would nest as deep as the item has chunks, and every
 * write would walk them. Reading a character flattens a rope once (V8), so the next update appends
 * to one flat string.
 */
function flat(text: string): string {
  text.charCodeAt(0);
  return text;
}

/**
 * Whether escaping `a` and `b` apart and joining the results gives the escape of `a + b`. It does
 * unless a surrogate pair is split between them: `JSON.stringify` keeps a pair as it is but
 * escapes a lone surrogate.
 */
function joinable(a: string, b: string): boolean {
  const last = a.charCodeAt(a.length - 1);
  const first = b.charCodeAt(0);
  return !(last >= 0xd800 && last <= 0xdbff && first >= 0xdc00 && first <= 0xdfff);
}

/** Whether `value`'s own enumerable keys are exactly `keys`, in that order. */
function hasKeys(value: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in value) if (key !== keys[i++] || !Object.hasOwn(value, key)) return false;
  return i === keys.length;
}

const RECORD_KEYS = ["type", "at", "n", "method", "params"] as const;
/** A record with its place in the host order. */
const RECORD_KEYS_ORDERED = ["type", "at", "n", "h", "method", "params"] as const;
/** The params of every item notification a session agent emits, in its order. */
const ITEM_PARAMS_KEYS = ["sessionId", "viewCursor", "emittedAtMs", "item"] as const;

/** `JSON.stringify(value)` of a number, for one that is finite (the only numbers written as themselves). */
function isJsonNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/**
 * What an open item's last encoding left to reuse: its growing field's value (the base of the next
 * delta) and that value's JSON escape, and the JSON of each of its other properties (`"key":value`,
 * or `""` for one `JSON.stringify` leaves out), by position, with the primitive value it was made
 * from.
 */
interface ItemState {
  value: string;
  escaped: string;
  keys: string[];
  values: unknown[];
  parts: string[];
}

/** The JSON of the keys (and methods) seen so far: a few dozen names, serialized once each. */
const namesJson = new Map<string, string>();

/** `JSON.stringify(name)` for a property key or a method name, remembered (bounded: past 256 names, not remembered). */
function keyJson(name: string): string {
  let json = namesJson.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    if (namesJson.size < 256) namesJson.set(name, json);
  }
  return json;
}

/**
 * `"key":value` as `JSON.stringify` writes the property inside an object, `""` when it leaves the
 * property out, or `undefined` when only `JSON.stringify` of the whole can say (a `toJSON` method,
 * which is passed the key; a bigint, which throws).
 */
function propertyJson(key: string, value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return `${keyJson(key)}:${JSON.stringify(value)}`;
    case "number":
      return `${keyJson(key)}:${Number.isFinite(value) ? String(value) : "null"}`;
    case "boolean":
      return `${keyJson(key)}:${String(value)}`;
    case "undefined":
    case "function":
    case "symbol":
      return "";
    case "object":
      if (value === null) return `${keyJson(key)}:null`;
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
      return `${keyJson(key)}:${JSON.stringify(value)}`;
    default:
      return undefined;
  }
}

/** Whether a property's JSON may be reused while its value is the same: primitives only (an object may have changed inside). */
function reusable(value: unknown): boolean {
  return value === null || (typeof value !== "object" && typeof value !== "function");
}

/**
 * Encodes the notifications of one session log, in the order they are written: it keeps, per open
 * item, the item's last logged value of its growing field (the base of the next delta) and that
 * value's JSON escape. The common case (the params of a session agent's item notification:
 * `sessionId`, `viewCursor`, `emittedAtMs`, `item`) is assembled from one `JSON.stringify` of the
 * item without its growing text; every other shape is serialized whole, to the same texts.
 */
export class NotificationEncoder {
  readonly #items = new Map<string, ItemState>();
  #sessionId = "";
  #sessionIdJson = '""';
  /** The session's cursors without their number, `v:<sessionId>:`, and that text's JSON without its closing quote. */
  #cursorPrefix = "";
  #cursorPrefixJson = "";

  /** Forgets every open item (the log was closed). */
  clear(): void {
    this.#items.clear();
  }

  /** Encodes `record` (see the class) and notes its item's new logged value. */
  encode(record: NotificationRecord): EncodedNotification {
    const params = record.params;
    const item = itemOf(params);
    if (item === undefined) return { line: JSON.stringify(record), wire: JSON.stringify(notificationMessage(record.method, params)) };
    const itemId = item["itemId"] as string;
    const field = growingField(item);
    const value = item[field];
    if (typeof value !== "string") {
      if (record.method === "item/completed") this.#items.delete(itemId);
      return { line: JSON.stringify(record), wire: JSON.stringify(notificationMessage(record.method, params)) };
    }
    // Does the value extend the item's last logged one? `value` is usually a rope (the previous
    // text plus a chunk): slicing flattens it once and compares flat strings, where startsWith
    // would walk it character by character.
    const base = this.#items.get(itemId);
    const extended = base !== undefined && value.length >= base.value.length && value.slice(0, base.value.length) === base.value;
    let whole: string; // the escape of `value`
    let logged: string; // the escape of what the line carries: `value`, or the suffix of a delta
    let from = -1; // a delta's base length, or -1
    let suffix = value;
    if (extended) {
      suffix = value.slice(base.value.length);
      const suffixEscaped = escaped(suffix);
      whole = joinable(base.value, suffix) ? flat(base.escaped + suffixEscaped) : escaped(value);
      if (record.method === "item/updated") {
        from = base.value.length;
        logged = suffixEscaped;
      } else {
        logged = whole;
      }
    } else {
      whole = escaped(value);
      logged = whole;
    }
    const state: ItemState = { value, escaped: whole, keys: [], values: [], parts: [] };
    if (record.method === "item/completed") this.#items.delete(itemId);
    else this.#items.set(itemId, state);
    const fast = this.#assemble(record, item, field, logged, whole, from, base, state);
    if (fast !== undefined) return fast;
    const line =
      from >= 0 ? JSON.stringify({ ...record, params: { ...params, item: { ...item, [field]: suffix } }, delta: { field, from } }) : JSON.stringify(record);
    return { line, wire: JSON.stringify(notificationMessage(record.method, params)) };
  }

  /**
   * Both texts, put together from the JSON of the item's other properties (reused from `previous`
   * where unchanged, and kept in `state` for the next encoding) and the escaped values (`logText`
   * for the line, `wireText` for the wire; `from` ≥ 0 makes the line a delta), or `undefined` when
   * the record or its params are not of the common shape.
   */
  #assemble(
    record: NotificationRecord,
    item: Record<string, unknown>,
    field: string,
    logText: string,
    wireText: string,
    from: number,
    previous: ItemState | undefined,
    state: ItemState,
  ): EncodedNotification | undefined {
    const params = record.params;
    const sessionId = params["sessionId"];
    const viewCursor = params["viewCursor"];
    const emittedAtMs = params["emittedAtMs"];
    if (typeof sessionId !== "string" || typeof viewCursor !== "string" || !isJsonNumber(emittedAtMs) || !isJsonNumber(record.at) || !isJsonNumber(record.n))
      return undefined;
    const ordered = record.h !== undefined;
    if (ordered && !isJsonNumber(record.h)) return undefined;
    if (!hasKeys(record, ordered ? RECORD_KEYS_ORDERED : RECORD_KEYS) || !hasKeys(params, ITEM_PARAMS_KEYS)) return undefined;
    // The item's JSON around its growing field's value: `head` ends with its opening quote, `tail`
    // starts with its closing one.
    let head = "{";
    let tail = "";
    let inTail = false;
    let i = 0;
    for (const key in item) {
      if (!Object.hasOwn(item, key)) return undefined; // an inherited key: JSON.stringify would skip it
      const value = item[key];
      if (key === field) {
        head += `${head.length > 1 ? "," : ""}${keyJson(key)}:"`;
        tail = '"';
        inTail = true;
        continue;
      }
      let part: string | undefined;
      if (previous !== undefined && previous.keys[i] === key && previous.values[i] === value && reusable(value)) part = previous.parts[i];
      else part = propertyJson(key, value);
      if (part === undefined) return undefined;
      state.keys[i] = key;
      state.values[i] = value;
      state.parts[i] = part;
      i++;
      if (part === "") continue;
      if (inTail) tail += `,${part}`;
      else head += head.length > 1 ? `,${part}` : part;
    }
    tail += "}";
    if (sessionId !== this.#sessionId) {
      this.#sessionId = sessionId;
      this.#sessionIdJson = JSON.stringify(sessionId);
      this.#cursorPrefix = `v:${sessionId}:`;
      const json = JSON.stringify(this.#cursorPrefix);
      this.#cursorPrefixJson = json.slice(0, json.length - 1);
    }
    const method = keyJson(record.method);
    // The usual cursor, `v:<sessionId>:<n>`: its JSON is the prefix's and the digits of n.
    const digits = String(record.n);
    const usual = viewCursor.length === this.#cursorPrefix.length + digits.length && viewCursor.startsWith(this.#cursorPrefix) && viewCursor.endsWith(digits);
    const cursorJson = usual ? `${this.#cursorPrefixJson}${digits}"` : JSON.stringify(viewCursor);
    const ids = `{"sessionId":${this.#sessionIdJson},"viewCursor":${cursorJson}`;
    const deltaJson = from >= 0 ? `,"delta":{"field":"${field}","from":${from}}` : "";
    // Flat, not ropes of a few dozen pieces each: the wire text waits for its sync (a streaming
    // session has hundreds waiting), and every piece of a rope would be one more object for each
    // young-generation GC to copy.
    return {
      line: flat(
        `{"type":"notification","at":${record.at},"n":${record.n},${ordered ? `"h":${record.h},` : ""}"method":${method},"params":${ids},"emittedAtMs":${emittedAtMs},"item":${head}${logText}${tail}}${deltaJson}}`,
      ),
      wire: flat(`{"jsonrpc":"2.0","method":${method},"params":${ids},"item":${head}${wireText}${tail}},"emittedAtMs":${emittedAtMs}}`),
    };
  }
}
