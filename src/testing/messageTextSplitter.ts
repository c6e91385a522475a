/**
 * messageTextSplitter: the framing's own readers, made to hand over each message's exact text
 * instead of parsing it. A recording splits the wire with them, so it cuts messages where the
 * client's reader does: NDJSON by the protocol's LineSplitter, Content-Length by the framing's
 * header rules and bounds. Internal to ./testing.
 */
import type { ByteChannel } from "../framing/byteChannel.js";
import { ContentLengthMessageReader } from "../framing/contentLength.js";
import { assertFraming, type Framing } from "../framing/createFraming.js";
import type { FramingProblem } from "../framing/limits.js";
import { NdjsonMessageReader } from "../framing/ndjson.js";

/** Bytes in, message texts out, for one direction of one wire. */
export interface MessageTextSplitter {
  /** Feed one chunk; `onText` is called for every message it completes. */
  push(chunk: Uint8Array): void;
}

/** Options of {@link messageTextSplitter}. */
export interface MessageTextSplitterOptions {
  /** Longest message text accepted, as the framing's reader counts it. `Infinity` for no bound. @unit bytes */
  maxMessageBytes: number;
  /**
   * Called once when the framing's reader stops for good (a message over `maxMessageBytes`, a
   * Content-Length header it cannot read): the reason, in the reader's words. Nothing more is split.
   */
  onStop: (reason: string) => void;
}

const READERS: Record<Framing, typeof NdjsonMessageReader | typeof ContentLengthMessageReader> = {
  ndjson: NdjsonMessageReader,
  "content-length": ContentLengthMessageReader,
};

const nothing = () => {};
/** The reader is fed by hand (`push`): it never subscribes to a channel. */
const UNUSED_CHANNEL: ByteChannel = { onData: () => nothing, onEnd: () => nothing, onError: () => nothing, write: nothing, end: nothing };

/**
 * A splitter for `framing` that calls `onText` with each message's text, exactly as it crossed
 * (without its framing), whether or not it is JSON. Throws a `TypeError` on an unknown framing.
 */
export function messageTextSplitter(framing: Framing, onText: (text: string) => void, options: MessageTextSplitterOptions): MessageTextSplitter {
  assertFraming(framing);
  // Typed as one of the two for the compiler (a union is not a base class); both are concrete
  // FramedMessageReaders with the same constructor, and only FramedMessageReader's members are used.
  const Reader = READERS[framing] as typeof NdjsonMessageReader;
  class TextSplitter extends Reader {
    #stopped = false;

    push(chunk: Uint8Array): void {
      if (!this.#stopped) this.consume(chunk);
    }

    protected override deliverText(text: string): void {
      if (!this.#stopped) onText(text);
    }

    // The reader's only problems here are fatal ones (bad header, over-long message): with
    // deliverText above, a body is never parsed, so never reported as malformed.
    protected override problem(problem: FramingProblem): void {
      if (!problem.fatal || this.#stopped) return;
      this.#stopped = true;
      options.onStop(problem.problem);
    }
  }
  return new TextSplitter(UNUSED_CHANNEL, { maxMessageBytes: options.maxMessageBytes });
}
