/** Model streaming: one scripted step streamed into message and reasoning items, its prefix salvaged when interrupted. */
import { setImmediate as nextTick } from "node:timers/promises";
import type { MessageItem, NotificationMethod, ReasoningItem } from "@muse-code/protocol";
import { uuidv7 } from "@muse-code/protocol/uuidv7.js";
import { itemDelta } from "./itemChanges.js";
import { isoNow } from "./recordedAt.js";
import { stepChunks, streamStep, type ModelChunk, type ScriptedStep, type ScriptedToolCall } from "../model/scriptedModel.js";
import type { SessionLog } from "../log/sessionLog.js";

/**
 * A step that streams without pausing yields to the event loop after this many chunks, so its
 * batch's sync starts (and commands, e.g. a `turn/cancel`, are read) while it streams on.
 */
const STREAM_YIELD_EVERY = 64;

/**
 * How many of a session's records may be written and not yet durable before a streaming step
 * waits for them (group-commit backpressure: memory held for unsent notifications stays bounded).
 */
const STREAM_UNSYNCED_MAX = 1024;

type TextItem = MessageItem | ReasoningItem;

function newTextItem(kind: "message" | "reasoning", turnId: string): TextItem {
  const base = { itemId: uuidv7(), turnId, revision: 1, status: "inProgress" as const, recordedAt: isoNow(), text: "" };
  return kind === "message" ? { ...base, kind } : { ...base, kind };
}

/** What streaming a step needs of its session agent. */
export interface StepOutput {
  /** Logs one notification and publishes it once its record is durable. */
  emit(method: NotificationMethod, body: Record<string, unknown>): unknown;
  /** The session's log, for backpressure: a step waits when too many records are not durable yet. */
  readonly log: Pick<SessionLog, "unsynced" | "durable">;
}

/**
 * Streams one step's text items; returns its tool calls (dropped if the stream is interrupted).
 * Checks `signal` before the stream and on every chunk; an interrupted item is salvaged with
 * `interrupted: true`.
 */
export async function streamModelStep(turnId: string, step: ScriptedStep, signal: AbortSignal, out: StepOutput): Promise<ScriptedToolCall[]> {
  const calls: ScriptedToolCall[] = [];
  const emitItem = (method: "item/started" | "item/completed", item: TextItem) => out.emit(method, { item: { ...item } });
  // The open item. It is announced (item/started) only once its text has non-whitespace
  // content, so an interrupted stream never salvages a whitespace-only item.
  let open: TextItem | undefined;
  let announced = false;
  let chunks = 0;
  const announce = (item: TextItem) => {
    emitItem("item/started", { ...item, text: "", revision: 1 });
    announced = true;
  };
  const close = (status: "completed" | "cancelled" | "failed") => {
    if (open === undefined) return;
    const item = open;
    open = undefined;
    if (!announced) {
      if (status !== "completed" || item.text === "") return; // nothing worth salvaging
      announce(item);
      item.revision = 1;
    }
    const done: TextItem = { ...item, revision: item.revision + 1, status, recordedAt: isoNow() };
    if (status !== "completed") done.interrupted = true;
    emitItem("item/completed", done);
  };
  /** Takes one chunk; returns what to wait for before the next one, if anything. */
  const take = (chunk: ModelChunk): Promise<unknown> | undefined => {
    signal.throwIfAborted(); // on every chunk
    if (chunk.kind === "toolCall") {
      close("completed");
      calls.push(chunk.call);
      return undefined;
    }
    const kind = chunk.kind === "text" ? "message" : "reasoning";
    if (open !== undefined && open.kind !== kind) close("completed");
    let current: TextItem;
    if (open === undefined) {
      current = newTextItem(kind, turnId);
      announced = false;
    } else {
      current = open;
    }
    const text = current.text + chunk.delta;
    // What goes on the wire: the chunk, or (when the item is announced now) everything held back
    // so far. Never a slice of `text`: that would copy the whole text so far on every chunk.
    let append = chunk.delta;
    if (!announced) {
      open = { ...current, text };
      if (text.trim() === "") return undefined;
      announce(current);
      current = { ...current, text: "", revision: 1 }; // announced empty: the text so far is the first append
      append = text;
    }
    if (append === "") return undefined; // an empty chunk changes nothing
    current = { ...current, text, revision: current.revision + 1, recordedAt: isoNow() };
    open = current;
    const delta = itemDelta(current, append); // only the appended text goes on the wire and in the log
    out.emit(delta.method, delta.body);
    // A step that streams without pausing: yield now and then, and wait when too much is unsent.
    if (out.log.unsynced >= STREAM_UNSYNCED_MAX) return out.log.durable();
    if (++chunks % STREAM_YIELD_EVERY === 0) return nextTick();
    return undefined;
  };
  signal.throwIfAborted(); // before iterating the stream
  try {
    if (step.chunkDelayMs > 0) {
      for await (const chunk of streamStep(step, signal)) await take(chunk);
    } else {
      // No pauses: the chunks are taken in a plain loop, with no promise a chunk; the event loop
      // still gets its turn every STREAM_YIELD_EVERY chunks (a turn/cancel is read there).
      for (const chunk of stepChunks(step)) {
        const wait = take(chunk);
        if (wait !== undefined) await wait;
      }
    }
    close("completed");
    return calls;
  } catch (error) {
    // Salvage the prefix: the open item keeps its text, marked interrupted. Tool calls are dropped.
    close(signal.aborted ? "cancelled" : "failed");
    throw error;
  }
}
