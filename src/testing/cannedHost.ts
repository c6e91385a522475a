/**
 * CannedHost: a conformance fixture that replays a committed wire transcript. It checks each
 * client message against the next client line and answers with the server lines that follow.
 * Server lines include the host's own requests (`tool/approve`): the client's answers are client
 * lines like any other, checked by id, result and error.
 */
import { connect, type ConnectOptions } from "../client/connect.js";
import type { MspClient } from "../client/mspClient.js";
import type { ByteChannel } from "../framing/byteChannel.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../framing/limits.js";
import { LineSplitter } from "@muse-code/protocol/lineSplitter.js";
import { createLinkedPair, type LinkedChannel } from "./linkedPair.js";
import { parseTranscript, readTranscript, type TranscriptLine } from "./transcript.js";

/**
 * JSON-RPC error code the canned host answers with when a client message does not match.
 *
 * @example
 * ```ts
 * if (MspError.is(e) && e.kind === "rpcError" && e.data["code"] === TRANSCRIPT_MISMATCH_CODE) console.log(e.data["data"]);
 * ```
 */
export const TRANSCRIPT_MISMATCH_CODE = -32099;

/**
 * Options of a {@link CannedHost}.
 *
 * @example
 * ```ts
 * const host = CannedHost.fromFile("transcripts/survive-host-crash.jsonl", { hangUpAtEnd: true });
 * ```
 */
export interface CannedHostOptions {
  /**
   * Drop the connection abruptly once the last line has played, as a host that crashed
   * would (the client sees end-of-stream and settles everything as `connectionClosed`).
   * @defaultValue false
   */
  hangUpAtEnd?: boolean;
}

/**
 * Options of {@link CannedHost.done}.
 *
 * @example
 * ```ts
 * const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
 * await host.done({ timeoutMs: 2_000 });
 * ```
 */
export interface DoneOptions {
  /** How long to wait for the rest of the transcript to play. @unit milliseconds @defaultValue 5 000 */
  timeoutMs?: number;
}

type Json = unknown;

/**
 * Replays a transcript. Values the client generates (the JSON-RPC `id` and every
 * `commandId`) are bound on first sight and substituted wherever the transcript repeats them,
 * so `turnId` follows the client's own `turn/start` commandId. The host's own requests
 * (`tool/approve`) go out as written; the client's answer must carry the same id and the same
 * `result` (decision and reason) or `error` as the transcript's answer line, in the same place
 * among the client's messages (so "the answer before `turn/cancel`" is checked). A mismatch
 * fails {@link CannedHost.done} with a diff and hangs up; it never leaves the client waiting.
 *
 * @example
 * ```ts
 * const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
 * const msp = host.connect();
 * // … drive msp like a real host …
 * await msp.close();
 * await host.done(); // rejects with a diff if the client strayed from the transcript
 * ```
 */
export class CannedHost {
  readonly #lines: TranscriptLine[];
  readonly #source: string;
  /** transcript string value -> the client's actual value (commandIds). */
  readonly #values = new Map<string, string>();
  /** the client's actual commandId -> the transcript value it stands for. */
  readonly #actuals = new Map<string, string>();
  /** Request ids the client has used: JSON-RPC ids must be unique among its requests. */
  readonly #seenIds = new Set<string>();
  /** transcript JSON-RPC id -> the client's actual id. */
  readonly #ids = new Map<string, Json>();
  #next = 0;
  #channel: LinkedChannel | undefined;
  #failure: Error | undefined;
  #finished = false;
  readonly #settle: Array<() => void> = [];
  readonly #encoder = new TextEncoder();

  readonly #hangUpAtEnd: boolean;

  private constructor(lines: TranscriptLine[], source: string, options: CannedHostOptions) {
    this.#lines = lines;
    this.#source = source;
    this.#hangUpAtEnd = options.hangUpAtEnd ?? false;
    if (!lines.some((l) => l.dir === "client")) throw new SyntaxError(`${source}: a transcript needs at least one client line`);
  }

  /**
   * Build a canned host from a transcript file.
   *
   * @example
   * ```ts
   * const host = CannedHost.fromFile("transcripts/cancel-race.jsonl");
   * ```
   */
  static fromFile(path: string, options: CannedHostOptions = {}): CannedHost {
    return new CannedHost(readTranscript(path), path, options);
  }

  /**
   * Build a canned host from transcript lines (or the whole text).
   *
   * @example
   * ```ts
   * const host = CannedHost.fromLines([
   *   '{"dir":"client","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"host/info\\",\\"params\\":{\\"commandId\\":\\"c1\\"}}"}',
   *   '{"dir":"server","raw":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":{\\"commandId\\":\\"c1\\",\\"status\\":\\"accepted\\"}}"}',
   * ]);
   * ```
   */
  static fromLines(lines: string | readonly string[], options: CannedHostOptions = {}): CannedHost {
    return new CannedHost(parseTranscript(lines), "transcript", options);
  }

