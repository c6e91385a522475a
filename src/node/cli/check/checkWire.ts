/**
 * CheckWire: what `muse check` hands to each `open()`: the hooks that record one connection's
 * wire, both directions in order, and let the check send raw text the SDK never would
 * (malformed JSON-RPC). WireTap is the check's side of it: the recorded lines and bounded waits on them.
 */
import type { ByteChannel, Framing } from "@muse-code/sdk";
import { recordingChannel, type TranscriptLine } from "@muse-code/sdk/testing";
import type { WebSocketConstructor, WebSocketLike, WebSocketMessageEventLike } from "@muse-code/sdk/websocket";

/**
 * The hooks `runCheck` passes to `open()`, one set per scenario. An opener uses exactly one:
 * `wrapChannel` around a byte channel (give it to `spawnHost`'s `wrapChannel`), or `webSocket`
 * around a WebSocket class (give the result to `connectWebSocket`'s `WebSocket`). Without either,
 * the check cannot see the wire and every scenario fails saying so.
 *
 * @example
 * ```ts
 * import { spawnHost } from "@muse-code/sdk/node";
 *
 * const open = async (wire: CheckWire) => {
 *   const host = spawnHost({ command: "muse-host", args: ["serve", "--stdio"], wrapChannel: (c) => wire.wrapChannel(c, "ndjson") });
 *   return { client: host, close: async () => void (await host.close()) };
 * };
 * ```
 */
export interface CheckWire {
  /**
   * Wrap a byte channel so every message crossing it is recorded.
   * @param framing - how the channel frames messages (default `"ndjson"`).
   */
  wrapChannel(channel: ByteChannel, framing?: Framing): ByteChannel;
  /** A subclass of `base` whose sockets record every text frame they send and receive. */
  webSocket(base: WebSocketConstructor): WebSocketConstructor;
}

/**
 * One recorded message: its 1-based line, who sent it, its text, and its JSON value when it parses as an object.
 *
 * @example
 * ```ts
 * const line: WireLine = { line: 1, dir: "client", raw: "[]", message: undefined };
 * ```
 */
export interface WireLine {
  line: number;
  dir: "client" | "server";
  raw: string;
  message: Record<string, unknown> | undefined;
}

