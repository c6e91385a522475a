/**
 * What one streamed message costs (issue 19): the reference host (a real child process,
 * `serve --stdio --ws`) streams one message of L characters in 16-character chunks with no delay,
 * in one run, for each L:
 * - **stdio**: every byte the host sends on stdout from `turn/start` to its `turn/completed`
 *   (NDJSON lines, the answer and every notification among them), and the SDK's CPU time
 *   (`process.cpuUsage`, this process) over the same span, per character;
 * - **WebSocket**: the same on a fresh session over a real socket (`connectWebSocket` with the
 *   `ws` class): the payload bytes of every text frame received, and the CPU per character;
 * - **reload**: once the WebSocket turn has ended, a second client connects and sends
 *   `session/resume` without a cursor (the whole session replayed), then a third with `afterCursor`
 *   at the last cursor the first client saw: the text-frame bytes each receives (the answer and the
 *   replay), per streamed character. The second must fold the complete message from the replay.
 * The envelope of one `item/delta` is broken down field by field (a mid-stream frame, as received).
 *
 * Then, with `--readers=N` (N runs), the slow-reader check: on a fresh host per run, the stdio
 * connection creates a session, four WebSocket clients (in this process) `session/resume` it
 * before the turn starts, the stdio connection starts a turn streaming the largest L, and each
 * reader reads it to its `turn/completed`. A reader passes when its folded message equals the
 * scripted text and it was not closed (4008 or any other code).
 *
 * Usage: npx tsx bench/streamCost.ts [L …] [--readers=RUNS]
 *        (default: 2000 20000 200000, no reader runs; STREAM_COST_STDERR=1 shows the host's stderr)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket, type RawData } from "ws";
import type { ByteChannel, CommandParams, MspClient, MspNotification } from "../src/index.js";
import { spawnReferenceHost, type SpawnedReferenceHost } from "../src/node/index.js";
import { connectWebSocket, type WebSocketConstructor } from "../src/websocket/index.js";

/** Characters per streamed chunk. */
export const CHUNK = 16;
/** Bound on one turn, or one replay, of the largest L on a loaded machine. @unit milliseconds */
const TIMEOUT_MS = 600_000;

/** A message of `length` characters: words of varied length, so no chunk is like the next. */
export function messageOf(length: number): string {
  let text = "";
  for (let i = 0; text.length < length; i++) text += `word${i % 97} `;
  return text.slice(0, length);
}

/** `channel`, with every byte it receives counted into `counter.bytes`. */
function counted(channel: ByteChannel, counter: { bytes: number }): ByteChannel {
  return {
    ...channel,
    onData: (listener) =>
      channel.onData((chunk) => {
        counter.bytes += chunk.byteLength;
        listener(chunk);
      }),
  };
}

/** What a counting WebSocket received: text frames and their payload bytes (no frame headers). */
interface FrameCount {
  bytes: number;
  frames: number;
  /** The raw text of the `sampleAt`-th `item/delta` frame, once received. */
  sample?: string;
  sampleAt?: number;
  deltas?: number;
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, piece) => sum + piece.byteLength, 0);
  return data.byteLength;
}

/** The `ws` class, with each socket counting the text frames it receives into `counter`. */
function countingWebSocket(counter: FrameCount): WebSocketConstructor {
  return class CountingWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      this.on("message", (data: RawData, isBinary: boolean) => {
        if (isBinary) return;
        counter.bytes += rawLength(data);
        counter.frames += 1;
        if (counter.sampleAt !== undefined && counter.sample === undefined) {
          const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
          if (text.includes('"method":"item/delta"') && (counter.deltas = (counter.deltas ?? 0) + 1) === counter.sampleAt) counter.sample = text;
        }
      });
    }
  };
}

/** Rejects after `ms` with `what`, for bounding a wait. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms))),
  ]);
}

const cpuUs = (used: NodeJS.CpuUsage) => used.user + used.system;

/** The scripted model file of one message of `length` characters, in `dir`. */
function writeScript(dir: string, length: number): string {
  const script = join(dir, `message-${length}.json`);
  writeFileSync(
    script,
    JSON.stringify({
      description: `one message of ${length} characters`,
      turns: [{ steps: [{ text: messageOf(length), chunkSize: CHUNK }] }],
    }),
  );
  return script;
}