  /**
   * A client wired to this host in memory. One client per host.
   *
   * @example
   * ```ts
   * const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
   * const msp = host.connect({ defaultTimeoutMs: 2_000 });
   * ```
   */
  connect(options: ConnectOptions = {}): MspClient {
    const [clientSide, hostSide] = createLinkedPair();
    this.attach(hostSide);
    return connect(clientSide, options);
  }

  /**
   * Serve the transcript over a channel of your own (NDJSON framing). One channel per host.
   *
   * @example
   * ```ts
   * const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
   * const [client, hostSide] = createLinkedPair();
   * host.attach(hostSide);
   * ```
   */
  attach(channel: ByteChannel | LinkedChannel): void {
    if (this.#channel !== undefined) throw new Error("CannedHost: already attached; make one host per client");
    const linked: LinkedChannel =
      "destroy" in channel
        ? channel
        : {
            onData: (listener) => channel.onData(listener),
            onEnd: (listener) => channel.onEnd(listener),
            onError: (listener) => channel.onError(listener),
            write: (bytes) => channel.write(bytes),
            end: () => channel.end(),
            destroy: () => channel.end(),
          };
    this.#channel = linked;
    const lines = new LineSplitter((text) => this.#onClientMessage(text), {
      maxLineBytes: DEFAULT_MAX_MESSAGE_BYTES,
      onOverflow: () => this.#fail(new Error(`${this.#source}: the client sent a line over 16 MiB`)),
    });
    channel.onData((chunk) => lines.push(chunk));
    channel.onEnd(() => {
      if (!this.#finished && this.#failure === undefined) {
        const next = this.#lines[this.#next];
        this.#fail(
          new Error(
            `${this.#source}: the client closed with ${this.#lines.length - this.#next} transcript line(s) left; next is line ${next?.line} (${next?.dir})`,
          ),
        );
      }
    });
    queueMicrotask(() => this.#playServerLines());
  }

  /** True when every transcript line has been played. */
  get finished(): boolean {
    return this.#finished;
  }

  /**
   * Resolves when the whole transcript has played; rejects with a diff on the first mismatch,
   * or when it has not finished within `timeoutMs`.
   *
   * @example
   * ```ts
   * const host = CannedHost.fromFile("transcripts/cancel-mid-turn.jsonl");
   * await host.done({ timeoutMs: 1_000 });
   * ```
   */
  done(options: DoneOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise<void>((resolve, reject) => {
      const check = (): boolean => {
        if (this.#failure !== undefined) {
          reject(this.#failure);
          return true;
        }
        if (this.#finished) {
          resolve();
          return true;
        }
        return false;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        const at = this.#settle.indexOf(onSettle);
        if (at >= 0) this.#settle.splice(at, 1);
        const next = this.#lines[this.#next];
        reject(new Error(`${this.#source}: not finished after ${timeoutMs} ms; waiting at line ${next?.line} (${next?.dir}: ${next?.raw.slice(0, 120)})`));
      }, timeoutMs);
      const onSettle = () => {
        if (check()) clearTimeout(timer);
      };
      this.#settle.push(onSettle);
    });
  }

  #notify(): void {
    for (const settle of this.#settle.splice(0)) settle();
  }

  #fail(error: Error): void {
    if (this.#failure !== undefined) return;
    this.#failure = error;
    this.#notify();
  }