interface Waiter {
  from: number;
  test: (line: WireLine) => boolean;
  resolve: (line: WireLine) => void;
  reject: (error: Error) => void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function parseObject(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a Content-Length framed byte stream into message texts (the check's own reader, for the recording only). */
class ContentLengthSplitter {
  #buffer = new Uint8Array(0);
  readonly #onMessage: (text: string) => void;

  constructor(onMessage: (text: string) => void) {
    this.#onMessage = onMessage;
  }

  /** Bytes held for a message not yet complete. */
  get buffered(): number {
    return this.#buffer.length;
  }

  push(chunk: Uint8Array): void {
    const joined = new Uint8Array(this.#buffer.length + chunk.length);
    joined.set(this.#buffer);
    joined.set(chunk, this.#buffer.length);
    this.#buffer = joined;
    for (;;) {
      const headerEnd = indexOfBlankLine(this.#buffer);
      if (headerEnd < 0) return;
      const header = decoder.decode(this.#buffer.subarray(0, headerEnd));
      const length = Number(/content-length:\s*(\d+)/i.exec(header)?.[1] ?? Number.NaN);
      if (!Number.isSafeInteger(length)) {
        // Not a frame the check can follow: record the header as it is and resynchronise after it.
        this.#onMessage(header);
        this.#buffer = this.#buffer.subarray(headerEnd + 4);
        continue;
      }
      if (this.#buffer.length < headerEnd + 4 + length) return;
      this.#onMessage(decoder.decode(this.#buffer.subarray(headerEnd + 4, headerEnd + 4 + length)));
      this.#buffer = this.#buffer.subarray(headerEnd + 4 + length);
    }
  }
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/**
 * How much one scenario's wire may hold: past either bound the tap stops recording, and every
 * wait fails. A function of these limits, never of what a host sends.
 *
 * @example
 * ```ts
 * const tap = new WireTap({ maxLines: 1_000, maxChars: 1_000_000 });
 * ```
 */
export interface WireLimits {
  /** @unit messages @defaultValue 100 000 */
  maxLines: number;
  /** @unit UTF-16 code units of message text @defaultValue 64 Mi */
  maxChars: number;
}

const DEFAULT_WIRE_LIMITS: WireLimits = { maxLines: 100_000, maxChars: 64 * 1024 * 1024 };

/**
 * The check's side of a {@link CheckWire}: every recorded line, waits on the host's messages,
 * and raw sends. `close(error)` rejects every wait still pending, which bounds them all.
 *
 * @example
 * ```ts
 * const tap = new WireTap();
 * const host = spawnHost({ command: "muse-host", args: ["serve", "--stdio"], wrapChannel: (c) => tap.wrapChannel(c) });
 * const at = tap.sendRaw("this is not JSON");
 * const answer = await tap.waitFor((m) => m["id"] === null, at);
 * ```
 */
export class WireTap implements CheckWire {
  readonly lines: WireLine[] = [];
  /** Set once the wire passed the tap's bounds: what was recorded stops there. */
  overflow: string | undefined;
  readonly #limits: WireLimits;
  #chars = 0;
  #waiters: Waiter[] = [];
  #closed: Error | undefined;
  #sendRaw: ((text: string) => void) | undefined;

  constructor(limits: Partial<WireLimits> = {}) {
    this.#limits = { ...DEFAULT_WIRE_LIMITS, ...limits };
  }

  /** True once an opener used one of the hooks. */
  get attached(): boolean {
    return this.#sendRaw !== undefined;
  }

  wrapChannel(channel: ByteChannel, framing: Framing = "ndjson"): ByteChannel {
    if (framing === "content-length") {
      const fromHost = new ContentLengthSplitter((text) => this.record("server", text));
      this.#sendRaw = (text) => {
        const body = encoder.encode(text);
        void channel.write(encoder.encode(`Content-Length: ${body.length}\r\n\r\n${text}`));
        this.record("client", text);
      };
      return {
        onData: (listener) =>
          channel.onData((chunk) => {
            if (this.overflow === undefined) fromHost.push(chunk);
            if (fromHost.buffered > this.#limits.maxChars) this.#overflow();
            listener(chunk);
          }),
        onEnd: (listener) => channel.onEnd(listener),
        onError: (listener) => channel.onError(listener),
        write: (bytes) => {
          const written = channel.write(bytes);
          const text = decoder.decode(bytes);
          const at = text.indexOf("\r\n\r\n");
          this.record("client", at < 0 ? text : text.slice(at + 4));
          return written;
        },
        end: () => channel.end(),
      };
    }
    const recorded = recordingChannel(channel, (entry) => this.record(entry.dir, entry.raw));
    // Through the recording channel, so a raw line is recorded like any other.
    this.#sendRaw = (text) => void recorded.write(encoder.encode(`${text}\n`));
    return recorded;
  }

  webSocket(base: WebSocketConstructor): WebSocketConstructor {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the subclass's constructor records into this tap
    const tap = this;
    const Base = base as unknown as new (url: string, protocols?: string | string[]) => WebSocketLike;
    class RecordingWebSocket extends Base {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        // Registered before the client's reader: each frame is recorded before the client acts on it.
        this.addEventListener("message", (event: WebSocketMessageEventLike) => {
          if (typeof event.data === "string") tap.record("server", event.data);
        });
        // Through send() below, so a raw frame is recorded like any other.
        tap.#sendRaw = (text) => this.send(text);
      }
      override send(data: string): void {
        super.send(data);
        tap.record("client", data);
      }
    }
    return RecordingWebSocket as unknown as WebSocketConstructor;
  }

  /** Send `text` as one message, unchecked: the malformed-input scenario's way past the SDK. */
  sendRaw(text: string): number {
    if (this.#sendRaw === undefined) throw new Error("open() did not attach the check's wire hooks (wire.wrapChannel or wire.webSocket)");
    const before = this.lines.length;
    this.#sendRaw(text);
    return before;
  }

  /** Record one message and wake the waits it satisfies. */
  record(dir: "client" | "server", raw: string): void {
    if (this.overflow !== undefined) return;
    this.#chars += raw.length;
    if (this.lines.length >= this.#limits.maxLines || this.#chars > this.#limits.maxChars) return this.#overflow();
    const line: WireLine = { line: this.lines.length + 1, dir, raw, message: parseObject(raw) };
    this.lines.push(line);
    if (dir !== "server") return;
    this.#waiters = this.#waiters.filter((waiter) => {
      if (line.line <= waiter.from || !waiter.test(line)) return true;
      waiter.resolve(line);
      return false;
    });
  }

  /** Stop recording: the wire passed a bound. */
  #overflow(): void {
    this.overflow ??= `the wire passed the check's bound of ${this.#limits.maxLines} messages or ${this.#limits.maxChars} characters in one scenario; the rest was not recorded`;
    this.close(new Error(this.overflow));
  }

  /**
   * The first host message after line `from` (0: any) that passes `test`, at once if already
   * recorded, else when it arrives. Rejects when the tap closes first (the scenario's bound).
   */
  waitFor(test: (message: Record<string, unknown>) => boolean, from = 0): Promise<WireLine> {
    const check = (line: WireLine) => line.dir === "server" && line.message !== undefined && test(line.message);
    const seen = this.lines.find((line) => line.line > from && check(line));
    if (seen !== undefined) return Promise.resolve(seen);
    if (this.#closed !== undefined) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => this.#waiters.push({ from, test: check, resolve, reject }));
  }

  /** The recorded lines that parse, as `checkTranscript` takes them (line numbers kept). */
  transcript(filter: (line: WireLine) => boolean = () => true): TranscriptLine[] {
    return this.lines
      .filter((l) => l.message !== undefined && filter(l))
      .map((l) => ({ line: l.line, dir: l.dir, raw: l.raw, message: l.message as Record<string, unknown> }));
  }

  /** Reject every pending wait with `error`; later waits for what never came reject at once. */
  close(error: Error): void {
    this.#closed ??= error;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }
}