/** The reference host serving stdio (counted into `stdio`) and WebSocket, on `script`. */
function startHost(script: string, stdio: { bytes: number }): SpawnedReferenceHost {
  return spawnReferenceHost({
    script,
    stderr: process.env["STREAM_COST_STDERR"] === "1" ? "inherit" : "ignore",
    wrapChannel: (channel) => counted(channel, stdio),
    maxMessageBytes: 64 * 1024 * 1024,
    defaultTimeoutMs: TIMEOUT_MS,
    webSocket: {},
  });
}

/** The one message of `turnId` as `client` folded it, or why there is none. */
function messageText(client: MspClient, turnId: string): string | undefined {
  const [item] = client.items.itemsOf(turnId);
  return item?.kind === "message" ? item.text : undefined;
}

function checkMessage(where: string, client: MspClient, turnId: string, text: string): void {
  const got = messageText(client, turnId);
  if (got !== text)
    throw new Error(`${where}: the message folded to ${got === undefined ? "nothing" : `${got.length} characters`}, not the ${text.length} scripted`);
}

/** Sends `session/resume` and resolves once the answer and its `replayed` notifications are in. */
async function resume(client: MspClient, params: CommandParams<"session/resume">): Promise<{ replayed: number; items: number }> {
  const state = { seen: 0, expected: Infinity, done: () => {} };
  const finished = new Promise<void>((resolve) => (state.done = resolve));
  client.events.on("notification", () => {
    state.seen += 1;
    if (state.seen >= state.expected) state.done();
  });
  const answer = await client.command("session/resume", params, { timeoutMs: TIMEOUT_MS });
  state.expected = answer.replayed;
  if (state.seen >= state.expected) state.done();
  await within(finished, TIMEOUT_MS, "the replay");
  return { replayed: answer.replayed, items: answer.items?.length ?? 0 };
}

/** One L's figures. Bytes are counted from the turn's start (or the resume's) to its last message. */
export interface StreamCost {
  length: number;
  /** `ms`: wall time from `turn/start` sent to `turn/completed` received. */
  stdio: { bytes: number; deltas: number; cpuUs: number; ms: number };
  webSocket: { bytes: number; frames: number; deltas: number; cpuUs: number; ms: number };
  /** The whole session replayed to a second client: the answer and every notification. */
  replay: { bytes: number; frames: number; replayed: number; cpuUs: number; ms: number };
  /** A third client resuming at the last cursor the first one saw. */
  replayAtLastCursor: { bytes: number; frames: number; replayed: number; items: number };
  /** A mid-stream `item/delta` text frame, as received over WebSocket. */
  sampleDelta: string | undefined;
}