  #onClientMessage(text: string): void {
    if (this.#failure !== undefined) return;
    let actual: Record<string, unknown>;
    try {
      actual = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return this.#mismatch(undefined, `the client sent a line that is not JSON: ${text.slice(0, 200)}`);
    }
    const expected = this.#lines[this.#next];
    if (expected === undefined || expected.dir !== "client") {
      return this.#mismatch(actual, `${this.#source}: unexpected client message after the end of the transcript:\n  got ${text.slice(0, 500)}`);
    }
    const problems = this.#match(expected.message, actual);
    if (problems.length > 0) {
      return this.#mismatch(
        actual,
        `${this.#source}: client message does not match line ${expected.line}:\n${problems.map((p) => `  ${p}`).join("\n")}\n  expected ${expected.raw}\n  got      ${text}`,
      );
    }
    this.#next += 1;
    this.#playServerLines();
  }

  /** Compare method and params, binding client-generated values on first sight. */
  #match(expected: Record<string, unknown>, actual: Record<string, unknown>): string[] {
    const problems: string[] = [];
    if (actual["jsonrpc"] !== "2.0") problems.push(`jsonrpc: expected "2.0", got ${JSON.stringify(actual["jsonrpc"])}`);
    if ("method" in actual && "id" in actual && this.#seenIds.has(JSON.stringify(actual["id"])))
      problems.push(`id: ${JSON.stringify(actual["id"])} was already used by an earlier request`);
    if (expected["method"] !== actual["method"])
      problems.push(`method: expected ${JSON.stringify(expected["method"])}, got ${JSON.stringify(actual["method"])}`);
    if ("id" in expected !== "id" in actual) problems.push(`id: expected ${"id" in expected ? "a request" : "a notification"}`);
    if (!("method" in expected)) {
      // An answer to one of the host's own requests: the ids are the transcript's, as it sent them.
      diff("id", expected["id"], actual["id"], problems);
      for (const key of ["result", "error"]) diff(key, this.#substitute(expected[key]), actual[key], problems);
      return problems;
    }
    const expectedParams = (expected["params"] ?? {}) as Record<string, unknown>;
    const actualParams = (actual["params"] ?? {}) as Record<string, unknown>;
    // Bind the client-generated commandId first, so it substitutes inside these params too.
    const expectedCommandId = expectedParams["commandId"];
    const actualCommandId = actualParams["commandId"];
    if (typeof expectedCommandId === "string" && typeof actualCommandId === "string" && !this.#values.has(expectedCommandId)) {
      const boundTo = this.#actuals.get(actualCommandId);
      if (boundTo !== undefined && boundTo !== expectedCommandId) {
        // A real host de-duplicates by commandId: this second command would get the first's answer.
        problems.push(
          `params.commandId: ${JSON.stringify(actualCommandId)} was already used for the command the transcript calls ${JSON.stringify(boundTo)}; a host would de-duplicate it`,
        );
        return problems;
      }
      this.#values.set(expectedCommandId, actualCommandId);
      this.#actuals.set(actualCommandId, expectedCommandId);
    }
    diff("params", this.#substitute(expectedParams), actualParams, problems);
    if (problems.length === 0 && "id" in expected) this.#ids.set(JSON.stringify(expected["id"]), actual["id"]);
    if (problems.length === 0 && "id" in actual) this.#seenIds.add(JSON.stringify(actual["id"]));
    return problems;
  }

  #substitute(value: Json): Json {
    if (typeof value === "string") return this.#values.get(value) ?? value;
    if (Array.isArray(value)) return value.map((v) => this.#substitute(v));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.#substitute(v)]));
    }
    return value;
  }

  #playServerLines(): void {
    while (this.#failure === undefined) {
      const line = this.#lines[this.#next];
      if (line === undefined) {
        this.#finished = true;
        this.#notify();
        if (this.#hangUpAtEnd) this.#channel?.destroy({ reason: "the canned host hung up at the end of its transcript" });
        return;
      }
      if (line.dir !== "server") return;
      const message = this.#substitute(line.message) as Record<string, unknown>;
      if ("id" in message && !("method" in message)) {
        const bound = this.#ids.get(JSON.stringify(line.message["id"]));
        if (bound !== undefined) message["id"] = bound;
      }
      this.#send(message);
      this.#next += 1;
    }
  }

  #send(message: unknown): void {
    const wentAway = (error: unknown) => this.#fail(new Error(`${this.#source}: the client went away while the host was replying: ${String(error)}`));
    try {
      // A channel may write asynchronously: its rejection is the same failure, never unhandled.
      const written = this.#channel?.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
      if (written !== undefined) written.catch(wentAway);
    } catch (error) {
      wentAway(error);
    }
  }

  #mismatch(actual: Record<string, unknown> | undefined, explanation: string): void {
    this.#fail(new Error(explanation));
    // Answer the stray request so the client's pending command settles, then hang up.
    if (actual !== undefined && "id" in actual && "method" in actual) {
      this.#send({
        jsonrpc: "2.0",
        id: actual["id"],
        error: { code: TRANSCRIPT_MISMATCH_CODE, message: "canned host: transcript mismatch", data: { diff: explanation } },
      });
    }
    const channel = this.#channel;
    queueMicrotask(() => channel?.end());
  }
}

function diff(path: string, expected: Json, actual: Json, problems: string[]): void {
  if (Object.is(expected, actual)) return;
  if (typeof expected === "object" && expected !== null && typeof actual === "object" && actual !== null && Array.isArray(expected) === Array.isArray(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of keys) diff(`${path}.${key}`, (expected as Record<string, Json>)[key], (actual as Record<string, Json>)[key], problems);
    return;
  }
  problems.push(`${path}: expected ${JSON.stringify(expected) ?? "nothing"}, got ${JSON.stringify(actual) ?? "nothing"}`);
}
