/** The stdio transport: NDJSON over a readable and a writable stream (stdin/stdout for `serve --stdio`), with backpressure. */
import type { Readable, Writable } from "node:stream";
import { LineSplitter } from "@muse-code/protocol/lineSplitter.js";
import { messageJson } from "../server/jsonRpc.js";
import { InputGate, type MessageTransport } from "./messageTransport.js";
import { traceMark, tracing } from "../server/traceMarks.js";

/**
 * Default bound on what the stdio transport holds unwritten before live notifications wait in the
 * session log (the same as a WebSocket connection's `--max-send-queue-bytes` default).
 * @unit bytes
 */
export const DEFAULT_STDIO_MAX_HELD_BYTES = 4 * 1024 * 1024;

/**
 * Wraps a byte input and output as a {@link MessageTransport}: one JSON-RPC message per
 * `\n`-terminated UTF-8 line each way. A line over the size limit is delivered as text that is not
 * JSON, so the core answers it with -32700 and keeps serving. The messages sent before the
 * microtask queue drains go out in one write, in order (a batch of notifications costs one write,
 * an answer waits for no timer). It honours the output's backpressure: once a write returns false,
 * nothing more is written until `'drain'`; lines sent meanwhile wait (they are `heldBytes`, with the
 * output's `writableLength`), and host delivery keeps that bounded by feeding live notifications
 * from the session log. Replies are bounded too: once it holds more than `maxHeldBytes`, the input
 * is paused (`InputGate`) until the output drains to half of it; lines already read wait and
 * are answered in order, and the end of input is told after them. Answers owed (commands waiting
 * on their log sync, `reserve`) count toward the bound from when they are read. So a client that writes requests
 * and never reads stdout makes the host hold at most the bound plus one line. A failed output
 * (EPIPE, ENOBUFS) closes the transport and tells the `onClose` handlers why
 * (`"stdout failed: EPIPE: …"`).
 *
 * @example
 * ```ts
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * const transport = createStdioTransport(process.stdin, process.stdout);
 * host.connect(transport);
 * ```
 *
 * @param options - `maxLineBytes`: the longest line accepted, in bytes (default 16 MiB,
 *   `DEFAULT_MAX_LINE_BYTES`); `maxHeldBytes`: the transport's `maxHeldBytes`, in bytes (default
 *   4 MiB, `DEFAULT_STDIO_MAX_HELD_BYTES`).
 */
export function createStdioTransport(input: Readable, output: Writable, options: { maxLineBytes?: number; maxHeldBytes?: number } = {}): MessageTransport {
  let onMessage: (text: string) => void = () => {};
  let onDrain: () => void = () => {};
  const closeHandlers: Array<(why?: string) => void> = [];
  let closed = false;
  let failed = false;
  let ended = false;
  /** A write returned false: nothing more is written until the output's 'drain'. */
  let blocked = false;
  /** Lines sent and not written yet (this run of the event loop's, or all since the output blocked), in order. */
  let pending = "";
  /** @unit bytes of `pending` in UTF-8 */
  let pendingBytes = 0;
  let flushQueued = false;
  let highWater = 0;
  /** A progress notice is scheduled for the next turn of the event loop. */
  let noticeQueued = false;
  const notice = () => {
    noticeQueued = false;
    if (failed) return;
    gate.drained(); // the lines read while it was over the bound first, then delivery
    onDrain();
  };
  /**
   * A write completed: progress (a small bound may wait on it rather than on 'drain'). Told on the
   * next turn of the event loop, so a fast output (a file) never keeps the loop in one chain of
   * writes and the batches they free.
   */
  const written = (error?: Error | null) => {
    if ((error !== undefined && error !== null) || noticeQueued) return;
    noticeQueued = true;
    setImmediate(notice);
  };
  const writeOut = () => {
    if (pending === "" || failed || output.destroyed) return;
    const text = pending;
    pending = "";
    pendingBytes = 0;
    blocked = !output.write(text, written);
  };
  const flush = () => {
    flushQueued = false;
    if (blocked) return; // 'drain' writes it
    writeOut();
  };
  output.on("drain", () => {
    blocked = false;
    writeOut();
    gate.drained();
    onDrain();
  });
  const maxHeldBytes = options.maxHeldBytes ?? DEFAULT_STDIO_MAX_HELD_BYTES;
  /** The input ended while lines read before its end waited for the output to drain: told after them. */
  let endWaits = false;
  const gate = new InputGate<string>({
    heldBytes: () => unwritten(),
    maxHeldBytes,
    pause: () => input.pause(),
    resume: () => {
      if (endWaits) return onEnd();
      if (!closed) input.resume();
    },
    handle: (line) => onMessage(line),
  });
  const splitter = new LineSplitter((line) => gate.take(line), {
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    onOverflow: () => gate.take("\u0000line too long"),
  });
  const onData = (chunk: Buffer | string) => {
    if (tracing) traceMark("stdio.read");
    splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  };
  const onEnd = (why?: string) => {
    if (ended) return;
    endWaits = why === undefined && gate.waiting > 0;
    if (endWaits) return;
    ended = true;
    splitter.end();
    for (const h of closeHandlers) h(why);
  };
  // A write error (EPIPE: the client stopped reading; ENOBUFS) means nothing more reaches the
  // client: stop writing, and end as if the input had ended, saying why.
  output.on("error", (error: NodeJS.ErrnoException) => {
    failed = true;
    pending = "";
    pendingBytes = 0;
    gate.close();
    onDrain();
    onEnd(`stdout failed: ${error.code === undefined ? error.message : `${error.code}: ${error.message}`}`);
  });
  input.on("data", onData);
  input.on("end", () => onEnd());
  input.on("close", () => onEnd());
  /** What it holds unwritten (the gate adds the answers owed to it). */
  const unwritten = () => (failed || output.destroyed ? 0 : pendingBytes + output.writableLength);
  const heldBytes = () => unwritten() + gate.owedBytes;
  return {
    onMessage(callback) {
      onMessage = callback;
    },
    onClose(callback) {
      closeHandlers.push(callback);
    },
    send(message) {
      if (closed || failed || output.destroyed) return;
      // Everything sent before the microtask queue drains shares one write (a group commit's
      // notifications go out together), in call order; nothing else writes to `output`.
      const line = `${messageJson(message)}\n`;
      pending += line;
      pendingBytes += Buffer.byteLength(line, "utf8");
      if (!flushQueued && !blocked) {
        flushQueued = true;
        queueMicrotask(flush);
      }
      const held = unwritten();
      if (held > highWater) highWater = held;
      gate.sent();
    },
    close() {
      if (closed) return;
      closed = true;
      gate.close();
      input.off("data", onData);
      input.pause();
      // What was sent still goes out, after what the output holds (a caller waits on the output).
      writeOut();
    },
    heldBytes,
    maxHeldBytes,
    reserve: (bytes) => gate.reserve(bytes),
    get heldBytesHighWater() {
      return highWater;
    },
    get writable() {
      return !closed && !failed && !output.destroyed;
    },
    onDrain(listener) {
      onDrain = listener;
    },
  };
}