/** Streams one message of `length` characters over stdio, then over WebSocket, then replays it. */
export async function streamCost(length: number): Promise<StreamCost> {
  const dir = mkdtempSync(join(tmpdir(), "stream-cost-"));
  const clients: MspClient[] = [];
  try {
    const text = messageOf(length);
    const stdioCount = { bytes: 0 };
    await using host = startHost(writeScript(dir, length), stdioCount);
    const { url, token } = await host.webSocket;

    // stdio: the connection spawnReferenceHost returns.
    const { sessionId: stdioSession } = await host.command("session/create", {});
    let stdioDeltas = 0;
    host.events.on("item/delta", () => (stdioDeltas += 1));
    const before = stdioCount.bytes;
    let cpu = process.cpuUsage();
    let t0 = performance.now();
    const stdioTurn = host.startTurn({ sessionId: stdioSession, input: [{ type: "text", text: "write" }] }, { timeoutMs: TIMEOUT_MS });
    const stdioEnded = await stdioTurn.waitForTerminal({ timeoutMs: TIMEOUT_MS });
    const stdioCpu = cpuUs(process.cpuUsage(cpu));
    const stdioMs = performance.now() - t0;
    const stdioBytes = stdioCount.bytes - before;
    checkMessage("stdio", host, stdioEnded.turnId, text);

    // WebSocket: a fresh session on a client of its own.
    const live: FrameCount = { bytes: 0, frames: 0, sampleAt: Math.min(10, Math.floor(length / CHUNK / 2)) };
    const first = await connectWebSocket(url, { token, WebSocket: countingWebSocket(live), defaultTimeoutMs: TIMEOUT_MS });
    clients.push(first);
    const { sessionId } = await first.command("session/create", {});
    let wsDeltas = 0;
    let lastCursor: string | undefined;
    first.events.on("item/delta", () => (wsDeltas += 1));
    first.events.on("notification", ({ params }: MspNotification) => {
      if (params?.["sessionId"] === sessionId && typeof params["viewCursor"] === "string") lastCursor = params["viewCursor"];
    });
    const liveBefore = { ...live };
    cpu = process.cpuUsage();
    t0 = performance.now();
    const wsTurn = first.startTurn({ sessionId, input: [{ type: "text", text: "write" }] }, { timeoutMs: TIMEOUT_MS });
    const wsEnded = await wsTurn.waitForTerminal({ timeoutMs: TIMEOUT_MS });
    const wsCpu = cpuUs(process.cpuUsage(cpu));
    const wsMs = performance.now() - t0;
    const wsBytes = live.bytes - liveBefore.bytes;
    const wsFrames = live.frames - liveBefore.frames;
    checkMessage("WebSocket", first, wsEnded.turnId, text);
    if (lastCursor === undefined) throw new Error("the WebSocket client saw no cursor");

    // A reload at the end of the stream: the whole session, then nothing after the last cursor.
    const whole: FrameCount = { bytes: 0, frames: 0 };
    const second = await connectWebSocket(url, { token, WebSocket: countingWebSocket(whole), defaultTimeoutMs: TIMEOUT_MS });
    clients.push(second);
    cpu = process.cpuUsage();
    t0 = performance.now();
    const replay = await resume(second, { sessionId });
    const replayCpu = cpuUs(process.cpuUsage(cpu));
    const replayMs = performance.now() - t0;
    checkMessage("the replay", second, wsEnded.turnId, text);
    const tail: FrameCount = { bytes: 0, frames: 0 };
    const third = await connectWebSocket(url, { token, WebSocket: countingWebSocket(tail), defaultTimeoutMs: TIMEOUT_MS });
    clients.push(third);
    const atLast = await resume(third, { sessionId, afterCursor: lastCursor });

    return {
      length,
      stdio: { bytes: stdioBytes, deltas: stdioDeltas, cpuUs: stdioCpu, ms: stdioMs },
      webSocket: { bytes: wsBytes, frames: wsFrames, deltas: wsDeltas, cpuUs: wsCpu, ms: wsMs },
      replay: { bytes: whole.bytes, frames: whole.frames, replayed: replay.replayed, cpuUs: replayCpu, ms: replayMs },
      replayAtLastCursor: { bytes: tail.bytes, frames: tail.frames, replayed: atLast.replayed, items: atLast.items },
      sampleDelta: live.sample,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One reader of {@link fourReaders}: its folded message complete, and how it was closed, if it was. */
export interface ReaderOutcome {
  complete: boolean;
  characters: number;
  closeCode: number | undefined;
  bytes: number;
  /** The most a notification of the turn arrived after the host emitted it (`emittedAtMs`). @unit milliseconds */
  maxLagMs: number;
}

/**
 * One run of the slow-reader check: a fresh host, a session the stdio connection creates and four
 * WebSocket readers resume before the turn; the stdio connection starts one turn streaming
 * `length` characters, and each reader reads to its `turn/completed` (or its close).
 * `hostLines` are the host's stderr lines that mention a connection closed for not reading.
 */
export async function fourReaders(length: number, readers = 4): Promise<{ outcomes: ReaderOutcome[]; hostLines: string[]; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), "stream-readers-"));
  const clients: MspClient[] = [];
  try {
    const text = messageOf(length);
    await using host = startHost(writeScript(dir, length), { bytes: 0 });
    const hostLines: string[] = [];
    host.process.stderr?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) if (/not reading|4008|send queue/i.test(line)) hostLines.push(line.trim());
    });
    const { url, token } = await host.webSocket;
    const { sessionId } = await host.command("session/create", {});
    const counts = Array.from({ length: readers }, (): FrameCount => ({ bytes: 0, frames: 0 }));
    for (const count of counts) clients.push(await connectWebSocket(url, { token, WebSocket: countingWebSocket(count), defaultTimeoutMs: TIMEOUT_MS }));
    for (const client of clients) await client.command("session/resume", { sessionId });
    const lags = clients.map(() => 0);
    clients.forEach((client, i) =>
      client.events.on("notification", ({ emittedAtMs }: MspNotification) => {
        if (emittedAtMs !== undefined) lags[i] = Math.max(lags[i] ?? 0, Date.now() - emittedAtMs);
      }),
    );
    const ends = clients.map(
      (client) =>
        new Promise<{ turnId: string | undefined; closeCode: number | undefined }>((resolve) => {
          client.events.on("turn/completed", (params) => {
            if (params.sessionId === sessionId) resolve({ turnId: params.turnId, closeCode: undefined });
          });
          void client.closed.then((info) => resolve({ turnId: undefined, closeCode: info.closeCode ?? -1 }));
        }),
    );
    const t0 = performance.now();
    const turn = host.startTurn({ sessionId, input: [{ type: "text", text: "write" }] }, { timeoutMs: TIMEOUT_MS });
    const ended = await turn.waitForTerminal({ timeoutMs: TIMEOUT_MS });
    const results = await within(Promise.all(ends), TIMEOUT_MS, "the readers");
    const ms = performance.now() - t0;
    const outcomes = results.map(({ turnId, closeCode }, i): ReaderOutcome => {
      const client = clients[i] as MspClient;
      const got = messageText(client, turnId ?? ended.turnId) ?? "";
      return { complete: got === text, characters: got.length, closeCode, bytes: (counts[i] as FrameCount).bytes, maxLagMs: lags[i] ?? 0 };
    });
    return { outcomes, hostLines, ms };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The fields of one `item/delta` message, as the host wrote it: each `"key":value` with its
 * separator, in bytes (UTF-8), top level and `params`. Their sum is the message's length when the
 * host writes plain `JSON.stringify` output (checked: `total` against `measured`).
 */
