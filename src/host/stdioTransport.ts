/** The stdio transport: NDJSON over a readable and a writable stream (stdin/stdout for `serve --stdio`). */
import type { Readable, Writable } from "node:stream";
import { LineSplitter } from "../protocol/lineSplitter.js";
import { messageJson } from "./jsonRpc.js";
import type { MessageTransport } from "./messageTransport.js";
import { traceMark, tracing } from "./traceMarks.js";

/**
 * Wraps a byte input and output as a {@link MessageTransport}: one JSON-RPC message per
 * `\n`-terminated UTF-8 line each way. A line over the size limit is delivered as text that is not
 * JSON, so the core answers it with -32700 and keeps serving. The messages sent before the
 * microtask queue drains go out in one write, in order (a batch of notifications costs one write,
 * an answer waits for no timer).
 *
 * @example
 * ```ts
 * const host = createHost({ models: new Map([["default", loadScriptedModel("models/hello.json", "default")]]), defaultModel: "default" });
 * const transport = createStdioTransport(process.stdin, process.stdout);
 * host.connect(transport);
 * ```
 *
 * @param options - `maxLineBytes`: the longest line accepted, in bytes (default 16 MiB,
 *   `DEFAULT_MAX_LINE_BYTES`).
 */
export function createStdioTransport(input: Readable, output: Writable, options: { maxLineBytes?: number } = {}): MessageTransport {
  let onMessage: (text: string) => void = () => {};
  const closeHandlers: Array<() => void> = [];
  let closed = false;
  let ended = false;
  /** Lines sent in this run of the event loop, not yet written: they go out in one write, in order. */
  let pending: string | undefined;
  const flush = () => {
    const text = pending;
    pending = undefined;
    if (text !== undefined && !closed && !output.destroyed) output.write(text);
  };
  const splitter = new LineSplitter((line) => onMessage(line), {
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    onOverflow: () => onMessage("\u0000line too long"),
  });
  const onData = (chunk: Buffer | string) => {
    if (tracing) traceMark("stdio.read");
    splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  };
  const onEnd = () => {
    if (ended) return;
    ended = true;
    splitter.end();
    for (const h of closeHandlers) h();
  };
  // A write error (EPIPE: the client stopped reading) means the client is gone: stop writing and
  // treat it as the end of input, which runs the normal shutdown.
  output.on("error", () => {
    closed = true;
    onEnd();
  });
  input.on("data", onData);
  input.on("end", onEnd);
  input.on("close", onEnd);
  return {
    onMessage(callback) {
      onMessage = callback;
    },
    onClose(callback) {
      closeHandlers.push(callback);
    },
    send(message) {
      if (closed || output.destroyed) return;
      // Everything sent before the microtask queue drains shares one write (a group commit's
      // notifications go out together), in call order; nothing else writes to `output`.
      const line = `${messageJson(message)}\n`;
      if (pending === undefined) {
        pending = line;
        queueMicrotask(flush);
      } else {
        pending += line;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      input.off("data", onData);
      input.pause();
    },
  };
}
