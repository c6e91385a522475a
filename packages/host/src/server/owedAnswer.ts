/** Owed answers: a command answered only after its log sync counts toward its connection's send bound while it waits. */
import { messageJson, type JsonRpcId } from "./jsonRpc.js";
import type { MessageTransport } from "../transport/messageTransport.js";

/** @unit bytes counted beyond an owed answer's JSON: its framing (a WebSocket frame header, a newline) and some slack */
const FRAMING_BYTES = 16;

/**
 * Reserves room for the answer the host owes to command `id` (accepted with `result`, answered once
 * its records are durable) on `transport`, if it has flow control: until the returned function is
 * called, right before the answer is sent, the transport counts the answer's size as held, so a
 * peer that floods such commands and reads nothing makes the host stop reading it as if the
 * answers were already queued. The estimate is the accepted answer's UTF-8 size plus its framing;
 * an error answer instead (the log failed) is about as short, and the host shuts down then.
 */
export function reserveAnswer(transport: MessageTransport | undefined, id: JsonRpcId, result: unknown): () => void {
  if (transport?.reserve === undefined) return () => {};
  return transport.reserve(Buffer.byteLength(messageJson({ jsonrpc: "2.0", id, result }), "utf8") + FRAMING_BYTES);
}