export function envelopeOf(raw: string): { fields: Array<[string, number]>; total: number; measured: number } {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  const message = JSON.parse(raw) as Record<string, unknown>;
  const fields: Array<[string, number]> = [];
  let total = 2; // the outer braces
  for (const [key, value] of Object.entries(message)) {
    if (key === "params" && typeof value === "object" && value !== null) {
      fields.push(["params: key and braces", bytes(`"params":{}`)]);
      total += bytes(`"params":{}`);
      for (const [inner, v] of Object.entries(value)) {
        const size = bytes(`${JSON.stringify(inner)}:${JSON.stringify(v)}`);
        fields.push([`params.${inner}`, size]);
        total += size;
      }
      total += Object.keys(value).length - 1; // commas inside params
      continue;
    }
    const size = bytes(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
    fields.push([key, size]);
    total += size;
  }
  total += Object.keys(message).length - 1; // commas at the top level
  return { fields, total, measured: bytes(raw) };
}

const n = (x: number) => x.toLocaleString("en");
const perChar = (x: number, length: number) => (x / length).toFixed(1);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const readerRuns = Number(args.find((arg) => arg.startsWith("--readers="))?.slice("--readers=".length) ?? 0);
  const given = args.filter((arg) => !arg.startsWith("--")).map(Number);
  const lengths = given.length > 0 ? given : [2_000, 20_000, 200_000];
  console.log(
    `one message streamed in ${CHUNK}-character chunks by the reference host (serve --stdio --ws), node ${process.version}, ${new Date().toISOString()}`,
  );
  let sample: string | undefined;
  const costs: StreamCost[] = [];
  const failures: string[] = [];
  for (const length of lengths) {
    // A run the host cannot finish is reported too: it says what ended it.
    await streamCost(length).then(
      (c) => costs.push(c),
      (error: unknown) => failures.push(`L = ${n(length)} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
  console.log(
    "| L (characters) | item/delta | stdio bytes per character | WebSocket bytes per character | whole-session replay, bytes per character | replay after the last cursor |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const c of costs) {
    sample ??= c.sampleDelta;
    const { length } = c;
    console.log(
      `| ${n(length)} | ${n(c.stdio.deltas)} / ${n(c.webSocket.deltas)} | ${perChar(c.stdio.bytes, length)} (${(c.stdio.bytes / 1e6).toFixed(2)} MB) | ${perChar(c.webSocket.bytes, length)} (${(c.webSocket.bytes / 1e6).toFixed(2)} MB, ${n(c.webSocket.frames)} frames) | ${perChar(c.replay.bytes, length)} (${n(c.replay.replayed)} notifications) | ${n(c.replayAtLastCursor.bytes)} bytes = ${(c.replayAtLastCursor.bytes / length).toFixed(3)} per character (${c.replayAtLastCursor.replayed} replayed, ${c.replayAtLastCursor.items} items) |`,
    );
  }
  console.log(
    "\n| L (characters) | SDK CPU per character, stdio | WebSocket | whole-session replay | turn/start → turn/completed, stdio | WebSocket | replay, resume → last notification |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const c of costs) {
    const us = (x: number) => `${(x / c.length).toFixed(2)} µs`;
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `| ${n(c.length)} | ${us(c.stdio.cpuUs)} | ${us(c.webSocket.cpuUs)} | ${us(c.replay.cpuUs)} | ${s(c.stdio.ms)} | ${s(c.webSocket.ms)} | ${s(c.replay.ms)} |`,
    );
  }
  for (const failure of failures) console.log(failure);
  if (costs.length > 1) {
    const flat = (pick: (c: StreamCost) => number) => {
      const values = costs.map((c) => pick(c) / c.length);
      return { min: Math.min(...values), max: Math.max(...values), spread: Math.max(...values) / Math.min(...values) - 1 };
    };
    for (const [name, pick] of [
      ["stdio", (c: StreamCost) => c.stdio.bytes],
      ["WebSocket", (c: StreamCost) => c.webSocket.bytes],
    ] as const) {
      const { min, max, spread } = flat(pick);
      console.log(
        `${name}: ${min.toFixed(1)}–${max.toFixed(1)} bytes per character over L = ${costs.map((c) => n(c.length)).join(", ")}: spread ${(spread * 100).toFixed(1)}% (target ≤ 10%: ${spread <= 0.1 ? "met" : "MISSED"}), max ${max.toFixed(1)} (target ≤ 40: ${max <= 40 ? "met" : "MISSED"})`,
      );
    }
  }
  if (sample !== undefined) {
    const { fields, total, measured } = envelopeOf(sample);
    console.log(`\none item/delta text frame, mid-stream (${measured} bytes; the fields below sum to ${total}):`);
    console.log("| field | bytes |");
    console.log("|---|---|");
    for (const [field, size] of fields) console.log(`| ${field} | ${size} |`);
    console.log(`| commas, outer braces | ${measured - fields.reduce((sum, [, size]) => sum + size, 0)} |`);
  }
  if (readerRuns > 0) {
    const length = Math.max(...lengths);
    console.log(`\nfour WebSocket readers of one session, ${n(length)} characters, ${readerRuns} runs (a fresh host each):`);
    console.log(
      "| run | complete | closed (code) | characters folded | bytes received | most a notification lagged its emittedAtMs | turn start to the last reader's turn/completed | host log |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    for (let run = 1; run <= readerRuns; run++) {
      try {
        const { outcomes, hostLines, ms } = await fourReaders(length);
        const list = (f: (o: ReaderOutcome) => string) => outcomes.map(f).join(" / ");
        console.log(
          `| ${run} | ${outcomes.filter((o) => o.complete).length} of ${outcomes.length} | ${outcomes.filter((o) => o.closeCode !== undefined).length} (${list((o) => (o.closeCode === undefined ? "–" : String(o.closeCode)))}) | ${list((o) => n(o.characters))} | ${list((o) => `${(o.bytes / 1e6).toFixed(2)} MB`)} | ${list((o) => `${Math.round(o.maxLagMs)} ms`)} | ${(ms / 1000).toFixed(1)} s | ${hostLines.length === 0 ? "–" : hostLines.join("; ")} |`,
        );
      } catch (error) {
        console.log(`| ${run} | – | – | – | – | – | – | failed: ${error instanceof Error ? error.message : String(error)} |`);
      }
    }
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
