/**
 * CheckWire: what `muse check` hands to each `open()`: the hooks that record one connection's
 * wire, both directions in order, and let the check send raw text the SDK never would
 * (malformed JSON-RPC). WireTap is the check's side of it: the recorded lines and bounded waits on them.
 * The recording itself is ./testing's (recordingChannel, recordingWebSocket), as for `muse --record`.
 */
import type { ByteChannel, Framing } from "@muse-code/sdk";
import { recordingChannel, recordingWebSocket, type TranscriptLine } from "@muse-code/sdk/testing";
import type { WebSocketConstructor } from "@muse-code/sdk/websocket";

/**
 * The hooks `runCheck` passes to `open()`, one set per scenario. An opener uses exactly one:
 * `wrapChannel` around a byte channel (give it to `spawnHost`'s `wrapChannel`), or `webSocket`
 * around a WebSocket class (give the result to `connectWebSocket`'s `WebSocket`). Without either,
 * the check cannot see the wire and every scenario fails saying so.
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

/** One recorded message: its 1-based line, who sent it, its text, and its JSON value when it parses as an object. */
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

function parseObject(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How much one scenario's wire may hold: past either bound the tap stops recording, and every
 * wait fails. A function of these limits, never of what a host sends.
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
 */
export class WireTap implements CheckWire {
  readonly lines: WireLine[] = [];
  /** itemId -> its kind, from the host's item notifications that name it (an `item/delta` does not). */
  readonly #kinds = new Map<string, string>();
  /** Set once the wire passed the tap's bounds: what was recorded stops there. */
  overflow: string | undefined;
  /** The lines `sendRaw` sent: the check's own text, which the schema check leaves out. */
  readonly sentRaw = new Set<number>();
  /** Why the tap stopped recording one direction early (a message the framing could not follow), one sentence each. */
  readonly stops: string[] = [];
  readonly #limits: WireLimits;
  #chars = 0;
  #waiters: Waiter[] = [];
  #closed: Error | undefined;
  #sendRaw: ((text: string) => void) | undefined;
  /** Texts `sendRaw` is sending, not yet recorded. */
  readonly #rawPending: string[] = [];

  constructor(limits: Partial<WireLimits> = {}) {
    this.#limits = { ...DEFAULT_WIRE_LIMITS, ...limits };
  }

  /** True once an opener used one of the hooks. */
  get attached(): boolean {
    return this.#sendRaw !== undefined;
  }

  wrapChannel(channel: ByteChannel, framing: Framing = "ndjson"): ByteChannel {
    const recorded = recordingChannel(channel, (entry) => this.record(entry.dir, entry.raw), {
      framing,
      onStop: (dir, reason) => this.#stopped(dir, reason),
    });
    // Through the recording channel, so a raw message is recorded like any other.
    this.#sendRaw =
      framing === "content-length"
        ? (text) => void recorded.write(encoder.encode(`Content-Length: ${encoder.encode(text).length}\r\n\r\n${text}`))
        : (text) => void recorded.write(encoder.encode(`${text}\n`));
    return recorded;
  }

  webSocket(base: WebSocketConstructor): WebSocketConstructor {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the subclass's constructor records into this tap
    const tap = this;
    const Recording = recordingWebSocket(base, (entry) => tap.record(entry.dir, entry.raw));
    return class TapWebSocket extends Recording {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
        // Through the recording socket's send(), so a raw frame is recorded like any other.
        tap.#sendRaw = (text) => this.send(text);
      }
    };
  }

  /** Send `text` as one message, unchecked: the malformed-input scenario's way past the SDK. */
  sendRaw(text: string): number {
    if (this.#sendRaw === undefined) throw new Error("open() did not attach the check's wire hooks (wire.wrapChannel or wire.webSocket)");
    const before = this.lines.length;
    this.#rawPending.push(text);
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
    const pending = dir === "client" ? this.#rawPending.indexOf(raw) : -1;
    if (pending >= 0) {
      this.#rawPending.splice(pending, 1);
      this.sentRaw.add(line.line);
    }
    if (dir !== "server") return;
    const params = line.message?.["params"];
    const item = typeof params === "object" && params !== null ? (params as { item?: unknown }).item : undefined;
    if (typeof item === "object" && item !== null) {
      const { itemId, kind } = item as { itemId?: unknown; kind?: unknown };
      if (typeof itemId === "string" && typeof kind === "string") this.#kinds.set(itemId, kind);
    }
    this.#waiters = this.#waiters.filter((waiter) => {
      if (line.line <= waiter.from || !waiter.test(line)) return true;
      waiter.resolve(line);
      return false;
    });
  }

  /** The kind of item `itemId`, as the host's item notifications recorded so far name it. */
  kindOf(itemId: unknown): string | undefined {
    return typeof itemId === "string" ? this.#kinds.get(itemId) : undefined;
  }

  /** One direction can no longer be followed: say so, and fail the waits (the host's messages stop being recorded). */
  #stopped(dir: "client" | "server", reason: string): void {
    const stop = `${dir === "server" ? "the host's" : "the client's"} messages after line ${this.lines.length} were not recorded: ${reason}`;
    this.stops.push(stop);
    if (dir === "server") this.close(new Error(stop));
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
